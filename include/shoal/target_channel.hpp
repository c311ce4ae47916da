// Target-addressed channels (Active Pebbles 3.2): values are sent to target
// ids, and a distribution (distribution.hpp) says which core owns a target
// and at which local index; the handler runs on the owner with
// (local index, value).
//
//   shoal::block_distribution d(n, shoal::cores());
//   auto ch = shoal::make_target_channel<double>(
//       d, [](std::uint64_t local, const double& v) { sums[local] += v; });
//   ch.send(target, 1.5);   // handler(d.locate(target).local, 1.5) on its owner
//
// A target_channel is a typed channel (channel.hpp) of (local index, value)
// records: batching, end_phase / drain (cascades on the same channel),
// flush(), flow control and coalescing size are the channel's.
//
// Local targets short-circuit. A value whose target the sending core owns
// is not staged: send() calls the handler directly and returns after it.
// What that means:
// - Ordering: values to this core's own targets are handled in program
//   order, before send() returns; nothing orders them against values other
//   cores sent to the same targets (as for any two sources).
// - Context: the handler runs on the sender's stack, in the sender's
//   context. From a task, sends the handler makes may suspend under
//   back-pressure (a handler run from a batch takes an overflow buffer
//   instead); handlers must not suspend or wait in either case.
// - Depth: a handler sending to its own core's targets nests; past
//   max_short_circuit_depth (16) nested calls the value goes through the
//   channel to this core instead, so a cascade cannot overflow the stack.
// - Phases: a short-circuited value is handled when send() returns, so
//   end_phase and drain need not count it; the values its handler sends are
//   counted as usual.
// - Reductions (reduction.hpp) apply to values that travel, not to these.
// options.short_circuit = false stages local values like the others.
//
// Misuse: a target the distribution maps outside the job (or outside its
// targets(), when it declares them) ends the job with a message naming the
// target and the distribution; send on a closed or default handle as
// channel::send.
#pragma once

#include "shoal/channel.hpp"
#include "shoal/distribution.hpp"
#include "shoal/reduction.hpp"
#include "shoal/detail/reduction_cache.hpp"
#include "shoal/runtime.hpp"

#include <cstdint>
#include <cstring>

namespace shoal {

/// What travels: the target's local index at its owner, and the value.
template <class T>
struct target_record {
  std::uint64_t local;
  T value;
};

/// A target handler: callable as h(std::uint64_t local_index, const T&),
/// trivially copyable as bytes, at most max_channel_handler_bytes.
template <class H, class T>
concept target_handler_like = std::invocable<const H&, std::uint64_t, const T&> &&
                              copyable_as_bytes<H> && sizeof(H) <= max_channel_handler_bytes;

/// Options of make_target_channel.
struct target_channel_options {
  /// As channel_options::max_in_flight.
  std::uint32_t max_in_flight = 0;
  /// As channel_options::coalesce_values (records per batch).
  std::uint32_t coalesce_values = 0;
  /// Slots of each core's reduction cache (rounded up to a power of two);
  /// 0 with a reduction: 1024. Must be 0 without one.
  std::uint32_t cache_slots = 0;
  /// Whether values to the sending core's own targets run the handler
  /// directly (see the header comment).
  bool short_circuit = true;
};
inline constexpr std::uint32_t default_cache_slots = 1024;
inline constexpr std::uint32_t max_cache_slots = 1U << 24;
inline constexpr int max_short_circuit_depth = 16;

namespace detail {
inline thread_local int tls_short_circuit_depth = 0;
/// Only make_target_channel builds an open target_channel.
struct target_channel_key {
  explicit target_channel_key() = default;
};
}  // namespace detail

template <channel_value_like T, distribution_like D, class R = reduction::none>
class target_channel {
 public:
  using record = target_record<T>;
  static constexpr bool reduces = !std::same_as<R, reduction::none>;

  target_channel() = default;
  /// Use make_target_channel.
  target_channel(detail::target_channel_key, channel<record> ch, const D& dist, const R& op,
                 bool short_circuit)
      : ch_(ch), short_circuit_(short_circuit), dist_(dist), op_(op) {}

  /// Sends `value` to target `target`: its handler runs on the owner core
  /// with the target's local index. Returns at once (may suspend a task under
  /// back-pressure, like channel::send); a local target's handler has run when
  /// it returns. Any core, inside run().
  void send(std::uint64_t target, const T& value) const {
    const target_location at = check_target(dist_, target, cores(), "shoal::target_channel::send");
    if (short_circuit_ && at.core == detail::tls_core &&
        detail::tls_short_circuit_depth < max_short_circuit_depth) {
      run_here(at.local, value);
      return;
    }
    if constexpr (reduces) {
      send_reduced(target, at, value);
    } else {
      ch_.send(at.core, record{at.local, value});
    }
  }

  /// As channel::flush, end_phase, drain and close.
  void flush() const { ch_.flush(); }
  void end_phase() const { ch_.end_phase(); }
  void drain() const { ch_.drain(); }
  void close() { ch_.close(); }

