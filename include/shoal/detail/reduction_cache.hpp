// The source cache of message reductions (reduction.hpp), one per core per
// reducing (or routed: its counters) target channel: a direct-mapped table from a target id to
// where its last value sits in the batch staged for the target's owner.
//
// The cache holds places, not values: every value is in a staged batch from
// its send on, so flushing (size, age, idle, flush(), the waves of
// end_phase and drain) needs no extra step and the phase counts see every
// value. A slot is trusted only after checking that the batch it names is
// still staged and still holds a record for the same target at that offset
// (aggregator::staged and the record's local index); a batch that left, or
// a slot overwritten by another target, is a miss and the value is staged
// anew. Combining into a record of a later batch for the same target is
// still right: it is an unsent value for that target.
//
// Touched by its core only; the counters are atomics so that another thread
// may read them (relaxed: statistics, no ordering).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace shoal::detail {

/// A core's accumulator of a combine-until-flush channel
/// (local_combiner.hpp), owned by its reduction_cache.
struct combiner_base {
  virtual ~combiner_base() = default;
  /// Set while the core hands the combined values on: sends made meanwhile
  /// (handlers of short-circuited values, other tasks while it waits for
  /// buffers) bypass the combiner.
  bool flushing = false;
};

struct reduction_cache {
  struct slot {
    std::uint64_t key = 0;  // target id + 1; 0 = empty
    std::int32_t dest = -1;
    std::uint32_t offset = 0;
  };

  slot& at(std::uint64_t target) noexcept {
    // Fibonacci hashing: neighbouring ids land in distant slots.
    return table[(target * 0x9e3779b97f4a7c15ULL >> 32) & mask];
  }
  void count(bool hit) noexcept {
    lookups.store(lookups.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (hit) hits.store(hits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  void count_forwards(std::uint64_t n) noexcept {
    forwarded.store(forwarded.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::unique_ptr<slot[]> table;
  std::uint64_t mask = 0;
  // Relaxed: counters read only for statistics.
  std::atomic<std::uint64_t> lookups{0};
  std::atomic<std::uint64_t> hits{0};
  std::atomic<std::uint64_t> forwarded{0};  // values handed on at routing hops
  // combine_until_flush: made by the core's first send.
  std::unique_ptr<combiner_base> combiner;
};

}  // namespace shoal::detail
