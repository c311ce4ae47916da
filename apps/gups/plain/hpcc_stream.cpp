// Jump-ahead in the HPCC stream: element n = x^n mod P(x) over GF(2).
#include "gups/plain/hpcc_stream.hpp"

#include <array>
#include <bit>

namespace shoal_apps::gups {

namespace {

// Squaring over GF(2) has no cross terms ((a + b)^2 = a^2 + b^2), so the
// square of any element is the XOR of x^(2j) mod P over its set bits j:
// these 64 values are all a squaring needs.
constexpr std::array<std::uint64_t, 64> make_squares() {
  std::array<std::uint64_t, 64> s{};
  std::uint64_t t = 1;  // x^0
  for (std::uint64_t& v : s) {
    v = t;
    t = hpcc_next(hpcc_next(t));  // times x^2
  }
  return s;
}

constexpr std::array<std::uint64_t, 64> squares = make_squares();

std::uint64_t square(std::uint64_t a) noexcept {
  std::uint64_t s = 0;
  while (a != 0) {
    s ^= squares[static_cast<std::size_t>(std::countr_zero(a))];
    a &= a - 1;
  }
  return s;
}

}  // namespace

std::uint64_t hpcc_starts(std::uint64_t n) noexcept {
  // Left to right over the bits of n: r = x^(bits seen so far); each new bit
  // doubles the exponent (a squaring) and adds the bit (one step).
  std::uint64_t r = 1;
  for (int bit = 63 - std::countl_zero(n); bit >= 0; --bit) {
    r = square(r);
    if (((n >> bit) & 1) != 0) r = hpcc_next(r);
  }
  return r;
}

}  // namespace shoal_apps::gups
