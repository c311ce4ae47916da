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
// Combining until flush (Active Pebbles 3.5, the combining an application
// would write by hand: pagerank's --impl combining). With
// {.combine_until_flush = true} and a reduction, a value a task sends is not
// staged: it is folded (the reduction) into this core's accumulator of one
// value per distinct target (detail/local_combiner.hpp: one slot per target
// id when the distribution declares targets() and local_count(core), else a
// hash table), its own targets' included. When the core calls flush(), end_phase(),
// end_phase_depth() or drain() on the channel, one record per target reached
// leaves (its own targets' handlers run there, short-circuited), so every
// duplicate that met on the core is removed. What that means:
// - Every core that sends must flush it (SPMD: end_phase does); values
//   another core combined are not seen by this core's drain().
// - Handler context (a handler of any channel sending on this one) and
//   sends made while the core is flushing are staged at once, as without
//   the mode (the source cache applies), so that cascades end with the
//   phase.
// - Memory: flat: sizeof(T) bytes and 1 bit per target of the job, per core.
// - Cost: combining() gives a task's loop a sender whose send() over a flat
//   combiner is a range check, a bit test and the reduction, inlined;
//   local_combine(f) hands f a sender chosen for the combiner's layout, so
//   that with drop_identity send() is the range check and the reduction
//   alone, as a hand-written `sums[t] += v`. The owner of each distinct
//   target is located once, at the flush; this core's own targets are
//   handled there in runs of 64 through one call of the channel's deliver
//   loop, the others staged as one record each.
// - Dense regions: with drop_identity and a distribution whose cores own
//   contiguous ranges of ids (first_target(core): block_distribution), the
//   flush goes owner by owner (no per-target lookup) and hands this core's
//   own range to the handler in one call that scans the slots and runs the
//   handler inline (no records). pagerank --impl combining is this path:
//   within 1.2x of its former hand-written protocol in instructions
//   (bench/results/pebbles.md).
// - Own targets in place (own_in_place, dense regions only): this core's
//   own range is not handed on at all; local_own_values() gives its slots
//   to the core as the accumulator its handler also folds received values
//   into (a hand-written combining's own slice), and the caller clears
//   what it consumed. The flush then costs only the other cores' ranges.
// Statistics: lookups = values combined, hits = lookups - records sent.
//
// Misuse: a target the distribution maps outside the job (or outside its
// targets(), when it declares them) ends the job with a message naming the
// target and the distribution (a combining_sender over a flat combiner
// checks the range at once and the owner at the flush); send on a closed
// or default handle as channel::send.
#pragma once

#include "shoal/channel.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/local_combiner.hpp"
#include "shoal/detail/reduction_cache.hpp"
#include "shoal/detail/target_path.hpp"
#include "shoal/distribution.hpp"
#include "shoal/reduction.hpp"
#include "shoal/routing.hpp"
#include "shoal/runtime.hpp"
#include "shoal/task.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <utility>

