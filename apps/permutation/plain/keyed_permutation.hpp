// A seeded pseudo-random permutation of [0, n), computable pointwise in
// O(1) expected time, with its inverse: the data and perm arrays of
// `shoal permutation` are filled from it without communication, and the
// validation inverts them independently of the timed phase.
//
// Construction: a 4-round balanced Feistel network over 2h-bit words (the
// smallest even width with 2^(2h) >= n, at least 2 bits), each round
// function a keyed 64-bit mixer cut to h bits, so the network is a
// bijection of [0, 2^(2h)); cycle-walking (apply it again while the result
// is >= n) restricts it to a bijection of [0, n). As 2^(2h) < 4n, a walk
// takes at most 4 steps on average. The inverse walks the inverse network.
//
// Plain C++, header-only (the hot loops inline it).
#pragma once

#include <array>
#include <cstdint>

namespace shoal_apps::permutation {

class keyed_permutation {
 public:
  /// The permutation of [0, n) (n >= 1) selected by `key`.
  keyed_permutation(std::uint64_t n, std::uint64_t key) noexcept : n_(n) {
    int bits = 2;
    while (bits < 64 && (std::uint64_t{1} << bits) < n) ++bits;
    half_ = (bits + 1) / 2;
    mask_ = (std::uint64_t{1} << half_) - 1;
    std::uint64_t s = key;
    for (std::uint64_t& k : keys_) k = mix(s += 0x9e3779b97f4a7c15ULL);
  }

  /// The image of x in [0, n).
  std::uint64_t operator()(std::uint64_t x) const noexcept {
    do x = encrypt(x);
    while (x >= n_);
    return x;
  }

  /// The x with (*this)(x) == y, for y in [0, n).
  std::uint64_t inverse(std::uint64_t y) const noexcept {
    do y = decrypt(y);
    while (y >= n_);
    return y;
  }

  std::uint64_t size() const noexcept { return n_; }

 private:
  static constexpr int rounds = 4;

  /// SplitMix64's finaliser: a bijective 64-bit mixer.
  static std::uint64_t mix(std::uint64_t z) noexcept {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t f(std::uint64_t half, int round) const noexcept {
    return mix(half ^ keys_[static_cast<std::size_t>(round)]) & mask_;
  }

  std::uint64_t encrypt(std::uint64_t x) const noexcept {
    std::uint64_t l = x >> half_;
    std::uint64_t r = x & mask_;
    for (int k = 0; k < rounds; ++k) {
      const std::uint64_t t = l ^ f(r, k);
      l = r;
      r = t;
    }
    return (l << half_) | r;
  }

  std::uint64_t decrypt(std::uint64_t y) const noexcept {
    std::uint64_t l = y >> half_;
    std::uint64_t r = y & mask_;
    for (int k = rounds - 1; k >= 0; --k) {
      const std::uint64_t t = r ^ f(l, k);
      r = l;
      l = t;
    }
    return (l << half_) | r;
  }

  std::uint64_t n_;
  int half_ = 1;
  std::uint64_t mask_ = 1;
  std::array<std::uint64_t, rounds> keys_{};
};

}  // namespace shoal_apps::permutation
