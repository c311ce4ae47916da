// Distributions (distribution.hpp), target channels (target_channel.hpp) and
// per-channel coalescing and flush (channel.hpp) on one process; the same
// scenarios across processes are in tests/mpi/dist_pebbles.cpp.
#include <atomic>
#include <cstdint>
#include <set>
#include <vector>

#include "pebbles_scenarios.hpp"
#include "test_support.hpp"
#include "test_target_channel_combine.hpp"

namespace {

using shoal::target_location;
using ::testing::ExitedWithCode;

// ---------------------------------------------------------- pure arithmetic

template <class D>
void expect_bijective(const D& d, std::uint64_t n, int cores) {
  std::set<std::pair<int, std::uint64_t>> seen;
  for (std::uint64_t t = 0; t < n; ++t) {
    const target_location at = d.locate(t);
    ASSERT_GE(at.core, 0) << t;
    ASSERT_LT(at.core, cores) << t;
    ASSERT_TRUE(seen.insert({at.core, at.local}).second) << "target " << t << " collides";
    if constexpr (requires { d.global(at.core, at.local); }) {
      ASSERT_EQ(d.global(at.core, at.local), t);
    }
  }
}

TEST(distribution, BlockOwnsContiguousRanges) {
  const shoal::block_distribution d(10, 4);  // blocks of 3: 3, 3, 3, 1
  EXPECT_EQ(d.locate(0), (target_location{0, 0}));
  EXPECT_EQ(d.locate(5), (target_location{1, 2}));
  EXPECT_EQ(d.locate(9), (target_location{3, 0}));
  EXPECT_EQ(d.local_count(0), 3U);
  EXPECT_EQ(d.local_count(3), 1U);
  expect_bijective(d, 10, 4);
  const shoal::block_distribution few(2, 4);  // more cores than targets
  EXPECT_EQ(few.local_count(0), 1U);
  EXPECT_EQ(few.local_count(2), 0U);
  expect_bijective(few, 2, 4);
}

TEST(distribution, CyclicDealsRoundRobin) {
  const shoal::cyclic_distribution d(3);
  EXPECT_EQ(d.locate(7), (target_location{1, 2}));
  expect_bijective(d, 100, 3);
}

TEST(distribution, BlockCyclicDealsBlocks) {
  const shoal::block_cyclic_distribution d(4, 3);
  // Target 13: block 3 -> core 0, its second local block, offset 1.
  EXPECT_EQ(d.locate(13), (target_location{0, 5}));
  EXPECT_EQ(d.locate(4), (target_location{1, 0}));
  expect_bijective(d, 200, 3);
}

TEST(distribution, HashedSpreadsStridedIdsAndKeepsTheId) {
  const shoal::hashed_distribution d(4, 7);
  std::vector<int> per(4, 0);
  for (std::uint64_t t = 0; t < 4096; ++t) {
    const target_location at = d.locate(t * 1024);  // a stride a modulus would pile up
    EXPECT_EQ(at.local, t * 1024);
    ++per[static_cast<std::size_t>(at.core)];
  }
  for (int n : per) EXPECT_GT(n, 4096 / 4 / 2);
}

struct reversed {  // a user-defined distribution without name()
  int cores;
  target_location locate(std::uint64_t t) const {
    return {cores - 1 - static_cast<int>(t % static_cast<std::uint64_t>(cores)),
            t / static_cast<std::uint64_t>(cores)};
  }
};
static_assert(shoal::distribution_like<reversed>);
static_assert(!shoal::distribution_like<int>);

TEST(distribution, NamesForMessages) {
  EXPECT_EQ(shoal::distribution_name(shoal::block_distribution(8, 2)),
            "block_distribution(8 targets, 2 cores)");
  EXPECT_EQ(shoal::distribution_name(reversed{2}), "a user-defined distribution");
}

// ------------------------------------------------------------- at run time

class pebbles_test : public shoal_test::cores_test {
 protected:
  auto job() const {
    return [cfg = config()](auto root) { shoal_test::run_checked(cfg, root); };
  }
};

TEST_P(pebbles_test, BlockTargetsGetEverySum) {
  pebbles::check_sums(job(), ncores(), pebbles::kind::block);
}
TEST_P(pebbles_test, CyclicTargetsGetEverySum) {
  pebbles::check_sums(job(), ncores(), pebbles::kind::cyclic);
}
TEST_P(pebbles_test, BlockCyclicTargetsGetEverySum) {
  pebbles::check_sums(job(), ncores(), pebbles::kind::block_cyclic);
}
TEST_P(pebbles_test, HashedTargetsGetEverySum) {
  pebbles::check_sums(job(), ncores(), pebbles::kind::hashed);
}
TEST_P(pebbles_test, UnshortCircuitedTargetsGetEverySum) {
  pebbles::check_sums(job(), ncores(), pebbles::kind::block, false);
}
TEST_P(pebbles_test, CascadesThroughTargetsEndWithThePhase) {
  pebbles::check_cascade(job(), ncores());
}

TEST_P(pebbles_test, DepthTwoPhaseHandlesBothDepths) {
  pebbles::check_depth(job(), ncores(), 2, 2);
}
TEST_P(pebbles_test, DepthFourPhaseHandlesEveryDepth) {
  pebbles::check_depth(job(), ncores(), 4, 4);
}
// A larger depth than needed is fine (rounds of markers only).
TEST_P(pebbles_test, DepthAboveTheChainsIsFine) { pebbles::check_depth(job(), ncores(), 2, 3); }

// Combine until flush in a flat combiner: sums equal the sequential sums,
// dense flushes (marks scanned) and sparse ones (the list) alike.
TEST_P(pebbles_test, CombinedSumsEqualTheSequentialSums) {
  combine_check::check_combined_sums(job(), ncores());
}
// The same without marks (drop_identity): the flush sends the non-zero sums.
TEST_P(pebbles_test, CombinedSumsWithoutMarksEqualTheSequentialSums) {
  combine_check::check_combined_sums(job(), ncores(), true);
}
// own_in_place: a core's own targets stay in its combiner (no handler call).
TEST_P(pebbles_test, CombinedSumsWithOwnTargetsInPlaceEqualTheSequentialSums) {
  combine_check::check_combined_sums(job(), ncores(), true, true);
}

SHOAL_TEST_CORES(pebbles_test);

// A local target's handler has run when send returns, on the sending core.
TEST(target_channel, LocalTargetRunsBeforeSendReturns) {
  static std::atomic<int> ran{-1};
  static bool seen_before_return = false;
  shoal_test::run_checked(shoal_test::make_config(2), [] {
    shoal::cyclic_distribution d(shoal::cores());
    auto ch = shoal::make_target_channel<int>(
        d, [](std::uint64_t, const int&) { ran.store(shoal::mycore()); });
    ch.send(0, 1);  // target 0 lives on core 0, the root's core
    seen_before_return = ran.load() == 0;
    ch.close();
  });
  EXPECT_TRUE(seen_before_return);
}

// A handler that sends to its own core's next target, 10000 deep: the
// nesting bound sends through the channel instead of recursing.
TEST(target_channel, DeepLocalCascadeDoesNotRecurseWithoutBound) {
  static std::int64_t last = -1;
  static shoal::target_channel<std::int64_t, shoal::block_distribution> g_ch;
  shoal_test::run_checked(shoal_test::make_config(1), [] {
    shoal::block_distribution d(10000, 1);
    g_ch =
        shoal::make_target_channel<std::int64_t>(d, [](std::uint64_t local, const std::int64_t& v) {
          last = v;
          if (local + 1 < 10000) g_ch.send(local + 1, v + 1);
        });
    g_ch.send(0, 0);
    g_ch.drain();
    g_ch.close();
  });
  EXPECT_EQ(last, 9999);
}

// coalesce_values = 4: the fifth value sends the first four without a flush
// (the age flush is off and the sender never idles); flush() sends the fifth.
TEST(channel_coalescing, BatchLeavesAtItsSizeAndFlushSendsTheRest) {
  static std::atomic<int> got{0};
  static bool four_early = false, fifth_waited = false, fifth_after_flush = false;
  shoal::config c = shoal_test::make_config(2);
  c.flush_us = 10'000'000;
  shoal_test::run_checked(c, [] {
    auto ch = shoal::make_channel<int>([](int) { got.fetch_add(1); }, {.coalesce_values = 4});
    for (int i = 0; i < 5; ++i) ch.send(1, i);
    four_early = shoal_test::yield_until([] { return got.load() >= 4; });
    fifth_waited =
        !shoal_test::yield_until([] { return got.load() >= 5; }, std::chrono::milliseconds(300));
    ch.flush();
    fifth_after_flush = shoal_test::yield_until([] { return got.load() == 5; });
    ch.close();
  });
  EXPECT_TRUE(four_early);
  EXPECT_TRUE(fifth_waited) << "the fifth value left before flush()";
  EXPECT_TRUE(fifth_after_flush);
}

// The same on a target channel, and flush() of one channel leaves another's
// batch staged.
TEST(channel_coalescing, FlushIsPerChannel) {
  static std::atomic<int> a{0}, b{0};
  static bool a_sent = false, b_held = false;
  shoal::config c = shoal_test::make_config(2);
  c.flush_us = 10'000'000;
  shoal_test::run_checked(c, [] {
    shoal::cyclic_distribution d(2);
    auto ca = shoal::make_target_channel<int>(d, [](std::uint64_t, const int&) { a.fetch_add(1); });
    auto cb = shoal::make_target_channel<int>(d, [](std::uint64_t, const int&) { b.fetch_add(1); });
    ca.send(1, 1);
    cb.send(1, 1);
    ca.flush();
    a_sent = shoal_test::yield_until([] { return a.load() == 1; });
    b_held = !shoal_test::yield_until([] { return b.load() == 1; }, std::chrono::milliseconds(300));
    cb.drain();
    ca.close();
    cb.close();
  });
  EXPECT_TRUE(a_sent);
  EXPECT_TRUE(b_held);
  EXPECT_EQ(b.load(), 1);
}

// Many packets with a small coalescing size, few with the default.
TEST(channel_coalescing, SmallSizeMakesMorePackets) {
  auto packets = [](std::uint32_t k) {
    shoal::init(shoal_test::make_config(2));
    const auto before = shoal::stats_total();
    shoal_test::run_once([k] {
      auto ch = shoal::make_channel<int>([](int) {}, {.coalesce_values = k});
      for (int i = 0; i < 1000; ++i) ch.send(1, i);
      ch.drain();
      ch.close();
    });
    auto d = shoal::stats_total();
    d -= before;
    shoal::finalize();
    return d.flushes_on_size;
  };
  EXPECT_GE(packets(8), 1000U / 8 - 1);
  EXPECT_LE(packets(0), 2U);
}

// ------------------------------------------------------------------ misuse

class pebbles_misuse : public shoal_test::death_test {};

TEST_F(pebbles_misuse, TargetOutsideABlockDistributionIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {});
                                         ch.send(8, 1);
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target_channel::send: target 8 of block_distribution\\(8 targets, 2 cores\\) is "
              "out of range \\[0, 8\\)");
}

