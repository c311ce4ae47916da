// The hash behind BCL's keyed structures (hash_map, bloom_filter): a 64-bit
// mix of an object's bytes, the same on every process of the job (so every
// core computes the same home for a key).
#pragma once

#include <cstddef>
#include <cstdint>

namespace shoal::detail {

/// FNV-1a over the bytes, then a splitmix64 finaliser so that nearby
/// integer keys land far apart. `seed` gives independent hashes of one key.
inline std::uint64_t bcl_hash_bytes(const void* p, std::size_t n, std::uint64_t seed = 0) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t h = 0xcbf29ce484222325ULL ^ (seed * 0x9e3779b97f4a7c15ULL);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace shoal::detail
