// The path of a target channel's record (target_channel.hpp): what
// travels, the core it goes to next under a routing, its staging (folded
// into a staged record for the same target when the channel reduces), and
// the receive side, which runs the handler on the owner or forwards the
// record at an intermediate hop. Private to target_channel.
#pragma once

#include "shoal/channel.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/reduction_cache.hpp"
#include "shoal/reduction.hpp"
#include "shoal/routing.hpp"
#include "shoal/runtime.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>

namespace shoal {

/// What travels: where the value goes (its owner core in the high 24 bits,
/// its local index there in the low 40, so that routing hops need not ask
/// the distribution), and the value.
template <class T>
struct target_record {
  std::uint64_t where;
  T value;
};
inline constexpr int target_local_bits = 40;
inline constexpr std::uint64_t max_target_local = (std::uint64_t{1} << target_local_bits) - 1;

namespace detail {

[[noreturn, gnu::cold, gnu::noinline]] inline void fatal_route(const char* routing, int me,
                                                               int dest, int next) {
  fatal_user(
      fmt::format("shoal::target_channel: {} routing sends a value from process {} "
                  "for process {} to process {}, which is not a process of the job "
                  "of {} (or is the sender)",
                  routing, me, dest, next, g_info.ranks));
}

/// Where this process sits in the job, as next_core reads it: read once
/// per batch at a forwarding hop (target_receiver::deliver_run).
struct route_origin {
  int rank = g_info.rank;
  int ranks = g_info.ranks;
  int per = g_info.local_cores;
};

/// The core a value for core `owner` goes to next from process `at.rank`;
/// `OneCore`: the caller knows at.per == 1 (no division).
template <bool OneCore = false, class Route>
[[gnu::always_inline]] inline int next_core(const Route& route, int owner, const route_origin& at) {
  if constexpr (std::same_as<Route, direct_routing>) {
    return owner;  // straight to the owner, whichever process it is on
  }
  const int per = OneCore ? 1 : at.per;
  const int dest = owner / per;
  if (dest == at.rank) return owner;
  const int next = route.next_rank(at.rank, dest, at.ranks);
  if (next == dest) return owner;
  if (next < 0 || next >= at.ranks || next == at.rank) [[unlikely]] {
    if constexpr (requires { Route::name(); }) {
      fatal_route(Route::name(), at.rank, dest, next);
    } else {
      fatal_route("a user-defined", at.rank, dest, next);
    }
  }
  return next * per + owner % per;  // the core of the owner's local index there
}
/// The core a value for core `owner` goes to next from this process.
template <class Route>
int next_core(const Route& route, int owner) {
  return next_core(route, owner, route_origin{});
}

/// Stages record `r` (a target_record, or a keyed channel's bare value)
/// for core `dest` on channel `id` as it is (no reduction): one
/// flow-control reservation when bounded, one copy.
template <class Rec>
[[gnu::always_inline]] inline void stage_plain(std::uint32_t id, std::uint32_t bound, int dest,
                                               const Rec& r) {
  aggregator& agg = *tls_aggregator;
  if (bound != 0) agg.flow_reserve(id, dest, bound);
  std::memcpy(agg.reserve(id, dest, static_cast<std::uint32_t>(sizeof r)), &r, sizeof r);
}

/// Calls f(cache) on the cache of each of this process's cores of channel
/// `id` (none for channel 0, a closed channel or one without caches).
template <class F>
void for_each_core_cache(std::uint32_t id, F f) {
  if (id == 0) return;
  const channel_entry& e = channel_table()[id];
  if (e.caches == nullptr) return;
  for (int c = 0; c < local_cores(); ++c) f(e.caches[c]);
}

/// Values this process's cores forwarded on channel `id` at intermediate
/// routing hops (local_route_stats of target and keyed target channels).
inline route_stats forwarded_on(std::uint32_t id) {
  route_stats s;
  for_each_core_cache(id, [&s](const reduction_cache& c) {
    s.forwarded += c.forwarded.load(std::memory_order_relaxed);  // relaxed: statistics
  });
  return s;
}

/// The forwarding side of a routed channel's receive loop, from
/// records[0], which core `owner` (not this one) owns, on: each record for
/// another core goes on to its next core under rx.route on the same
/// channel (rx.stage_forward(id, bound, next, record)), counted in this
/// core's forwarded values; each other one is handled here.
/// rx.owner_unless_handled(r, me) runs the handler on a record this core
/// (`me`) owns and returns -1, or returns the record's owner core. `OneCore`: one core
/// per process. What a forward needs of the channel and the job is read
/// once, before anything is staged (staging may suspend, and other batches
/// may be delivered meanwhile).
template <bool OneCore, class Rec, class Receiver>
[[gnu::noinline]] void forward_records(const Rec* records, std::uint32_t n, int owner,
                                       const Receiver& rx) {
  const std::uint32_t id = tls_delivering_stream;
  const channel_entry& e = channel_table()[id];
  const std::uint32_t bound = e.max_in_flight;
  reduction_cache* cache = e.caches != nullptr ? &e.caches[tls_core - g_info.rank_base] : nullptr;
  const route_origin from;
  const int me = tls_core;
  std::uint32_t i = 0;
  while (true) {
    // Counted as it goes: once a batch's last value is handled the
    // channel may close, and its counters with it.
    if (cache != nullptr) cache->count_forwards(1);
    rx.stage_forward(id, bound, next_core<OneCore>(rx.route, owner, from), records[i]);
    for (++i; i < n; ++i) {
      owner = rx.owner_unless_handled(records[i], me);
      if (owner >= 0) break;
    }
    if (i == n) return;
  }
}

/// Stages record {where, value} for core `dest` on channel `id`, folding it
/// into a staged value for the same `where` when R reduces (reduction.hpp).
template <class T, class R>
void stage_record(std::uint32_t id, std::uint32_t bound, int dest, std::uint64_t where,
                  const T& value, const R& op) {
  using record = target_record<T>;
  if constexpr (std::same_as<R, reduction::none>) {
    stage_plain(id, bound, dest, record{where, value});
  } else {
    aggregator& agg = *tls_aggregator;
    reduction_cache* caches = channel_table()[id].caches;
    // A stale copy of a closed channel's handle (its caches went with it).
    if (caches == nullptr) [[unlikely]]
      fatal_channel_send(id, "shoal::target_channel::send");
    reduction_cache& cache = caches[tls_core - g_info.rank_base];
    reduction_cache::slot& s = cache.at(where);
    if (s.key == where + 1 && s.dest == dest) {
      if (char* p = agg.staged(id, dest, s.offset, sizeof(record))) {
        record staged;
        std::memcpy(&staged, p, sizeof staged);
        if (staged.where == where) {
          op(staged.value, value);
          std::memcpy(p, &staged, sizeof staged);
          cache.count(true);
          return;
        }
      }
    }
    cache.count(false);
    if (bound != 0) agg.flow_reserve(id, dest, bound);
    char* p = agg.reserve(id, dest, static_cast<std::uint32_t>(sizeof(record)));
    const record r{where, value};
    std::memcpy(p, &r, sizeof r);
    s = {where + 1, dest, agg.staged_offset(id, dest, p)};
  }
}

/// A flush's request to hand this core's own region of a combiner without
/// marks to the handler (target_channel::drain_region): the flush sets it
/// and runs one record addressed to region_owner through the channel's
/// deliver loop; the receive side then scans values[0, count) and calls
/// the handler, inlined, for each value that differs from `identity`
/// (reset first), with its index as the local index: no record per value.
struct own_region_request {
  void* values;
  std::uint64_t count;
  const void* identity;
  std::uint64_t handed = 0;  ///< values handed to the handler
};
inline thread_local own_region_request* tls_own_region = nullptr;
/// The owner field of that record: no core (make_target_channel keeps
/// cores() below it).
inline constexpr int region_owner = (1 << (64 - target_local_bits)) - 1;

/// The receive side of a target channel: the handler and the routing.
/// The channel's deliver loop hands it each batch whole (deliver_run).
template <class T, class H, class R, class Route>
struct target_receiver {
  H handler;
  [[no_unique_address]] R op;
  [[no_unique_address]] Route route;
  void operator()(const target_record<T>& r) const { deliver_run(&r, 1); }
  /// Handles the `n` records of one batch of channel tls_delivering_stream:
  /// each one owned by this core runs the handler; each other one is at an
  /// intermediate hop and goes on to its next core on the same channel,
  /// folded into a staged value there when R reduces, under the channel's
  /// flow-control bound. What a forward needs of the channel and the job is
  /// read once per batch, on its first forward.
  void deliver_run(const target_record<T>* records, std::uint32_t n) const {
    std::uint32_t i = 0;
    while (i < n && handle_here(records[i])) ++i;
    if (i < n) {
      if (g_info.local_cores == 1) {
        forward_rest<true>(records + i, n - i);
      } else {
        forward_rest<false>(records + i, n - i);
      }
    }
  }
  /// deliver_run from records[0], which is to be forwarded, on
  /// (forward_records); `OneCore`: one core per process.
  template <bool OneCore>
  [[gnu::noinline]] void forward_rest(const target_record<T>* records, std::uint32_t n) const {
    forward_records<OneCore>(records, n, owner_of(records[0]), *this);
  }
  /// forward_records' steps: the owner of a record not handled here, and
  /// a forward (folded into a staged value for its target when R reduces).
  [[gnu::always_inline]] int owner_unless_handled(const target_record<T>& r,
                                                  int /*me: handle_here reads it*/) const {
    return handle_here(r) ? -1 : owner_of(r);
  }
  [[gnu::always_inline]] void stage_forward(std::uint32_t id, std::uint32_t bound, int next,
                                            const target_record<T>& r) const {
    if constexpr (std::same_as<R, reduction::none>) {
      stage_plain(id, bound, next, r);  // nothing to fold into: no cache test
    } else {
      stage_record(id, bound, next, r.where, r.value, op);
    }
  }
  static int owner_of(const target_record<T>& r) {
    return static_cast<int>(r.where >> target_local_bits);
  }
  /// Runs the handler on a record this core owns (or a flush's request for
  /// its own region) and says so; false: the record is to be forwarded.
  [[gnu::always_inline]] bool handle_here(const target_record<T>& r) const {
    const int owner = owner_of(r);
    if (owner == tls_core) [[likely]] {
      handler(r.where & max_target_local, r.value);
      return true;
    }
    if constexpr (std::equality_comparable<T>) {
      if (owner == region_owner && tls_own_region != nullptr) {
        hand_on_region(*tls_own_region);
        return true;
      }
    }
    return false;
  }
  void hand_on_region(own_region_request& q) const {
    T* values = static_cast<T*>(q.values);
    const T identity = *static_cast<const T*>(q.identity);
    std::uint64_t n = 0;
    for (std::uint64_t l = 0; l < q.count; ++l) {
      if (values[l] == identity) continue;
      const T v = values[l];
      values[l] = identity;
      ++n;
      handler(l, v);
    }
    q.handed += n;
  }
};

/// The receive side of a keyed target channel (keyed_target_channel.hpp):
/// a record is the value alone, and its target is key(value), located in
/// the distribution here as at the sender. A value this core owns runs the
/// handler; any other is at an intermediate hop and goes on, as it came,
/// to its next core on the same channel (target_receiver's forwarding,
/// without a header to read or reductions to fold).
template <class T, class D, class K, class H, class Route>
struct keyed_receiver {
  D dist;
  K key;
  H handler;
  [[no_unique_address]] Route route;
  void operator()(const T& v) const { deliver_run(&v, 1); }
  /// Handles the `n` values of one batch of channel tls_delivering_stream.
  void deliver_run(const T* values, std::uint32_t n) const {
    const int me = tls_core;
    for (std::uint32_t i = 0; i < n; ++i) {
      const target_location at = locate(values[i]);
      if (at.core == me) [[likely]] {
        handler(at.local, values[i]);
        continue;
      }
      if (g_info.local_cores == 1) {
        forward_rest<true>(values + i, n - i, at.core);
      } else {
        forward_rest<false>(values + i, n - i, at.core);
      }
      return;
    }
  }
  [[gnu::always_inline]] target_location locate(const T& v) const {
    return dist.locate(static_cast<std::uint64_t>(key(v)));
  }
  /// deliver_run from values[0], owned by core `owner` (not this one), on
  /// (forward_records); `OneCore`: one core per process.
  template <bool OneCore>
  [[gnu::noinline]] void forward_rest(const T* values, std::uint32_t n, int owner) const {
    forward_records<OneCore>(values, n, owner, *this);
  }
  /// forward_records' steps: the owner of a value not handled here, and a
  /// forward (the value as it came).
  [[gnu::always_inline]] int owner_unless_handled(const T& v, int me) const {
    const target_location at = locate(v);
    if (at.core != me) return at.core;
    handler(at.local, v);
    return -1;
  }
  [[gnu::always_inline]] static void stage_forward(std::uint32_t id, std::uint32_t bound, int next,
                                                   const T& v) {
    stage_plain(id, bound, next, v);
  }
};
}  // namespace detail

}  // namespace shoal
