// Transparent huge pages for the GUPS table.
//
// Every GUPS update touches a random word of a table far larger than the
// TLB reaches with 4 KiB pages, so without huge pages almost every update
// pays a page walk on top of its cache miss. Both `shoal gups` and the
// baseline ask for huge pages the same way, so neither has an edge the
// other lacks. Plain C++ (Linux madvise; a no-op where it is refused).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace shoal_apps::gups {

/// Asks the kernel to back [p, p + bytes) with transparent huge pages
/// (madvise MADV_HUGEPAGE on the 2 MiB-aligned pages inside the range).
/// Call before the memory is first touched. Returns whether it was accepted.
bool advise_huge_pages(void* p, std::size_t bytes) noexcept;

/// An array of `n` words aligned to 2 MiB and advised for huge pages, not
/// yet touched (values indeterminate). Throws std::bad_alloc.
struct free_deleter {
  void operator()(std::uint64_t* p) const noexcept;
};
using word_array = std::unique_ptr<std::uint64_t[], free_deleter>;
word_array allocate_words(std::size_t n);

}  // namespace shoal_apps::gups
