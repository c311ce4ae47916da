// The splittable random generator of the UTS benchmark (Olivier et al.,
// LCPC 2006), on OpenSSL's SHA-1. Shared by every UTS search; no shoal here.
//
// Every tree node owns a 20-byte state. The root's state is
// SHA1(16 zero bytes || seed as 4 big-endian bytes); child i of a node has
// state SHA1(parent state || i as 4 big-endian bytes). A node's random value
// is the last 4 bytes of its state read big-endian, AND 0x7fffffff, and as a
// probability that value / 2^31. So a node's subtree depends only on its own
// state and depth: any core or process can expand any node, in any order, and
// every search sees the same tree.
#pragma once

#include <array>
#include <cstdint>

namespace shoal_apps::uts {

/// A node's generator state. Trivially copyable: it travels inside tasks.
struct rng_state {
  std::array<std::uint8_t, 20> bytes;
};

/// State of the root of the tree with seed `seed`.
rng_state root_state(std::uint32_t seed);

/// State of child `i` of the node with state `parent`. One SHA-1 compression
/// (about 70 ns); thread-safe.
rng_state child_state(const rng_state& parent, std::uint32_t i);

/// The node's random value in [0, 2^31).
inline std::uint32_t random_value(const rng_state& s) {
  const auto& b = s.bytes;
  const std::uint32_t v = (std::uint32_t{b[16]} << 24) | (std::uint32_t{b[17]} << 16) |
                          (std::uint32_t{b[18]} << 8) | std::uint32_t{b[19]};
  return v & 0x7fffffffU;
}

/// The node's random value as a probability in [0, 1).
inline double probability(const rng_state& s) {
  return static_cast<double>(random_value(s)) / 2147483648.0;
}

}  // namespace shoal_apps::uts
