// A short per-core queue of updates waiting to be applied to this core's
// words, so that the channel handler overlaps its cache misses.
//
// The channel hands the handler one value at a time, and a handler that
// XORs at once waits for each random word in turn (a DRAM miss apiece for
// a table larger than the caches). Instead push() prefetches the word and
// queues the update; the update `depth` pushes earlier, whose line has had
// time to arrive, is applied then. drain() applies whatever is queued; the
// handler calls it before acknowledging a chunk, so "applied" still means
// applied. Only the owning core touches its queue and its words, so the
// delay changes nothing a reader could see between acknowledgements.
//
// Depth: enough misses in flight to cover a DRAM access. At 8 the handler
// stalled on the XOR of the update 8 pushes back (perf: 64% of its samples
// there at --log-table 26, 2 x 1), its line not yet in; at 32 the stall
// moves to the prefetch itself, i.e. the core has as many misses in flight
// as it can hold. 16 and 64 measured within noise of 32 on that run.
#pragma once

#include <array>
#include <cstdint>

namespace shoal_apps::gups {

class apply_queue {
 public:
  static constexpr unsigned depth = 32;  // a power of two

  /// Where the core's part of the table starts (set before the first push).
  void set_part(std::uint64_t* part) noexcept { part_ = part; }

  /// Queues part[at] ^= r, applying the oldest queued update when full.
  void push(std::uint64_t at, std::uint64_t r) noexcept {
    __builtin_prefetch(part_ + at, 1);
    if (filled_ == depth) {
      part_[at_[next_]] ^= r_[next_];
    } else {
      ++filled_;
    }
    at_[next_] = at;
    r_[next_] = r;
    next_ = (next_ + 1) & (depth - 1);
  }

  /// Applies every queued update.
  void drain() noexcept {
    for (unsigned k = (next_ - filled_) & (depth - 1); filled_ > 0; --filled_) {
      part_[at_[k]] ^= r_[k];
      k = (k + 1) & (depth - 1);
    }
  }

 private:
  std::uint64_t* part_ = nullptr;
  std::array<std::uint64_t, depth> at_{};
  std::array<std::uint64_t, depth> r_{};
  unsigned next_ = 0;    // slot the next push fills
  unsigned filled_ = 0;  // queued updates, ending just before next_
};

}  // namespace shoal_apps::gups
