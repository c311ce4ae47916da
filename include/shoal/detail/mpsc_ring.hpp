// Bounded multi-producer single-consumer ring of pointers (Vyukov's
// sequence-numbered cells). Producers claim a cell with a CAS on the tail and
// publish it by advancing the cell's sequence; the single consumer reads in
// order. No locks; try_push fails only when the ring is full.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace shoal::detail {

template <class T>
class mpsc_ring {
 public:
  explicit mpsc_ring(std::size_t capacity) {
    std::size_t cap = 2;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    cells_.reset(new cell[cap]);
    for (std::size_t i = 0; i < cap; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }

  /// Any thread. False when full.
  bool try_push(T* value) noexcept {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      // Acquire: pairs with the consumer's release that freed this cell.
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto diff = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = value;
          // Release: publishes value to the consumer.
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  /// Consumer only. Null when empty.
  T* try_pop() noexcept {
    cell& c = cells_[head_ & mask_];
    // Acquire: pairs with the producer's release of value.
    if (c.seq.load(std::memory_order_acquire) != head_ + 1) return nullptr;
    T* v = c.value;
    // Release: the cell may be reused by a producer one lap later.
    c.seq.store(head_ + mask_ + 1, std::memory_order_release);
    ++head_;
    return v;
  }

  /// Consumer only: whether a value is ready to pop.
  bool ready() const noexcept {
    // Acquire: pairs with the producer's release, as in try_pop().
    return cells_[head_ & mask_].seq.load(std::memory_order_acquire) == head_ + 1;
  }

  std::size_t capacity() const noexcept { return mask_ + 1; }

 private:
  struct cell {
    std::atomic<std::size_t> seq;
    T* value;
  };
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::size_t head_ = 0;
  std::size_t mask_ = 0;
  std::unique_ptr<cell[]> cells_;
};

}  // namespace shoal::detail