  const D& distribution() const noexcept { return dist_; }
  const channel<record>& underlying() const noexcept { return ch_; }
  std::uint32_t id() const noexcept { return ch_.id(); }
  explicit operator bool() const noexcept { return static_cast<bool>(ch_); }

  /// Reduction counts summed over this process's cores (zeros without a
  /// reduction). Any thread; exact once the phase has ended.
  reduction_stats local_reduction_stats() const {
    reduction_stats s;
    const detail::channel_entry& e = detail::channel_table()[ch_.id()];
    if (ch_.id() == 0 || e.caches == nullptr) return s;
    for (int c = 0; c < local_cores(); ++c) {
      // Relaxed: statistics.
      s.lookups += e.caches[c].lookups.load(std::memory_order_relaxed);
      s.hits += e.caches[c].hits.load(std::memory_order_relaxed);
    }
    return s;
  }

 private:
  void run_here(std::uint64_t local, const T& value) const {
    const detail::channel_entry& e = detail::channel_table()[ch_.id()];
    if (e.deliver == nullptr) [[unlikely]]
      detail::fatal_channel_send(ch_.id(), "shoal::target_channel::send");
    const record r{local, value};
    ++detail::tls_short_circuit_depth;
    e.deliver(e.state, reinterpret_cast<const char*>(&r), 1);
    --detail::tls_short_circuit_depth;
  }

  void send_reduced(std::uint64_t target, const target_location& at, const T& value) const {
    const std::uint32_t id = ch_.id();
    if (__builtin_expect((id == 0) | (detail::tls_core < 0), 0))
      detail::fatal_channel_send(id, "shoal::target_channel::send");
    detail::reduction_cache* caches = detail::channel_table()[id].caches;
    // A stale copy of a closed channel's handle (its caches went with it).
    if (caches == nullptr) [[unlikely]]
      detail::fatal_channel_send(id, "shoal::target_channel::send");
    detail::aggregator& agg = *detail::tls_aggregator;
    detail::reduction_cache& cache = caches[detail::tls_core - detail::g_info.rank_base];
    detail::reduction_cache::slot& s = cache.at(target);
    if (s.key == target + 1 && s.dest == at.core) {
      if (char* p = agg.staged(id, at.core, s.offset, sizeof(record))) {
        record staged;
        std::memcpy(&staged, p, sizeof staged);
        if (staged.local == at.local) {
          op_(staged.value, value);
          std::memcpy(p, &staged, sizeof staged);
          cache.count(true);
          return;
        }
      }
    }
    cache.count(false);
    if (ch_.max_in_flight() != 0) agg.flow_reserve(id, at.core, ch_.max_in_flight());
    char* p = agg.reserve(id, at.core, static_cast<std::uint32_t>(sizeof(record)));
    const record r{at.local, value};
    std::memcpy(p, &r, sizeof r);
    s = {target + 1, at.core, agg.staged_offset(id, at.core, p)};
  }

  channel<record> ch_;
  bool short_circuit_ = true;
  D dist_{};
  [[no_unique_address]] R op_{};
};

/// Opens a target channel over distribution `dist` with `handler`
/// (h(local index, value) on the owner core), optionally reducing values
/// with `op` (reduction.hpp). Call from a task; collective across processes
/// as make_channel (blocking, one round trip per process). Every process
/// gets the same distribution and handler (they travel as bytes).
template <channel_value_like T, distribution_like D, class R = reduction::none, class H>
target_channel<T, D, R> make_target_channel(const D& dist, const H& handler,
                                            const target_channel_options& options = {},
                                            const R& op = {}) {
  static_assert(target_handler_like<H, T>,
                "a target handler is callable as h(std::uint64_t local_index, const T& value), "
                "trivially copyable and at most 64 bytes");
  static_assert(std::same_as<R, reduction::none> || reduction_like<R, T>,
                "a reduction is trivially copyable and callable as r(T& staged, const T& incoming)");
  static_assert(!declared_non_associative<R>,
                "this reduction declares itself non-associative (associative = false): values "
                "for one target meet in the source cache in any grouping, so only an associative "
                "and commutative operation gives a defined result");
  std::uint32_t slots = options.cache_slots;
  if constexpr (std::same_as<R, reduction::none>) {
    SHOAL_CHECK(slots == 0, "make_target_channel: cache_slots {} without a reduction", slots);
  } else {
    if (slots == 0) slots = default_cache_slots;
    SHOAL_CHECK(slots <= max_cache_slots, "make_target_channel: cache_slots {} is above {}", slots,
                max_cache_slots);
  }
  using record = target_record<T>;
  auto deliver = [handler](const record& r) { handler(r.local, r.value); };
  channel_options co;
  co.max_in_flight = options.max_in_flight;
  co.coalesce_values = options.coalesce_values;
  return target_channel<T, D, R>(detail::target_channel_key{},
                                 detail::open_typed_channel<record>(deliver, co, slots), dist, op,
                                 options.short_circuit);
}

}  // namespace shoal
