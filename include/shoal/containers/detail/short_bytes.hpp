// Copies and comparisons of a few bytes of run-time length (string keys):
// up to 24 bytes by overlapping 8-byte words, inline, instead of a call to
// memcpy or memcmp (whose dispatch cost a 16-byte key ~12 instructions a
// call); longer runs go to memcpy and memcmp. Neither reads or writes
// outside [p, p + n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shoal::containers_detail {

inline std::uint64_t load_word(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void store_word(char* p, std::uint64_t v) noexcept { std::memcpy(p, &v, 8); }

/// Copies n bytes from `from` to `to` (not overlapping).
inline void copy_bytes(char* to, const char* from, std::size_t n) noexcept {
  if (n >= 8 && n <= 24) {
    const std::uint64_t a = load_word(from);
    const std::uint64_t b = load_word(from + n - 8);
    if (n > 16) store_word(to + 8, load_word(from + 8));
    store_word(to, a);
    store_word(to + n - 8, b);
  } else if (n != 0) {
    std::memcpy(to, from, n);
  }
}

/// Whether the n bytes at a and at b are equal.
inline bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
  if (n >= 8 && n <= 24) {
    std::uint64_t d = (load_word(a) ^ load_word(b)) | (load_word(a + n - 8) ^ load_word(b + n - 8));
    if (n > 16) d |= load_word(a + 8) ^ load_word(b + 8);
    return d == 0;
  }
  return n == 0 || std::memcmp(a, b, n) == 0;
}

}  // namespace shoal::containers_detail
