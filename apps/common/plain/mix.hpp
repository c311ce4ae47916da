// Counter-based randomness for the apps' inputs (graphs, index streams,
// string pools, walks): a 64-bit mixer (the splitmix64 finaliser) keyed by a
// seed, and a seeded bijection of [0, 2^bits) built from invertible steps.
// Everything is a pure function of its arguments, so any core or rank
// reproduces any part of the input alone. Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>

namespace shoal_apps {

/// Bijective 64-bit finaliser with full avalanche (splitmix64's output step).
inline std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// A random 64-bit word determined by (seed, stream, counter) only.
inline std::uint64_t keyed_random(std::uint64_t seed, std::uint64_t stream,
                                  std::uint64_t counter) noexcept {
  return mix64(mix64(seed ^ (stream * 0x9e3779b97f4a7c15ULL)) + counter * 0xd1b54a32d192ed03ULL);
}

/// A seeded permutation of [0, 2^bits), bits in [1, 63]. Each round is
/// x -> x * odd + key (mod 2^bits), a bijection, then x ^= x >> shift, also a
/// bijection; the shift carries high bits down so low bits depend on all.
class bijection {
 public:
  bijection(int bits, std::uint64_t seed, std::uint64_t stream) noexcept
      : mask_(bits >= 64 ? ~0ULL : (1ULL << bits) - 1), shift_(bits / 2 > 0 ? bits / 2 : 1) {
    for (int r = 0; r < rounds; ++r) {
      mul_[r] = keyed_random(seed, stream, 2 * static_cast<std::uint64_t>(r)) | 1;
      add_[r] = keyed_random(seed, stream, 2 * static_cast<std::uint64_t>(r) + 1);
    }
  }

  std::uint64_t operator()(std::uint64_t x) const noexcept {
    for (int r = 0; r < rounds; ++r) {
      x = (x * mul_[r] + add_[r]) & mask_;
      x ^= x >> shift_;
    }
    return x;
  }

 private:
  static constexpr int rounds = 4;
  std::uint64_t mask_;
  int shift_;
  std::uint64_t mul_[rounds];
  std::uint64_t add_[rounds];
};

/// Bits needed to number n values (at least 1).
inline int bits_for(std::uint64_t n) noexcept {
  int b = 1;
  while (b < 63 && (1ULL << b) < n) ++b;
  return b;
}

}  // namespace shoal_apps
