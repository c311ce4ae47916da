// Unit tests of the plain parts of `shoal permutation`: the keyed
// permutation is a bijection of [0, n) with a working inverse, and the block
// layout's owner() (a multiply by a rounded reciprocal, then a correction)
// agrees with plain division, including block 1 and 64-bit indices.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "permutation/plain/keyed_permutation.hpp"
#include "permutation/plain/permutation_problem.hpp"

namespace {

using shoal_apps::permutation::block_layout;
using shoal_apps::permutation::keyed_permutation;

TEST(KeyedPermutation, IsABijectionWithItsInverse) {
  for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 5ULL, 16ULL, 17ULL, 1000ULL, 65537ULL}) {
    for (std::uint64_t key : {0ULL, 1ULL, 12345ULL}) {
      const keyed_permutation p(n, key);
      std::vector<bool> hit(n, false);
      for (std::uint64_t x = 0; x < n; ++x) {
        const std::uint64_t y = p(x);
        ASSERT_LT(y, n) << "n=" << n;
        ASSERT_FALSE(hit[y]) << "n=" << n << " x=" << x;
        hit[y] = true;
        ASSERT_EQ(p.inverse(y), x) << "n=" << n;
      }
    }
  }
}

TEST(KeyedPermutation, KeysGiveDifferentPermutations) {
  const keyed_permutation a(1000, 1), b(1000, 2);
  int same = 0;
  for (std::uint64_t x = 0; x < 1000; ++x) same += a(x) == b(x) ? 1 : 0;
  EXPECT_LT(same, 20);
}

TEST(KeyedPermutation, LargeDomainRoundTrips) {
  const std::uint64_t n = (std::uint64_t{1} << 40) + 12345;
  const keyed_permutation p(n, 7);
  for (std::uint64_t x = 0; x < n; x += n / 1000 + 1) {
    const std::uint64_t y = p(x);
    ASSERT_LT(y, n);
    ASSERT_EQ(p.inverse(y), x);
  }
}

TEST(BlockLayout, OwnerMatchesDivision) {
  for (std::uint64_t n : {1ULL, 2ULL, 7ULL, 100ULL, 100003ULL}) {
    for (int parts : {1, 2, 3, 4, 7, 64}) {
      const block_layout l(n, parts);
      for (std::uint64_t j = 0; j < n; ++j) {
        const int o = l.owner(j);
        ASSERT_GE(j, l.begin(o)) << n << " " << parts;
        ASSERT_LT(j, l.begin(o + 1)) << n << " " << parts;
      }
      ASSERT_EQ(l.begin(parts), n);
    }
  }
}

TEST(BlockLayout, OwnerOfLargeIndices) {
  const std::uint64_t n = std::uint64_t{1} << 40;
  for (int parts : {3, 5, 4096}) {
    const block_layout l(n, parts);
    const std::uint64_t block =
        (n + static_cast<std::uint64_t>(parts) - 1) / static_cast<std::uint64_t>(parts);
    for (std::uint64_t j = 0; j < n; j += n / 9973) {
      for (std::uint64_t d : {0ULL, 1ULL}) {
        const std::uint64_t k = j + d < n ? j + d : n - 1;
        ASSERT_EQ(static_cast<std::uint64_t>(l.owner(k)), k / block);
      }
    }
    ASSERT_EQ(static_cast<std::uint64_t>(l.owner(n - 1)), (n - 1) / block);
    ASSERT_EQ(static_cast<std::uint64_t>(l.owner(block - 1)), 0U);
    ASSERT_EQ(static_cast<std::uint64_t>(l.owner(block)), 1U);
  }
}

}  // namespace