namespace shoal {

/// A target handler: callable as h(std::uint64_t local_index, const T&),
/// trivially copyable as bytes, at most max_channel_handler_bytes less the
/// routing's size (both are replicated to every core).
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
  /// Combine until flush (needs a reduction; see "Combining until flush"
  /// in the header comment): a task's values are folded into one per
  /// distinct target on its core and travel only when that core calls
  /// flush(), end_phase(), end_phase_depth() or drain().
  bool combine_until_flush = false;
  /// With combine_until_flush, a reduction with an identity for T
  /// (reduction::sum, min, max on arithmetic T) and a distribution with
  /// targets() and local_count(): the combiner keeps no marks, and a flush
  /// sends only the targets whose combined value differs from the
  /// identity (a sum of 0, a min of +infinity...): a target whose values
  /// fold to the identity gets no record. Per value: the range check and
  /// the reduction, as a hand-written `sums[t] += v` (pagerank's
  /// increments are positive). A flush scans every slot; with a
  /// distribution that declares first_target(core), owner range by owner
  /// range, this core's own range handed to the handler in one loop.
  bool drop_identity = false;
  /// With drop_identity and a distribution that declares first_target(core)
  /// (contiguous ranges of ids per core): this core's own targets are
  /// never handed to the handler. Their values stay folded in the
  /// combiner's slots, which local_own_values() gives the core's tasks
  /// and handlers as its accumulator (a hand-written combining's "own
  /// slice"): a flush skips that range, and the caller reads it and puts
  /// the identity back in the slots it consumed (what it leaves there
  /// folds into the next phase's values). Values that travel (other
  /// cores', or staged from handler context) still run the handler, which
  /// may fold them into the same slots. Saves a scan and a handler call
  /// per own target reached.
  bool own_in_place = false;
};
inline constexpr std::uint32_t default_cache_slots = 1024;
inline constexpr std::uint32_t max_cache_slots = 1U << 24;
inline constexpr int max_short_circuit_depth = 16;

namespace detail {
inline thread_local int tls_short_circuit_depth = 0;
/// Runs channel `id`'s deliver loop on `n` records at `records`, all for
/// this core's own targets (a short-circuited send), nested one level
/// deeper; a handle whose channel is closed ends the job, naming `who`.
inline void deliver_here(std::uint32_t id, const unsigned char* records, std::uint32_t n,
                         const char* who) {
  const channel_entry& e = channel_table()[id];
  if (e.deliver == nullptr) [[unlikely]]
    fatal_channel_send(id, who);
  ++tls_short_circuit_depth;
  e.deliver(e.state, reinterpret_cast<const char*>(records), n);
  --tls_short_circuit_depth;
}
/// Only make_target_channel builds an open target_channel.
struct target_channel_key {
  explicit target_channel_key() = default;
};

}  // namespace detail

template <channel_value_like T, distribution_like D, class R = reduction::none,
          routing_like Route = direct_routing>
class target_channel {
 public:
  using record = target_record<T>;
  static constexpr bool reduces = !std::same_as<R, reduction::none>;

 private:
  // The combiner of combine_until_flush: one slot per target id when the
  // distribution numbers its targets densely (targets() and local_count()),
  // else a hash table (detail/local_combiner.hpp).
  using combiner_type = std::conditional_t<detail::flat_combinable<D>, detail::flat_combiner<T>,
                                           detail::hashed_combiner<T>>;
  static constexpr bool flat = detail::flat_combinable<D>;

 public:
  target_channel() = default;
  /// Use make_target_channel.
  target_channel(detail::target_channel_key, channel<record> ch, const D& dist, const R& op,
                 const Route& route, bool short_circuit, bool combine, bool drop_identity,
                 bool own_in_place)
      : ch_(ch),
        short_circuit_(short_circuit),
        combine_(combine),
        drop_identity_(drop_identity),
        own_in_place_(own_in_place),
        dist_(dist),
        op_(op),
        route_(route) {}

  /// Sends `value` to target `target`: its handler runs on the owner core
  /// with the target's local index. Returns at once (may suspend a task under
  /// back-pressure, like channel::send); a local target's handler has run when
  /// it returns. Any core, inside run().
  void send(std::uint64_t target, const T& value) const {
    const target_location at = check_target(dist_, target, cores(), "shoal::target_channel::send");
    if constexpr (reduces) {
      if (combine_ && combine(target, at, value)) return;
    }
    if (short_circuit_ && at.core == detail::tls_core &&
        detail::tls_short_circuit_depth < max_short_circuit_depth) {
      run_here(at.local, value);
      return;
    }
    if (at.local > max_target_local) [[unlikely]]
      detail::fatal_target("shoal::target_channel::send", target, distribution_name(dist_),
                           fmt::format("has local index {}, above the largest a target channel "
                                       "carries (2^40 - 1)",
                                       at.local));
    const std::uint32_t id = ch_.id();
    if (__builtin_expect((id == 0) | (detail::tls_core < 0), 0))
      detail::fatal_channel_send(id, "shoal::target_channel::send");
    const std::uint64_t where = static_cast<std::uint64_t>(at.core) << target_local_bits | at.local;
    detail::stage_record(id, ch_.max_in_flight(), detail::next_core(route_, at.core), where, value,
                         op_);
  }

