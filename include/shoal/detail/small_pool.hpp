// Per-core free list of fixed-size blocks (future states and the like).
// Owned by the core's scheduler, so it lives until finalize(). Grows by
// chunks; blocks are recycled, never returned to the system before then, so
// a steady state allocates nothing. Used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace shoal::detail {

class small_pool {
 public:
  static constexpr std::size_t block_bytes = 192;

  void* get() {
    if (free_ == nullptr) grow();
    node* n = free_;
    free_ = n->next;
    return n;
  }

  void put(void* p) noexcept {
    auto* n = static_cast<node*>(p);
    n->next = free_;
    free_ = n;
  }

  ~small_pool() {
    while (chunks_ != nullptr) {
      node* next = chunks_->next;
      std::free(chunks_);
      chunks_ = next;
    }
  }

 private:
  struct node {
    node* next;
  };
  static constexpr std::size_t chunk_blocks = 64;

  void grow() {
    // The first block of a chunk links the chunk list.
    auto* mem = static_cast<char*>(std::aligned_alloc(64, block_bytes * (chunk_blocks + 1)));
    if (mem == nullptr) throw std::bad_alloc();
    auto* head = reinterpret_cast<node*>(mem);
    head->next = chunks_;
    chunks_ = head;
    for (std::size_t i = 1; i <= chunk_blocks; ++i) put(mem + i * block_bytes);
  }

  node* free_ = nullptr;
  node* chunks_ = nullptr;
};

}  // namespace shoal::detail
