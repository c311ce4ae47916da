// Ready queue of one core: a growable ring of runnable workers. A ring (not a
// linked list) lets the scheduler prefetch the records and saved contexts of
// the workers a few places ahead without chasing pointers (Grappa 3.1).
#pragma once

#include <cstddef>
#include <memory>

#include "tasks/worker_record.hpp"

namespace shoal::detail {

class ready_queue {
 public:
  ready_queue() { grow(64); }

  void push(worker_record* w) {
    if (size_ == cap_) grow(cap_ * 2);
    ring_[(head_ + size_) & (cap_ - 1)] = w;
    ++size_;
  }

  worker_record* pop() noexcept {
    if (size_ == 0) return nullptr;
    worker_record* w = ring_[head_];
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    return w;
  }

  /// Prefetches what the worker `d` places ahead touches when it resumes:
  /// its record at the top of its stack and the frames just below it, down
  /// to where it saved its registers. The depth is predicted from the worker
  /// that just ran, so no line of the future worker is demand-loaded here
  /// (a demand miss would stall the switch we are making).
  void prefetch_ahead(std::size_t depth) const noexcept {
    constexpr std::size_t d = 4;
    if (size_ <= d) return;
    const char* top = reinterpret_cast<const char*>(ring_[(head_ + d) & (cap_ - 1)] + 1);
    const char* low = top - sizeof(worker_record) - (depth < 1024 ? depth : 1024);
    for (const char* p = low; p < top; p += 64) __builtin_prefetch(p, 1);
    if (size_ > 4 * d) {
      // A real (but unused) load further ahead: unlike a prefetch it is
      // never dropped on a TLB miss, so the page walk for that worker's stack
      // starts early; out-of-order execution does not wait for it.
      const auto* far = reinterpret_cast<const volatile char*>(ring_[(head_ + 4 * d) & (cap_ - 1)]);
      (void)*far;
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
    std::unique_ptr<worker_record*[]> r(new worker_record*[cap]);
    for (std::size_t i = 0; i < size_; ++i) r[i] = ring_[(head_ + i) & (cap_ - 1)];
    ring_ = std::move(r);
    cap_ = cap;
    head_ = 0;
  }

  std::unique_ptr<worker_record*[]> ring_;
  std::size_t cap_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace shoal::detail
