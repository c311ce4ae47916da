// Allocation in the global heap.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/global_ptr.hpp"

#include <cstddef>
#include <cstdint>

namespace shoal {

namespace detail {
/// Symmetric allocation of `bytes_per_core` on every core; returns the
/// per-core offset. Fatal (with sizes and the flag to raise) when exhausted.
std::size_t heap_allocate(std::size_t bytes_per_core, std::size_t bytes_requested);
void heap_free(std::size_t offset);
}  // namespace detail

/// Allocates `n` elements of T as a block-cyclic array over every core of the
/// job and returns a linear pointer to element 0 (on core 0). Elements are
/// not constructed (the memory is zero on first touch). T's size must divide
/// --block-bytes so that no element straddles two cores. Any task; blocking
/// (one round trip to the allocator), collective-free. Ends the job with the
/// requested size, the size left and the flag to raise when the heap is
/// exhausted.
template <class T>
global_ptr<T> global_alloc(std::int64_t n) {
  SHOAL_CHECK_ON_CORE("shoal::global_alloc");
  const auto bb = static_cast<std::size_t>(detail::g_info.block_bytes);
  SHOAL_CHECK(n >= 0, "global_alloc: negative element count {}", n);
  if (sizeof(T) > bb || bb % sizeof(T) != 0)
    detail::fatal_user(fmt::format(
        "global_alloc: an element of {} bytes does not divide the block of {} bytes, so elements "
        "would straddle cores; pad the type to a divisor of the block or raise --block-bytes",
        sizeof(T), bb));
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::size_t>(n), sizeof(T), &bytes) ||
      bytes > (std::size_t{1} << 62))
    detail::fatal_user(fmt::format(
        "global_alloc: {} elements of {} bytes exceed the addressable global heap; raise "
        "--heap-mb only if that is really meant",
        n, sizeof(T)));
  const std::size_t blocks = (bytes + bb - 1) / bb;
  const auto cores = static_cast<std::size_t>(detail::g_info.total_cores);
  const std::size_t per_core = (blocks + cores - 1) / cores * bb;
  const std::size_t offset = detail::heap_allocate(per_core, bytes);
  return global_ptr<T>::make_linear(static_cast<std::uint64_t>(offset) * cores);
}

/// Frees an array from global_alloc. Any task.
template <class T>
void global_free(global_ptr<T> p) {
  SHOAL_CHECK_ON_CORE("shoal::global_free");
  SHOAL_CHECK(p.is_linear(), "global_free: {} was not returned by global_alloc", p.to_string());
  detail::heap_free(static_cast<std::size_t>(p.linear_address()) /
                    static_cast<std::size_t>(detail::g_info.total_cores));
}

}  // namespace shoal
