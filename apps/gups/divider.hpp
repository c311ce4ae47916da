// Division by a number fixed at run time (the job's core count) without a
// divide instruction: every GUPS update needs the home core of its word
// (block mod cores) and its place there (block / cores), and a hardware
// divide costs more than the rest of the address arithmetic together.
//
// Method (Lemire, Kaser and Kurz, "Faster remainder by direct computation",
// 2019): with c = ceil(2^64 / d), floor(x / d) = floor(c * x / 2^64) for
// every x < 2^(64 - ceil(log2 d)). Powers of two use a shift (which also
// covers d = 1, where c would not fit in 64 bits).
#pragma once

#include <bit>
#include <cstdint>

namespace shoal_apps::gups {

class divider {
  __extension__ using u128 = unsigned __int128;  // GCC/Clang; __extension__ keeps -Wpedantic quiet

 public:
  divider() = default;
  /// Divides by `d` >= 1. Exact for numerators below limit_bits().
  explicit divider(std::uint32_t d) noexcept
      : magic_(std::has_single_bit(d) ? 0 : ~std::uint64_t{0} / d + 1),
        d_(d),
        shift_(static_cast<std::uint8_t>(std::countr_zero(d))) {}

  std::uint64_t quotient(std::uint64_t x) const noexcept {
    if (magic_ == 0) return x >> shift_;
    return static_cast<std::uint64_t>((static_cast<u128>(magic_) * x) >> 64);
  }
  std::uint64_t remainder(std::uint64_t x) const noexcept { return x - quotient(x) * d_; }

  /// Numerators must be below 2^limit_bits().
  int limit_bits() const noexcept { return 64 - static_cast<int>(std::bit_width(d_ - 1)); }

 private:
  std::uint64_t magic_ = 0;  // ceil(2^64 / d); 0 for powers of two
  std::uint32_t d_ = 1;
  std::uint8_t shift_ = 0;
};

}  // namespace shoal_apps::gups