  /// As channel::flush, end_phase, drain and close; in combine-until-flush
  /// mode the first three send this core's combined values first.
  void flush() const {
    flush_combined();
    ch_.flush();
  }
  void end_phase() const {
    flush_combined();
    ch_.end_phase();
  }
  /// As channel::end_phase_depth. A value short-circuited to a local
  /// target is handled at once, so the values its handler sends are no
  /// deeper than the channel's rule says; each routing hop (routing.hpp) is
  /// a handler send and counts as one more level.
  void end_phase_depth(int depth) const {
    flush_combined();
    ch_.end_phase_depth(depth);
  }
  void drain() const {
    flush_combined();
    ch_.drain();
  }
  void close() { ch_.close(); }

  const D& distribution() const noexcept { return dist_; }
  bool combines_until_flush() const noexcept { return combine_; }
  bool own_in_place() const noexcept { return own_in_place_; }

  /// With own_in_place: this core's slots of its combiner, the values
  /// folded into its own targets (index = local index; the identity where
  /// none), made on the first call (call once before timing to keep the
  /// allocation out). Call on a core (task or handler); the span stays
  /// valid until the channel closes. The caller owns these slots: a flush
  /// never reads them, and a value left there joins the next phase's.
  /// Ends the job on a channel opened without own_in_place.
  std::span<T> local_own_values() const {
    SHOAL_CHECK(own_in_place_,
                "target_channel::local_own_values on channel {}, which was not opened with "
                "own_in_place",
                ch_.id());
    if constexpr (detail::region_combinable<D> && reduces) {
      combiner_type& c = combiner_here(cache_here("shoal::target_channel::local_own_values"));
      const int me = detail::tls_core;
      const auto first = static_cast<std::uint64_t>(dist_.first_target(me));
      const auto count = static_cast<std::uint64_t>(dist_.local_count(me));
      if (count == 0) return {};
      if (first > c.size() || count > c.size() - first) [[unlikely]]
        fatal_region(me, first, count, c.size());
      return {c.values() + first, static_cast<std::size_t>(count)};
    } else {
      return {};  // make_target_channel refuses own_in_place here
    }
  }

  /// The fast path of combine-until-flush for a task's loop: folds values
  /// into this core's combiner as send() does, without send()'s per-value
  /// look-ups of the handle, the channel table and the context. Over a flat
  /// combiner (a distribution with targets() and local_count()) a value
  /// costs a range check, one bit test and the reduction, inlined: about
  /// what a hand-written `sums[target] += value` loop costs
  /// (bench/results/pebbles.md); the owner of each distinct target is
  /// located and checked at the flush, so a distribution mapping a target
  /// outside the job is named there, not at this call. Valid on the core
  /// that made it, from a task, until the channel closes; values it adds
  /// travel at the core's next flush() or end_phase() like send()'s.
  class combining_sender {
   public:
    [[gnu::always_inline]] void send(std::uint64_t target, const T& value) const {
      if constexpr (flat) {
        if (target >= size_) [[unlikely]]
          detail::fatal_target_range(ch_->dist_, target, size_, "combining_sender::send");
        if (unmarked_) {
          c_->add_unmarked(values_, target, value, op_);
        } else {
          c_->add(values_, marks_, target, value, op_);
        }
      } else {
        const target_location at =
            check_target(ch_->dist_, target, cores_, "combining_sender::send");
        if (!c_->add(at.core, at.local, value, op_)) [[unlikely]]
          ch_->combine(target, at, value);
      }
    }

