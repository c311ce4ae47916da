// The permutation's pebble {where, i} and a short queue of pebbles whose
// element has been prefetched, shared by the typed-channel run
// (distributed.cpp) and the target-channel run (routed.cpp): a handler
// queues a few pebbles and handles the one `depth` pushes earlier, so that
// the cache misses of their random accesses overlap.
#pragma once

#include <array>
#include <cstdint>

namespace shoal_apps::permutation {

/// A message of either channel: {where, i}.
struct pebble {
  std::uint64_t where;
  std::uint64_t i;
};

/// A short queue of pebbles whose element has been prefetched: push()
/// returns the pebble `depth` pushes earlier, once its line had time to arrive.
class pebble_queue {
 public:
  static constexpr unsigned depth = 8;  // a power of two

  /// Queues `p`; when full, hands out the oldest pebble through `out`.
  template <class Out>
  void push(const pebble& p, Out out) {
    if (filled_ == depth)
      out(q_[next_]);
    else
      ++filled_;
    q_[next_] = p;
    next_ = (next_ + 1) & (depth - 1);
  }
  /// Hands out every queued pebble, oldest first.
  template <class Out>
  void drain(Out out) {
    for (unsigned k = (next_ - filled_) & (depth - 1); filled_ > 0; --filled_) {
      out(q_[k]);
      k = (k + 1) & (depth - 1);
    }
  }

 private:
  std::array<pebble, depth> q_{};
  unsigned next_ = 0;
  unsigned filled_ = 0;
};

}  // namespace shoal_apps::permutation
