// The HPCC RandomAccess random stream: a 64-bit Galois LFSR over GF(2) with
// the polynomial x^64 + x^2 + x + 1 ("POLY = 0x7" in the HPCC specification).
//
// Element 0 of the stream is 1; element k+1 is element k shifted left by
// one, XORed with 0x7 when the bit shifted out was set. Read as a
// polynomial over GF(2), element k is x^k mod P(x), so hpcc_starts(n) can
// jump to element n in O(log n) squarings instead of n steps.
//
// A property of the stream: P(1) = 0 (four terms), so every element
// evaluated at x = 1 equals 1^k = 1, i.e. every element has an odd number of
// set bits. Values of even parity never occur in the stream (0 among them).
//
// Plain C++: shared by `shoal gups` and shoal-baseline-gups.
#pragma once

#include <cstdint>

namespace shoal_apps::gups {

/// The low terms of the HPCC polynomial (x^2 + x + 1; x^64 is implicit).
inline constexpr std::uint64_t hpcc_poly = 0x7;

/// The element after `r` in the stream: multiplication by x modulo P.
constexpr std::uint64_t hpcc_next(std::uint64_t r) noexcept {
  return (r << 1) ^ ((r >> 63) != 0 ? hpcc_poly : 0);
}

/// Element `n` of the stream (element 0 is 1), for any n >= 0: x^n mod P by
/// square-and-multiply (64 table lookups per squaring, one per bit of n).
/// Pure; no allocation.
std::uint64_t hpcc_starts(std::uint64_t n) noexcept;

/// Whether `v` can be an element of the stream by its parity alone: stream
/// elements always have an odd number of set bits (see the file comment).
constexpr bool hpcc_parity_ok(std::uint64_t v) noexcept { return __builtin_parityll(v) != 0; }

}  // namespace shoal_apps::gups
