// Unbounded FIFO of inline tasks for one core (no concurrency): a linked list
// of fixed-size chunks. Emptied chunks go to a free list and are reused, so a
// steady state allocates nothing.
#pragma once

#include "shoal/detail/inline_task.hpp"

#include <cstddef>

namespace shoal::detail {

class task_fifo {
 public:
  // One spare chunk up front: a core's first queued tasks do not allocate.
  task_fifo() : free_(new chunk) {}
  task_fifo(const task_fifo&) = delete;
  task_fifo& operator=(const task_fifo&) = delete;
  ~task_fifo() {
    release_list(head_);
    release_list(free_);
  }

  void push(const inline_task& t) {
    if (tail_ == nullptr || tail_end_ == chunk_tasks) append_chunk();
    tail_->tasks[tail_end_++] = t;
    ++size_;
  }

  bool pop(inline_task& out) noexcept {
    if (size_ == 0) return false;
    out = head_->tasks[head_begin_++];
    --size_;
    if (head_begin_ == chunk_tasks || size_ == 0) retire_head();
    return true;
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

 private:
  static constexpr std::size_t chunk_tasks = 112;  // about 8 KiB per chunk
  struct chunk {
    chunk* next = nullptr;
    inline_task tasks[chunk_tasks];
  };

  void append_chunk() {
    chunk* c = free_;
    if (c != nullptr) {
      free_ = c->next;
    } else {
      c = new chunk;
    }
    c->next = nullptr;
    if (tail_ != nullptr) {
      tail_->next = c;
    } else {
      head_ = c;
      head_begin_ = 0;
    }
    tail_ = c;
    tail_end_ = 0;
  }

  // Head chunk exhausted (or queue empty): recycle it.
  void retire_head() noexcept {
    chunk* c = head_;
    head_ = c->next;
    head_begin_ = 0;
    if (head_ == nullptr) tail_ = nullptr;
    c->next = free_;
    free_ = c;
  }

  static void release_list(chunk* c) {
    while (c != nullptr) {
      chunk* n = c->next;
      delete c;
      c = n;
    }
  }

  chunk* head_ = nullptr;
  chunk* tail_ = nullptr;
  chunk* free_ = nullptr;
  std::size_t head_begin_ = 0;
  std::size_t tail_end_ = 0;
  std::size_t size_ = 0;
};

}  // namespace shoal::detail