   private:
    friend class target_channel;
    combining_sender(const target_channel* ch, combiner_type* c)
        : ch_(ch), c_(c), op_(ch->op_), cores_(cores()) {
      if constexpr (flat) {
        values_ = c->values();
        unmarked_ = c->unmarked();
        marks_ = c->marks();
        size_ = c->size();
      }
    }
    const target_channel* ch_;
    combiner_type* c_;
    // Copies, so that the loop keeps them in registers.
    T* values_ = nullptr;
    std::uint64_t* marks_ = nullptr;
    std::uint64_t size_ = 0;
    [[no_unique_address]] R op_;
    int cores_;
    bool unmarked_ = false;
  };
  /// This core's combining_sender. Call from a task on a channel opened
  /// with combine_until_flush; ends the job otherwise. The handle must
  /// outlive the sender (it reads the distribution and reduction from it).
  combining_sender combining() const {
    SHOAL_CHECK(combine_ && reduces,
                "target_channel::combining() on channel {}, which was not opened with "
                "combine_until_flush and a reduction",
                ch_.id());
    SHOAL_CHECK(detail::tls_core >= 0 && detail::in_worker(),
                "target_channel::combining() outside a task (a handler's values are staged: "
                "use send())");
    return combining_sender(this, &combiner_here(cache_here("shoal::target_channel::combining")));
  }
  /// Runs f(sender) once, on this core, with a sender of combining()'s
  /// contract chosen for the combiner's layout, so that a loop in f tests
  /// no mode per value: f is called with a `const S&` for one of two or
  /// three sender types (write it as a generic lambda, `const auto& to`).
  /// Without marks (drop_identity) to.send(t, v) is the range check and the
  /// reduction, inlined, the count of values kept in the sender: as
  /// `sums[t] += v` by hand. Values join the combiner as they are sent (a
  /// flush inside f sends them); their count joins the statistics when f
  /// returns. Call from a task, as combining(); the sender is valid only
  /// inside f. Costs nothing beyond the values' folding.
  template <class F>
  void local_combine(F&& f) const {
    SHOAL_CHECK(combine_ && reduces,
                "target_channel::local_combine on channel {}, which was not opened with "
                "combine_until_flush and a reduction",
                ch_.id());
    combining_sender s = combining();
    if constexpr (flat) {
      if (s.unmarked_) {
        using sender = detail::unmarked_sender<T, R, D>;
        const sender u(s.values_, s.size_, op_, &dist_);
        // Also when f throws. The values are counted as lookups and hits
        // here and each flush subtracts its records from the hits (in
        // modular arithmetic), so the totals agree once f has returned.
        struct close_sender {
          combiner_type* c;
          detail::reduction_cache* cache;
          const sender* u;
          ~close_sender() {
            --c->open_senders;
            c->sender_added = c->sender_added || u->adds() != 0;
            // Relaxed: statistics.
            cache->lookups.store(cache->lookups.load(std::memory_order_relaxed) + u->adds(),
                                 std::memory_order_relaxed);
            cache->hits.store(cache->hits.load(std::memory_order_relaxed) + u->adds(),
                              std::memory_order_relaxed);
          }
        } closing{s.c_, &cache_here("shoal::target_channel::local_combine"), &u};
        ++s.c_->open_senders;
        f(u);
        return;
      }
    }
    f(std::as_const(s));
  }
  const Route& routing() const noexcept { return route_; }
  const channel<record>& underlying() const noexcept { return ch_; }
  std::uint32_t id() const noexcept { return ch_.id(); }
  explicit operator bool() const noexcept { return static_cast<bool>(ch_); }