TEST_F(pebbles_misuse, DistributionMappingOutsideTheJobIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::cyclic_distribution d(5);  // the job has 2
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {});
                                         ch.send(3, 1);
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target 3 of cyclic_distribution\\(5 cores\\) maps to core 3, outside the job's 2 "
              "cores");
}

TEST_F(pebbles_misuse, UserDistributionOutsideTheJobIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_target_channel<int>(
                                             reversed{4}, [](std::uint64_t, const int&) {});
                                         ch.send(0, 1);
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target 0 of a user-defined distribution maps to core 3");
}

TEST_F(pebbles_misuse, CombiningSenderTargetOutsideTheRangeIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.combine_until_flush = true},
                                             shoal::reduction::sum{});
                                         ch.combining().send(8, 1);
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "combining_sender::send: target 8 of block_distribution\\(8 targets, 2 cores\\) "
              "is out of range \\[0, 8\\)");
}

TEST_F(pebbles_misuse, LocalCombineTargetOutsideTheRangeIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.combine_until_flush = true, .drop_identity = true},
                                             shoal::reduction::sum{});
                                         ch.local_combine([](const auto& to) { to.send(8, 1); });
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target_channel::local_combine: target 8 of block_distribution\\(8 targets, 2 "
              "cores\\) is out of range \\[0, 8\\)");
}

