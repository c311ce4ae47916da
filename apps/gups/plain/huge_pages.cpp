// Transparent huge pages for the GUPS table (see huge_pages.hpp).
#include "gups/plain/huge_pages.hpp"

#include <cstdlib>
#include <new>

#include <sys/mman.h>

namespace shoal_apps::gups {

namespace {
constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;
}

bool advise_huge_pages(void* p, std::size_t bytes) noexcept {
  const auto lo = (reinterpret_cast<std::uintptr_t>(p) + huge_page - 1) & ~(huge_page - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(huge_page - 1);
  if (hi <= lo) return false;
  return madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) == 0;
}

void free_deleter::operator()(std::uint64_t* p) const noexcept { std::free(p); }

word_array allocate_words(std::size_t n) {
  const std::size_t bytes = (n * sizeof(std::uint64_t) + huge_page - 1) & ~(huge_page - 1);
  void* p = std::aligned_alloc(huge_page, bytes == 0 ? huge_page : bytes);
  if (p == nullptr) throw std::bad_alloc();
  advise_huge_pages(p, bytes);
  return word_array(static_cast<std::uint64_t*>(p));
}

}  // namespace shoal_apps::gups
