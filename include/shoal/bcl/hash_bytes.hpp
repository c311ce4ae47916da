// The hash behind BCL's keyed structures (hash_map, bloom_filter): a 64-bit
// mix of an object's bytes, the same on every process of the job (so every
// core computes the same home for a key).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shoal::detail {

/// Each 8-byte word XORed in, the words before it mixed by a
/// multiply-xorshift step (FNV-1a per byte for a tail of fewer than 8),
/// then a splitmix64 finaliser, which alone spreads a one-word key (nearby
/// integer keys land far apart). `seed` gives independent hashes of one
/// key. A word at a time: FNV-1a over every byte of an 8-byte key was a
/// chain of 8 dependent multiplies, about 30 instructions of a buffered
/// hash_map insert's 127 (callgrind, bench/results/bcl.md); now 13.
inline std::uint64_t bcl_hash_bytes(const void* p, std::size_t n, std::uint64_t seed = 0) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t h = 0xcbf29ce484222325ULL ^ (seed * 0x9e3779b97f4a7c15ULL);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if (i > 0) {
      h *= 0x9e3779b97f4a7c15ULL;
      h ^= h >> 32;
    }
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    h ^= w;
  }
  for (; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace shoal::detail