TEST_F(pebbles_misuse, LocalCombineWithoutCombiningIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {}, {},
                                             shoal::reduction::sum{});
                                         ch.local_combine([](const auto& to) { to.send(1, 1); });
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target_channel::local_combine on channel [0-9]+, which was not opened with "
              "combine_until_flush");
}

/// Contiguous regions with gaps: core c owns ids 4c and 4c + 1 of 8.
struct gapped_regions {
  shoal::target_location locate(std::uint64_t t) const noexcept {
    return {static_cast<int>(t / 4), t % 4};
  }
  std::uint64_t targets() const noexcept { return 8; }
  std::uint64_t local_count(int) const noexcept { return 2; }
  std::uint64_t first_target(int c) const noexcept { return 4 * static_cast<std::uint64_t>(c); }
};

// A value for an id in no core's region is named at the flush, not dropped.
TEST_F(pebbles_misuse, CombinedTargetInNoRegionIsNamedAtTheFlush) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_target_channel<int>(
                                             gapped_regions{}, [](std::uint64_t, const int&) {},
                                             {.combine_until_flush = true, .drop_identity = true},
                                             shoal::reduction::sum{});
                                         ch.local_combine([](const auto& to) {
                                           to.send(1, 1);
                                           to.send(6, 1);
                                         });
                                         ch.flush();
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target_channel::flush: target 6 of a user-defined distribution is in no core's "
              "region");
}