  /// Reduction counts summed over this process's cores (zeros without a
  /// reduction). Any thread; exact once the phase has ended.
  reduction_stats local_reduction_stats() const {
    reduction_stats s;
    detail::for_each_core_cache(ch_.id(), [&s](const detail::reduction_cache& c) {
      // Relaxed: statistics.
      s.lookups += c.lookups.load(std::memory_order_relaxed);
      s.hits += c.hits.load(std::memory_order_relaxed);
    });
    return s;
  }
  /// Values this process's cores forwarded at intermediate routing hops
  /// (zero with direct routing).
  route_stats local_route_stats() const { return detail::forwarded_on(ch_.id()); }

 private:
  /// This core's cache (counters, combiner).
  detail::reduction_cache& cache_here(const char* who) const {
    const std::uint32_t id = ch_.id();
    if (__builtin_expect((id == 0) | (detail::tls_core < 0), 0))
      detail::fatal_channel_send(id, who);
    detail::reduction_cache* caches = detail::channel_table()[id].caches;
    if (caches == nullptr) [[unlikely]]
      detail::fatal_channel_send(id, who);  // a stale copy of a closed handle
    return caches[detail::tls_core - detail::g_info.rank_base];
  }

  combiner_type& combiner_here(detail::reduction_cache& cache) const {
    if (!cache.combiner) [[unlikely]] {
      if constexpr (flat) {
        const auto n = static_cast<std::uint64_t>(dist_.targets());
        if constexpr (reduction_with_identity<R, T>) {
          if (drop_identity_) {
            cache.combiner = std::make_unique<combiner_type>(n, R::template identity<T>());
            return static_cast<combiner_type&>(*cache.combiner);
          }
        }
        cache.combiner = std::make_unique<combiner_type>(n);
      } else {
        cache.combiner = std::make_unique<combiner_type>();
      }
    }
    return static_cast<combiner_type&>(*cache.combiner);
  }

  /// Folds a task's value into this core's combiner; false when it must be
  /// staged now (handler context, or the core is flushing).
  bool combine(std::uint64_t target, const target_location& at, const T& value) const {
    combiner_type& c = combiner_here(cache_here("shoal::target_channel::send"));
    if (!detail::in_worker() || c.flushing) [[unlikely]]
      return false;
    if constexpr (flat) {
      // check_target checked that the target is below targets().
      if (c.unmarked()) {
        c.add_unmarked(c.values(), target, value, op_);
      } else {
        c.add(target, value, op_);
      }
    } else {
      c.add(at.core, at.local, value, op_);
    }
    return true;
  }

  /// Sends what this core combined: one record per target reached.
  void flush_combined() const {
    if constexpr (reduces) {
      if (!combine_) return;
      detail::reduction_cache& cache = cache_here("shoal::target_channel::flush");
      combiner_type& c = combiner_here(cache);
      if (c.flushing || c.empty()) return;
      c.flushing = true;
      const std::uint64_t adds = c.adds;
      const std::uint64_t before = c.distinct;
      c.adds = 0;
      if constexpr (detail::region_combinable<D>) {
        if (c.unmarked()) {
          drain_regions(c);
        } else {
          drain_flat(c);
        }
      } else if constexpr (flat) {
        drain_flat(c);
      } else {
        c.drain([this](int owner, std::uint64_t local, const T& v) { hand_on(owner, local, v); });
      }
      c.flushing = false;
      // Relaxed: statistics.
      const std::uint64_t sent = c.distinct - before;
      cache.lookups.store(cache.lookups.load(std::memory_order_relaxed) + adds,
                          std::memory_order_relaxed);
      cache.hits.store(cache.hits.load(std::memory_order_relaxed) + (adds - sent),
                       std::memory_order_relaxed);
    }
  }

