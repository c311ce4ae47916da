// Unit tests of the pieces of `shoal gups` that need no runtime: the HPCC
// stream and its jump-ahead, the split of the updates, the divider and the
// apply queue. Each is checked against an independent reference: stepping
// the LFSR one element at a time, values derived by hand from the
// polynomial, HPCC's published period, plain / and %.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "gups/apply_queue.hpp"
#include "gups/divider.hpp"
#include "gups/plain/gups_problem.hpp"
#include "gups/plain/hpcc_stream.hpp"

namespace {

using namespace shoal_apps::gups;

TEST(HpccStream, StartsMatchesSteppingFromOne) {
  // Every n up to 5000, then checkpoints up to 2^20 steps.
  std::uint64_t r = 1;
  for (std::uint64_t n = 0; n <= (std::uint64_t{1} << 20); ++n) {
    if (n <= 5000 || n % 7919 == 0 || (n & (n - 1)) == 0) {
      ASSERT_EQ(hpcc_starts(n), r) << "n=" << n;
    }
    r = hpcc_next(r);
  }
}

TEST(HpccStream, KnownValuesFromThePolynomial) {
  // x^n mod x^64 + x^2 + x + 1 over GF(2), worked out by hand: x^64 = x^2 +
  // x + 1; x^128 = (x^2 + x + 1)^2 = x^4 + x^2 + 1; x^192 = x^128 * x^64 =
  // x^6 + x^5 + x^3 + x + 1; x^256 = (x^4 + x^2 + 1)^2 = x^8 + x^4 + 1.
  EXPECT_EQ(hpcc_starts(0), 0x1u);
  EXPECT_EQ(hpcc_starts(1), 0x2u);
  EXPECT_EQ(hpcc_starts(63), 0x8000000000000000u);
  EXPECT_EQ(hpcc_starts(64), 0x7u);
  EXPECT_EQ(hpcc_starts(65), 0xEu);
  EXPECT_EQ(hpcc_starts(128), 0x15u);
  EXPECT_EQ(hpcc_starts(192), 0x6Bu);
  EXPECT_EQ(hpcc_starts(256), 0x111u);
}

TEST(HpccStream, HpccPeriodReturnsToOne) {
  // HPCC's RandomAccess gives the stream's period as 1317624576693539401.
  constexpr std::uint64_t period = 1317624576693539401ULL;
  EXPECT_EQ(hpcc_starts(period), 1u);
  EXPECT_EQ(hpcc_starts(period + 5), hpcc_starts(5));
}

TEST(HpccStream, JumpsComposeAtLargeOffsets) {
  // starts(n + k) is k steps after starts(n), for n far beyond any loop.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint64_t n = rng() >> 20;
    std::uint64_t r = hpcc_starts(n);
    for (int k = 1; k <= 130; ++k) r = hpcc_next(r);
    EXPECT_EQ(hpcc_starts(n + 130), r) << "n=" << n;
  }
}

TEST(HpccStream, EveryElementHasOddParity) {
  // The property the channel's in-band markers rely on.
  std::uint64_t r = 1;
  for (int k = 0; k < 1'000'000; ++k, r = hpcc_next(r)) ASSERT_TRUE(hpcc_parity_ok(r)) << k;
  EXPECT_FALSE(hpcc_parity_ok(0));
  EXPECT_FALSE(hpcc_parity_ok(3));
}

TEST(GupsProblem, SharesCoverEveryUpdateOnce) {
  for (const std::int64_t total :
       {std::int64_t{0}, std::int64_t{7}, std::int64_t{4} << 20, (std::int64_t{4} << 40) + 3}) {
    for (const int n : {1, 2, 3, 7, 64, 1000}) {
      EXPECT_EQ(share_begin(total, 0, n), 0);
      EXPECT_EQ(share_begin(total, n, n), total);
      for (int p = 0; p < n; ++p) {
        const std::int64_t size = share_begin(total, p + 1, n) - share_begin(total, p, n);
        EXPECT_GE(size, total / n);
        EXPECT_LE(size, total / n + 1);
      }
    }
  }
}

TEST(GupsProblem, RejectsBadSizes) {
  EXPECT_THROW(make_problem(gups_options{0}, 1, 0, ""), std::exception);
  EXPECT_THROW(make_problem(gups_options{41}, 1, 0, ""), std::exception);
  EXPECT_THROW(make_problem(gups_options{20}, 1, 1024, "--heap-mb"), std::exception);
  const gups_problem p = make_problem(gups_options{20}, 2, 0, "");
  EXPECT_EQ(p.table_words, 1 << 20);
  EXPECT_EQ(p.updates, 4 << 20);
  EXPECT_EQ(p.mask, (1u << 20) - 1);
}

TEST(Divider, MatchesHardwareDivision) {
  std::mt19937_64 rng(11);
  for (std::uint32_t d = 1; d <= 300; ++d) {
    const divider div(d);
    for (int k = 0; k < 2000; ++k) {
      const std::uint64_t x = k < 1000 ? static_cast<std::uint64_t>(k) : rng() >> 24;
      ASSERT_EQ(div.quotient(x), x / d) << x << " / " << d;
      ASSERT_EQ(div.remainder(x), x % d) << x << " % " << d;
    }
  }
  const divider big(4096 * 1000 + 7);
  const std::uint64_t x = (std::uint64_t{1} << 40) - 1;
  EXPECT_EQ(big.quotient(x), x / (4096 * 1000 + 7));
}

TEST(ApplyQueue, AppliesEveryUpdateByTheDrain) {
  std::vector<std::uint64_t> part(64), expected(64);
  for (std::size_t i = 0; i < part.size(); ++i) part[i] = expected[i] = i;
  apply_queue q;
  q.set_part(part.data());
  std::mt19937_64 rng(3);
  constexpr int depth = static_cast<int>(apply_queue::depth);
  // Fewer, as many and more than the queue holds, and several times that.
  const int sizes[] = {0, 1, 7, depth - 1, depth, depth + 1, 2 * depth + 5, 3 * depth, 3, 100};
  for (int round = 0; round < 20; ++round) {
    const int n = sizes[round % 10];
    for (int k = 0; k < n; ++k) {
      const std::uint64_t at = rng() % part.size();
      const std::uint64_t r = rng();
      q.push(at, r);
      expected[at] ^= r;
    }
    q.drain();
    ASSERT_EQ(part, expected) << "round " << round;
  }
}

}  // namespace