/// Targets() and local_count() (so a flat combiner) but target t on core
/// t mod 5, in a job of 2 cores.
struct counted_but_outside {
  shoal::target_location locate(std::uint64_t t) const noexcept {
    return {static_cast<int>(t % 5), t / 5};
  }
  std::uint64_t targets() const noexcept { return 10; }
  std::uint64_t local_count(int) const noexcept { return 2; }
};

// The combining sender checks the owner once per target, at the flush.
TEST_F(pebbles_misuse, CombinedTargetOutsideTheJobIsNamedAtTheFlush) {
  EXPECT_EXIT(
      shoal_test::run_to_death(shoal_test::make_config(2),
                               [] {
                                 auto ch = shoal::make_target_channel<int>(
                                     counted_but_outside{}, [](std::uint64_t, const int&) {},
                                     {.combine_until_flush = true}, shoal::reduction::sum{});
                                 ch.combining().send(3, 1);
                                 ch.flush();
                               }),
      ExitedWithCode(shoal::exit_status::fatal),
      "target_channel::flush: target 3 of a user-defined distribution maps to core 3, "
      "outside the job's 2 cores");
}

TEST_F(pebbles_misuse, OwnInPlaceWithoutDropIdentityIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         (void)shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.combine_until_flush = true, .own_in_place = true},
                                             shoal::reduction::sum{});
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "make_target_channel: own_in_place without drop_identity");
}

TEST_F(pebbles_misuse, OwnInPlaceWithoutRegionsIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(
                  shoal_test::make_config(2),
                  [] {
                    (void)shoal::make_target_channel<int>(
                        counted_but_outside{}, [](std::uint64_t, const int&) {},
                        {.combine_until_flush = true, .drop_identity = true, .own_in_place = true},
                        shoal::reduction::sum{});
                  }),
              ExitedWithCode(shoal::exit_status::fatal),
              "own_in_place needs a distribution whose cores own contiguous ranges of ids");
}

TEST_F(pebbles_misuse, OwnValuesWithoutOwnInPlaceAreNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.combine_until_flush = true, .drop_identity = true},
                                             shoal::reduction::sum{});
                                         (void)ch.local_own_values();
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "target_channel::local_own_values on channel [0-9]+, which was not opened with "
              "own_in_place");
}

TEST_F(pebbles_misuse, DropIdentityWithoutCombiningIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         (void)shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.drop_identity = true}, shoal::reduction::sum{});
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "drop_identity without combine_until_flush");
}

TEST_F(pebbles_misuse, DropIdentityWithoutAnIdentityIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::block_distribution d(8, 2);
                                         (void)shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.combine_until_flush = true, .drop_identity = true},
                                             shoal::reduction::drop_duplicates{});
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "drop_identity needs a reduction with an identity for the value type");
}

TEST_F(pebbles_misuse, CoalescingLargerThanABufferIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_channel<std::uint64_t>(
                                             [](std::uint64_t) {}, {.coalesce_values = 1000000});
                                         ch.close();
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "coalesce_values 1000000 \\(8000000 bytes of 8-byte values\\) does not fit");
}

TEST_F(pebbles_misuse, DepthExceededIsNamed) {
  EXPECT_EXIT(
      pebbles::check_depth(
          [](auto root) { shoal_test::run_to_death(shoal_test::make_config(2), root); }, 2, 3, 2),
      ExitedWithCode(shoal::exit_status::fatal),
      "end_phase_depth\\(2\\) on channel [0-9]+: a handler on core [0-9] sent [0-9]+ "
      "value\\(s\\) at depth 3 or more");
}

TEST_F(pebbles_misuse, DepthZeroIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_channel<int>([](int) {});
                                         shoal::on_all_cores([ch] { ch.end_phase_depth(0); });
                                       }),
              ExitedWithCode(shoal::exit_status::fatal), "depth 0 outside \\[1, 64\\]");
}

TEST_F(pebbles_misuse, FlushOnAClosedChannelIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_channel<int>([](int) {});
                                         ch.close();
                                         ch.flush();
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::channel::flush on a default-constructed or closed channel");
}

}  // namespace