  /// The flush without marks over contiguous regions (region_combinable):
  /// each owner's region scanned in turn, the next core's first and this
  /// core's last (handed to the handler in runs, as drain_flat does), the
  /// owner, its next hop and the bounds checked once per region; then the
  /// ids in no region, where a value is a distribution error.
  void drain_regions(combiner_type& c) const {
    c.sender_added = false;
    const D dist = dist_;  // locals: see drain_flat
    const int me = detail::tls_core;
    const int job = cores();
    const std::uint64_t size = c.size();
    std::uint64_t covered = 0;  // ids in regions; regions in ascending order: end of the last
    std::uint64_t end = 0;
    bool ascending = true;
    for (int k = 1; k <= job; ++k) {
      const int owner = (me + k) % job;
      const std::uint64_t first = dist.first_target(owner);
      const std::uint64_t count = dist.local_count(owner);
      if (count == 0) continue;
      if (first > size || count > size - first || count - 1 > max_target_local) [[unlikely]]
        fatal_region(owner, first, count, size);
      drain_region(c, owner, first, count);
      covered += count;
    }
    for (int o = 0; o < job && ascending; ++o) {
      const std::uint64_t count = dist.local_count(o);
      if (count == 0) continue;
      const std::uint64_t first = dist.first_target(o);
      ascending = first >= end;
      if (ascending) check_gap(c, end, first);
      end = first + count;
    }
    if (covered < size) check_gap(c, ascending ? end : 0, size);
  }

  /// Hands on the values of owner `owner`'s region [first, first + count).
  void drain_region(combiner_type& c, int owner, std::uint64_t first, std::uint64_t count) const {
    // own_in_place: the range is the caller's accumulator (local_own_values).
    if (owner == detail::tls_core && own_in_place_) return;
    const std::uint64_t tag = static_cast<std::uint64_t>(owner) << target_local_bits;
    if (owner == detail::tls_core && short_circuit_ &&
        detail::tls_short_circuit_depth < max_short_circuit_depth) {
      if constexpr (std::equality_comparable<T>) {
        // One record for the region: the receive side scans it with the
        // handler inlined (detail::own_region_request).
        detail::own_region_request q{c.values() + first, count, &c.identity()};
        detail::own_region_request* const outer = detail::tls_own_region;
        detail::tls_own_region = &q;
        const record r{static_cast<std::uint64_t>(detail::region_owner) << target_local_bits,
                       c.identity()};
        alignas(64) unsigned char one[sizeof(record)];
        std::memcpy(one, &r, sizeof r);
        run_here(one, 1);
        detail::tls_own_region = outer;
        c.distinct += q.handed;
        return;
      }
      constexpr std::uint32_t run = 64;
      alignas(64) unsigned char own[run * sizeof(record)];
      std::uint32_t n = 0;
      c.drain_range(first, first + count, [&](std::uint64_t t, const T& v) {
        const record r{tag | (t - first), v};
        std::memcpy(own + std::size_t{n++} * sizeof(record), &r, sizeof r);
        if (n == run) {
          run_here(own, n);
          n = 0;
        }
      });
      if (n != 0) run_here(own, n);
      return;
    }
    const std::uint32_t id = ch_.id();
    const std::uint32_t bound = ch_.max_in_flight();
    const int dest = detail::next_core(route_, owner);
    // A task yields every 64 records (as the apps' send loops do), so that
    // its core hands what it staged to the network and handles what others
    // sent it while the region drains: measured at 2 processes x 1 core.
    const bool pace = detail::in_worker();
    std::uint32_t left = 64;
    c.drain_range(first, first + count, [&](std::uint64_t t, const T& v) {
      detail::stage_record(id, bound, dest, tag | (t - first), v, reduction::none{});
      if (pace && --left == 0) {
        left = 64;
        shoal::yield();
      }
    });
  }

  /// Ids [lo, hi) lie in no core's region: a value folded there (one that
  /// differs from the identity) names its target and ends the job.
  void check_gap(combiner_type& c, std::uint64_t lo, std::uint64_t hi) const {
    if (lo < hi)
      c.drain_range(lo, hi, [this](std::uint64_t t, const T&) {
        detail::fatal_target("shoal::target_channel::flush", t, distribution_name(dist_),
                             "is in no core's region (first_target(core) and local_count(core))");
      });
  }

