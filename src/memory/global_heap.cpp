#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/delegate.hpp"
#include "shoal/runtime.hpp"

#include <cerrno>
#include <cstring>

#include <sys/mman.h>

#include "memory/global_heap_impl.hpp"

namespace shoal::detail {

namespace {
std::size_t segment_of(std::size_t total_bytes, int cores, std::size_t block_bytes) {
  std::size_t segment = total_bytes / static_cast<std::size_t>(cores) / 4096 * 4096;
  if (segment < block_bytes) segment = (block_bytes + 4095) / 4096 * 4096;
  return segment;
}
}  // namespace

std::size_t global_heap::mapped_bytes(std::size_t total_bytes, int cores,
                                      std::size_t block_bytes) {
  return segment_of(total_bytes, cores, block_bytes) * static_cast<std::size_t>(cores);
}

global_heap::global_heap(std::size_t total_bytes, int cores, std::size_t block_bytes,
                         char* shared)
    : block_(block_bytes) {
  segment_ = segment_of(total_bytes, cores, block_bytes);
  mapped_ = segment_ * static_cast<std::size_t>(cores);
  owned_ = shared == nullptr;
  void* p = shared != nullptr ? shared : mmap(nullptr, mapped_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    fatal_user(fmt::format("cannot reserve the global heap of {} MiB ({}); lower --heap-mb",
                           mapped_ >> 20, std::strerror(errno)));
  base_ = static_cast<char*>(p);
  free_[0] = segment_;
  g_info.heap_base = base_;
  g_info.segment_bytes = segment_;
}

global_heap::~global_heap() {
  if (base_ != nullptr && owned_) munmap(base_, mapped_);
}

std::size_t global_heap::largest_free() const {
  lock_guard lock(mu_);
  std::size_t best = 0;
  for (const auto& [off, len] : free_) best = std::max(best, len);
  return best;
}

std::size_t global_heap::allocate(std::size_t bytes_per_core, std::size_t bytes_requested) {
  const std::size_t need = std::max(block_, (bytes_per_core + block_ - 1) / block_ * block_);
  {
    lock_guard lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < need) continue;
      const std::size_t off = it->first;
      const std::size_t left = it->second - need;
      free_.erase(it);
      if (left > 0) free_[off + need] = left;
      used_[off] = need;
      return off;
    }
  }
  fatal_user(fmt::format(
      "global heap exhausted: global_alloc of {} bytes needs {} bytes on each of {} cores, but the "
      "largest free range is {} bytes per core (segment {} bytes per core); raise --heap-mb "
      "(now {})",
      bytes_requested, need, g_info.total_cores, largest_free(), segment_,
      current_config().heap_mb));
}

void global_heap::free(std::size_t offset) {
  lock_guard lock(mu_);
  auto it = used_.find(offset);
  SHOAL_CHECK(it != used_.end(), "global_free of a pointer global_alloc did not return");
  std::size_t off = it->first;
  std::size_t len = it->second;
  used_.erase(it);
  // Coalesce with the neighbours.
  auto next = free_.lower_bound(off);
  if (next != free_.end() && next->first == off + len) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      off = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  free_[off] = len;
}

}  // namespace shoal::detail

// Rank 0's allocator hands out offsets for the whole job: every process maps
// the same segment size per core, so an offset chosen there is valid on
// every core of every rank. Other ranks ask it by delegate (one round trip).
namespace shoal::detail {
std::size_t heap_allocate(std::size_t bytes_per_core, std::size_t bytes_requested) {
  if (g_info.rank == 0) return heap().allocate(bytes_per_core, bytes_requested);
  return delegate::call(0, [bytes_per_core, bytes_requested] {
    return heap().allocate(bytes_per_core, bytes_requested);
  });
}
void heap_free(std::size_t offset) {
  if (g_info.rank == 0) return heap().free(offset);
  delegate::call(0, [offset] { heap().free(offset); });
}
}  // namespace shoal::detail
