// Ready queue of one core: a growable ring of runnable workers. A ring (not a
// linked list) lets the scheduler prefetch the records and saved contexts of
// the workers a few places ahead without chasing pointers (Grappa 3.1).
#pragma once

#include <cstddef>
#include <memory>

#include "shoal/detail/worker.hpp"

namespace shoal::detail {

class ready_queue {
 public:
  ready_queue() { grow(64); }

  void push(worker* w) {
    if (size_ == cap_) grow(cap_ * 2);
    ring_[(head_ + size_) & (cap_ - 1)] = w;
    ++size_;
  }

  worker* pop() noexcept {
    if (size_ == 0) return nullptr;
    worker* w = ring_[head_];
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    return w;
  }

  /// Two-stage prefetch: the record of the worker `2*d` ahead (so its `ctx`
  /// field is cached by the time we need it) and the saved context on the
  /// stack of the worker `d` ahead.
  void prefetch_ahead() const noexcept {
    constexpr std::size_t d = 4;
    if (size_ > 2 * d) __builtin_prefetch(ring_[(head_ + 2 * d) & (cap_ - 1)], 1);
    if (size_ > d) {
      const worker* w = ring_[(head_ + d) & (cap_ - 1)];
      __builtin_prefetch(w->ctx, 1);
      __builtin_prefetch(static_cast<const char*>(w->ctx) + 64, 1);
    }
  }

  /// Makes room for `n` workers up front, so pushes never allocate later.
  void reserve(std::size_t n) {
    std::size_t c = cap_;
    while (c < n) c *= 2;
    if (c != cap_) grow(c);
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  void grow(std::size_t cap) {
    std::unique_ptr<worker*[]> r(new worker*[cap]);
    for (std::size_t i = 0; i < size_; ++i) r[i] = ring_[(head_ + i) & (cap_ - 1)];
    ring_ = std::move(r);
    cap_ = cap;
    head_ = 0;
  }

  std::unique_ptr<worker*[]> ring_;
  std::size_t cap_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace shoal::detail
