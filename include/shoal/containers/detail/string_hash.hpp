// The hash of std::string keys in the keyed containers (map, set,
// counting_set with the default hash): a multiply-fold hash over 16-byte
// blocks, inline, in place of std::hash<std::string> (libstdc++'s
// out-of-line _Hash_bytes, ~48 instructions for a 16-byte key against ~15
// here; the key is hashed once per operation, on the sender). Equal
// strings hash equal on every process (the same binary); the value is not
// std::hash's, so a key's owner differs from what std::hash would give.
//
// Each 64-bit half of a block is offset by a constant, the two are
// multiplied into 128 bits and the halves of the product xored (a
// "multiply-fold", which mixes every input bit into the middle output
// bits); the length enters the last fold. Keys up to 16 bytes take one
// fold, longer keys one per 16 bytes. Not for adversarial inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace shoal::containers_detail {

namespace string_hash_detail {
inline constexpr std::uint64_t k0 = 0xa0761d6478bd642fULL;
inline constexpr std::uint64_t k1 = 0xe7037ed1a0b428dbULL;
inline constexpr std::uint64_t k2 = 0x8ebc6af09c88c6e3ULL;

inline std::uint64_t fold(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ using u128 = unsigned __int128;  // -Wpedantic: a GCC/Clang extension
  const u128 p = static_cast<u128>(a) * b;
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}
inline std::uint64_t load8(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline std::uint64_t load4(const char* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
}  // namespace string_hash_detail

/// The containers' hash of a string's characters.
inline std::uint64_t string_hash(std::string_view s) noexcept {
  using namespace string_hash_detail;
  const char* p = s.data();
  std::size_t n = s.size();
  std::uint64_t seed = k0;
  std::uint64_t a;
  std::uint64_t b;
  if (n <= 16) [[likely]] {
    if (n >= 8) {  // the first and the last 8 bytes (overlapping below 16)
      a = load8(p);
      b = load8(p + n - 8);
    } else if (n >= 4) {
      a = load4(p);
      b = load4(p + n - 4);
    } else if (n > 0) {
      a = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
          (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
          static_cast<unsigned char>(p[n - 1]);
      b = 0;
    } else {
      a = b = 0;
    }
  } else {
    for (; n > 16; n -= 16, p += 16) seed = fold(load8(p) ^ k1, load8(p + 8) ^ seed);
    a = load8(p + n - 16);  // the last 16 bytes (overlapping the last block)
    b = load8(p + n - 8);
    n = s.size();
  }
  return fold(k1 ^ n, fold(a ^ k1, b ^ seed) ^ k2);
}

}  // namespace shoal::containers_detail
