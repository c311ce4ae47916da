// Chase-Lev work-stealing deque of inline tasks, fixed capacity.
//
// Protocol: the owning core pushes and pops at the bottom (LIFO, depth-first
// for recursive decomposition); other cores steal from the top (FIFO, the
// oldest and usually largest pieces). A slot is copied word by word with
// relaxed atomics: a thief may read a slot the owner is rewriting only when
// its view of `top_` is stale, and then its CAS on `top_` fails and the copy
// is discarded. push() fails when full; the caller keeps the task elsewhere.
// Owner-written `bottom_` and thief-written `top_` sit on separate cache lines.
#pragma once

#include "shoal/detail/inline_task.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace shoal::detail {

class chase_lev_deque {
 public:
  explicit chase_lev_deque(std::size_t capacity_pow2 = 4096)
      : mask_(capacity_pow2 - 1), slots_(new slot[capacity_pow2]) {}

  /// Owner only. False when full.
  bool push(const inline_task& t) noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    // Acquire: pairs with a thief's CAS on top, so its read of the slot
    // is done before this push may overwrite it (when the deque wraps).
    const std::int64_t tp = top_.load(std::memory_order_acquire);
    if (b - tp > static_cast<std::int64_t>(mask_)) return false;
    slots_[static_cast<std::size_t>(b) & mask_].store(t);
    // Release: a thief that sees the new bottom also sees the slot contents.
    bottom_.store(b + 1, std::memory_order_release);
    return true;
  }

  /// Owner only: newest task, or false when empty.
  bool pop(inline_task& out) noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    bottom_.store(b, std::memory_order_relaxed);
    // Orders the bottom decrement before reading top (Dekker with steal()).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return false;
    }
    slots_[static_cast<std::size_t>(b) & mask_].load(out);
    if (t == b) {  // last element: race thieves for it
      // Seq_cst: totally ordered with the thieves' CAS on top, so exactly
      // one of the owner and the thieves wins the last task.
      const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      return won;
    }
    return true;
  }

  /// Any core: oldest task, or false when empty or when another core won it.
  bool steal(inline_task& out) noexcept {
    // Acquire: pairs with the CAS that last advanced top (pop's or a thief's).
    std::int64_t t = top_.load(std::memory_order_acquire);
    // Orders reading top before bottom (Dekker with pop()).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // Acquire: pairs with push()'s release of bottom; the slot is written.
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return false;
    slots_[static_cast<std::size_t>(t) & mask_].load(out);
    // Seq_cst: totally ordered with pop()'s CAS and other thieves' (one
    // winner per index); failure relaxed, the slot read is then discarded.
    return top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                        std::memory_order_relaxed);
  }

  /// Approximate number of tasks (exact for the owner when no thief is active).
  std::int64_t size() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }

 private:
  static constexpr std::size_t words = sizeof(inline_task) / 8;
  struct slot {
    std::atomic<std::uint64_t> w[words];
    void store(const inline_task& t) noexcept {
      std::uint64_t tmp[words];
      std::memcpy(tmp, &t, sizeof t);
      for (std::size_t i = 0; i < words; ++i) w[i].store(tmp[i], std::memory_order_relaxed);
    }
    void load(inline_task& t) const noexcept {
      std::uint64_t tmp[words];
      for (std::size_t i = 0; i < words; ++i) tmp[i] = w[i].load(std::memory_order_relaxed);
      std::memcpy(&t, tmp, sizeof t);
    }
  };
  static_assert(sizeof(inline_task) % 8 == 0);

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  alignas(64) const std::size_t mask_;
  std::unique_ptr<slot[]> slots_;
};

}  // namespace shoal::detail
