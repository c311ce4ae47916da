// FIFO of workers linked through worker::next: the wait list of every
// synchronisation object. Single core, no allocation.
#pragma once

#include "shoal/detail/worker.hpp"

namespace shoal::detail {

class worker_list {
 public:
  bool empty() const noexcept { return head_ == nullptr; }

  void push(worker* w) noexcept {
    w->next = nullptr;
    if (tail_ != nullptr) {
      tail_->next = w;
    } else {
      head_ = w;
    }
    tail_ = w;
  }

  worker* pop() noexcept {
    worker* w = head_;
    if (w != nullptr) {
      head_ = w->next;
      if (head_ == nullptr) tail_ = nullptr;
      w->next = nullptr;
    }
    return w;
  }

 private:
  worker* head_ = nullptr;
  worker* tail_ = nullptr;
};

}  // namespace shoal::detail