  [[noreturn, gnu::cold, gnu::noinline]] void fatal_region(int owner, std::uint64_t first,
                                                           std::uint64_t count,
                                                           std::uint64_t size) const {
    detail::fatal_user(fmt::format(
        "shoal::target_channel::flush: {} gives core {} the region of {} targets from {}, "
        "beyond its targets() ({}) or with local indices above 2^40 - 1",
        distribution_name(dist_), owner, count, first, size));
  }

  /// The flat combiner's flush: each distinct target located and checked
  /// once; this core's own targets handed to the handler in runs through
  /// the channel's deliver loop (one indirect call per run, not per value).
  void drain_flat(combiner_type& c) const {
    constexpr std::uint32_t run = 64;
    alignas(64) unsigned char own[run * sizeof(record)];  // T need not be default-constructible
    std::uint32_t n = 0;
    // Locals: the handle may sit in thread-local storage, and the records'
    // stores would make the compiler reload its fields.
    const D dist = dist_;
    const int me = detail::tls_core;
    const int job = cores();
    const bool here = short_circuit_ && detail::tls_short_circuit_depth < max_short_circuit_depth;
    const std::uint32_t id = ch_.id();
    const std::uint32_t bound = ch_.max_in_flight();
    // The next core's targets first, so that cores do not all start with
    // core 0's (exact for block layouts, near enough for others).
    const int next = (me + 1) % job;
    const std::uint64_t first = c.size() / static_cast<std::uint64_t>(job) * next;
    c.drain(first, [&](std::uint64_t target, const T& v) {
      const target_location at = check_target(dist, target, job, "shoal::target_channel::flush");
      if (at.local > max_target_local) [[unlikely]]
        fatal_local_index(at.local);
      const std::uint64_t where =
          static_cast<std::uint64_t>(at.core) << target_local_bits | at.local;
      if (at.core == me && here) {
        const record r{where, v};
        std::memcpy(own + std::size_t{n++} * sizeof(record), &r, sizeof r);
        if (n == run) {
          run_here(own, n);
          n = 0;
        }
        return;
      }
      detail::stage_record(id, bound, detail::next_core(route_, at.core), where, v,
                           reduction::none{});
    });
    if (n != 0) run_here(own, n);
  }

  [[noreturn, gnu::cold, gnu::noinline]] void fatal_local_index(std::uint64_t local) const {
    detail::fatal_user(
        fmt::format("shoal::target_channel::flush: {} maps a target to "
                    "local index {}, above the largest a target channel "
                    "carries (2^40 - 1)",
                    distribution_name(dist_), local));
  }

  /// One combined value on its way: handled here or staged.
  void hand_on(int owner, std::uint64_t local, const T& v) const {
    if (owner == detail::tls_core && short_circuit_ &&
        detail::tls_short_circuit_depth < max_short_circuit_depth) {
      run_here(local, v);
      return;
    }
    stage(owner, local, v);
  }

  void stage(int owner, std::uint64_t local, const T& v) const {
    if (local > max_target_local) [[unlikely]]
      fatal_local_index(local);
    detail::stage_record(ch_.id(), ch_.max_in_flight(), detail::next_core(route_, owner),
                         static_cast<std::uint64_t>(owner) << target_local_bits | local, v,
                         reduction::none{});
  }

  /// Runs the handler of `n` records of this core's own targets.
  void run_here(const unsigned char* records, std::uint32_t n) const {
    detail::deliver_here(ch_.id(), records, n, "shoal::target_channel::send");
  }

  void run_here(std::uint64_t local, const T& value) const {
    const record r{static_cast<std::uint64_t>(detail::tls_core) << target_local_bits | local,
                   value};
    alignas(64) unsigned char one[sizeof(record)];
    std::memcpy(one, &r, sizeof r);
    run_here(one, 1);
  }

  channel<record> ch_;
  bool short_circuit_ = true;
  bool combine_ = false;
  bool drop_identity_ = false;
  bool own_in_place_ = false;
  D dist_{};
  [[no_unique_address]] R op_{};
  [[no_unique_address]] Route route_{};
};

