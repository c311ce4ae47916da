// The global heap of one process: one lazily committed mapping split into
// equal per-core segments. Allocation hands out the same offset range in
// every segment (symmetric), so a linear global address maps to the same
// local offset on whichever core owns it.
#pragma once

#include "shoal/detail/thread_safety.hpp"

#include <cstddef>
#include <map>

namespace shoal::detail {

class global_heap {
 public:
  /// `shared`: memory of mapped_bytes() made elsewhere (the node-shared
  /// segment of one_sided.cpp), used instead of a private mapping and not
  /// unmapped here.
  global_heap(std::size_t total_bytes, int cores, std::size_t block_bytes,
              char* shared = nullptr);
  /// The bytes a heap of these parameters maps (every core's segment).
  static std::size_t mapped_bytes(std::size_t total_bytes, int cores, std::size_t block_bytes);
  ~global_heap();
  global_heap(const global_heap&) = delete;
  global_heap& operator=(const global_heap&) = delete;

  /// Reserves `bytes_per_core` (rounded up to blocks) at one offset in every
  /// segment; returns the offset. Ends the job with a clear message when no
  /// free range is large enough.
  std::size_t allocate(std::size_t bytes_per_core, std::size_t bytes_requested) SHOAL_EXCLUDES(mu_);
  /// Frees a range returned by allocate(). Ends the job on an unknown offset.
  void free(std::size_t offset) SHOAL_EXCLUDES(mu_);

  char* base() const noexcept { return base_; }
  std::size_t segment_bytes() const noexcept { return segment_; }
  /// Largest free range per core.
  std::size_t largest_free() const SHOAL_EXCLUDES(mu_);

 private:
  char* base_ = nullptr;
  std::size_t mapped_ = 0;
  std::size_t segment_ = 0;
  std::size_t block_ = 0;
  bool owned_ = true;  // base_ is our mapping
  mutable annotated_mutex mu_;  // allocation is rare and off the hot path
  std::map<std::size_t, std::size_t> free_ SHOAL_GUARDED_BY(mu_);  // offset -> bytes
  std::map<std::size_t, std::size_t> used_ SHOAL_GUARDED_BY(mu_);  // offset -> bytes
};

global_heap& heap() noexcept;

}  // namespace shoal::detail
