// The ring-buffer machinery that BCL's queues (fast_queue, circular_queue,
// checksum_queue) share: reserving a run of element counters by
// compare-and-swap, and splitting a run into the one or two contiguous
// pieces it occupies in the ring.
#pragma once

#include "shoal/bcl/path.hpp"
#include "shoal/collective.hpp"
#include "shoal/delegate.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/global_ptr.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <span>

#include <fmt/format.h>

namespace shoal::detail {

/// A queue's memory: `words` u64 on its host core, contiguous in the
/// host's segment. One global_alloc of `words` per core (BCL's queues are
/// hosted, and a symmetric heap reserves the same range everywhere; the
/// other cores' parts stay unused) and a delegate to the host for a 2D
/// pointer to its part, which every backend of one_sided.hpp reaches. The
/// delegate also checks that the host's process has the SHOAL_BCL_PATH
/// `mode` of the making core (bcl/path.hpp).
struct bcl_hosted_memory {
  global_ptr<std::uint64_t> base;   // the allocation (for global_free)
  global_ptr<std::uint64_t> words;  // 2D: the host's `words` words
  global_ptr<std::uint64_t> probe;  // linear: a word of path_probe_core's part, to measure costs
};
inline bcl_hosted_memory bcl_host_alloc(int host, std::uint64_t words, bcl::path_mode mode) {
  bcl_hosted_memory m;
  m.base = global_alloc<std::uint64_t>(static_cast<std::int64_t>(words) * g_info.total_cores);
  const std::int64_t per_block = g_info.block_bytes / 8;
  const global_ptr<std::uint64_t> first = m.base + per_block * host;  // host's local block 0
  m.words = delegate::call(host, [first, mode] {
    bcl::path_same_everywhere(mode);
    return make_global(first.local());
  });
  m.probe = m.base + per_block * bcl::path_probe_core();
  return m;
}

/// Moves the counter `mine` from `at` to at + n by compare-and-swap, if
/// at + n <= other + slack (a push: mine the tail, other the head that
/// frees slots, slack the capacity; a pop: mine the head, other the tail
/// that publishes, slack 0). The caches are guesses, only ever growing: a
/// failed swap returns the counter's value, the next guess. Nothing is
/// reserved when it does not fit (false), so full and empty are exact and
/// nothing has to be taken back. (A fetch_add reservation, as in BCL, needs
/// a take-back when it overshoots, and take-backs interleaved with other
/// reservations can hand one slot to two callers.) Cost: one A when the
/// cache is right; one more A per other reservation since, and an R of
/// `other` when its cache says it does not fit.
inline bool bcl_ring_reserve(global_ptr<std::uint64_t> mine, std::uint64_t& mine_cache,
                             global_ptr<std::uint64_t> other, std::uint64_t& other_cache,
                             std::uint64_t slack, std::uint64_t n, std::uint64_t& at) {
  at = mine_cache;
  for (;;) {
    if (at + n > other_cache + slack) {
      other_cache = rget(other);
      // The counter is at least `at` (counters only grow), so it does not
      // fit now either.
      if (at + n > other_cache + slack) return false;
    }
    const std::uint64_t seen = compare_and_swap(mine, at, at + n);
    if (seen == at) break;
    at = seen;
  }
  mine_cache = at + n;
  return true;
}

/// Calls f(first slot's pointer, offset in the run, count) for the one or
/// (when the run wraps) two contiguous pieces of counters at .. at + n - 1
/// in a ring of `capacity` elements starting at `data`.
template <class T, class F>
void bcl_ring_runs(global_ptr<T> data, std::uint64_t capacity, std::uint64_t at, std::uint64_t n,
                   const F& f) {
  const std::uint64_t slot = at % capacity;
  const std::uint64_t first = std::min(n, capacity - slot);
  f(data + static_cast<std::int64_t>(slot), std::uint64_t{0}, first);
  if (first < n) f(data, first, n - first);
}

/// BCL's collective resize and migrate, for any of the queues: every core
/// calls it with its own handle, no other operation on the queue running
/// (pushers have rflush()ed). After a barrier, the old host makes a queue of
/// `capacity` on `host`, moves the elements into it in order (pops of 64 at
/// a time, pushes), frees the old one and broadcasts the new handle, which
/// replaces `q` on every core. Cost: B + a make + R(n) + W(n) for n
/// elements, and a broadcast. Ends the job when the elements do not fit.
template <class Q, class T>
void bcl_rebuild(Q& q, const char* op, int host, std::uint64_t capacity) {
  barrier();
  Q fresh;
  const int old_host = q.host();
  if (mycore() == old_host) {
    const std::uint64_t n = q.size();
    if (n > capacity)
      fatal_user(fmt::format("{}: {} to a capacity of {} elements, fewer than the {} it holds",
                             q.describe(), op, capacity, n));
    if (host < 0 || host >= g_info.total_cores)
      fatal_user(fmt::format("{}: {} to core {}, outside the job ({} cores)", q.describe(), op,
                             host, g_info.total_cores));
    fresh = Q::make(host, capacity);
    T buf[64];
    for (std::uint64_t left = n; left > 0;) {
      const std::uint64_t m = left < 64 ? left : 64;
      q.pop(std::span<T>(buf, m));
      fresh.push(std::span<const T>(buf, m));
      left -= m;
    }
    rflush();
    q.destroy();
  }
  q = broadcast(fresh, old_host);
}

}  // namespace shoal::detail