/// Opens a target channel over distribution `dist` with `handler`
/// (h(local index, value) on the owner core), optionally reducing values
/// with `op` (reduction.hpp) and routing them between processes with
/// `route` (routing.hpp). Call from a task; collective across processes as
/// make_channel (blocking, one round trip per process). Every process gets
/// the same distribution, handler and routing (they travel as bytes).
template <channel_value_like T, distribution_like D, class R = reduction::none,
          routing_like Route = direct_routing, class H>
target_channel<T, D, R, Route> make_target_channel(const D& dist, const H& handler,
                                                   const target_channel_options& options = {},
                                                   const R& op = {}, const Route& route = {}) {
  static_assert(target_handler_like<H, T>,
                "a target handler is callable as h(std::uint64_t local_index, const T& value), "
                "trivially copyable and at most 64 bytes");
  static_assert(
      std::same_as<R, reduction::none> || reduction_like<R, T>,
      "a reduction is trivially copyable and callable as r(T& staged, const T& incoming)");
  static_assert(!declared_non_associative<R>,
                "this reduction declares itself non-associative (associative = false): values "
                "for one target meet in the source cache in any grouping, so only an associative "
                "and commutative operation gives a defined result");
  using receiver = detail::target_receiver<T, H, R, Route>;
  static_assert(sizeof(receiver) <= max_channel_handler_bytes,
                "the target handler, reduction and routing together exceed the 64 bytes a "
                "channel replicates to every core: capture less in the handler");
  std::uint32_t slots = options.cache_slots;
  if constexpr (std::same_as<R, reduction::none>) {
    SHOAL_CHECK(slots == 0, "make_target_channel: cache_slots {} without a reduction", slots);
    SHOAL_CHECK(!options.combine_until_flush,
                "make_target_channel: combine_until_flush without a reduction (pass one: "
                "reduction::sum, min, max, drop_duplicates or with(f))");
    // Routed channels keep per-core counters (forwarded values) there.
    if constexpr (!std::same_as<Route, direct_routing>) slots = 1;
  } else {
    if (slots == 0) slots = default_cache_slots;
    SHOAL_CHECK(slots <= max_cache_slots, "make_target_channel: cache_slots {} is above {}", slots,
                max_cache_slots);
  }
  if (options.drop_identity) {
    if constexpr (!detail::flat_combinable<D> || !reduction_with_identity<R, T>) {
      detail::fatal_user(
          "make_target_channel: drop_identity needs a reduction with an identity for the value "
          "type (reduction::sum, min or max on an arithmetic type) and a distribution with "
          "targets() and local_count()");
    }
    SHOAL_CHECK(options.combine_until_flush,
                "make_target_channel: drop_identity without combine_until_flush");
  }
  if (options.own_in_place) {
    if constexpr (!detail::region_combinable<D>) {
      detail::fatal_user(
          "make_target_channel: own_in_place needs a distribution whose cores own contiguous "
          "ranges of ids (targets(), local_count(core) and first_target(core))");
    }
    SHOAL_CHECK(options.drop_identity,
                "make_target_channel: own_in_place without drop_identity (and "
                "combine_until_flush)");
  }
  SHOAL_CHECK(shoal::cores() < (1 << (64 - target_local_bits)),
              "make_target_channel: {} cores; a target channel addresses at most 2^24",
              shoal::cores());
  channel_options co;
  co.max_in_flight = options.max_in_flight;
  co.coalesce_values = options.coalesce_values;
  return target_channel<T, D, R, Route>(
      detail::target_channel_key{},
      detail::open_typed_channel<target_record<T>>(receiver{handler, op, route}, co, slots), dist,
      op, route, options.short_circuit, options.combine_until_flush, options.drop_identity,
      options.own_in_place);
}

}  // namespace shoal
