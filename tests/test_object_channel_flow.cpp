// Object-channel flow control on one process (1 x 2 and 1 x 4 cores): the
// flood of tests/object_channel_flow_scenario.hpp with and without a bound,
// and a bound out of range. Across processes: tests/mpi/dist_object_channel_flow.cpp.
#include "object_channel_flow_scenario.hpp"
#include "test_support.hpp"

namespace {

using ::testing::ExitedWithCode;

constexpr std::int64_t per_sender = 3000;

TEST(object_channel_flow, ABoundedFloodNeverHasMoreThanTheBoundUnhandled) {
  for (int cores : {2, 4}) {
    shoal_test::run_checked(shoal_test::make_config(cores),
                            [] { flow_scenario::flood(16, per_sender, true); });
    const auto& g = flow_scenario::g;
    EXPECT_EQ(g.good.load(), per_sender * (cores - 1)) << cores << " cores";
    EXPECT_EQ(g.bad.load(), 0);
    EXPECT_EQ(g.out_of_order.load(), 0);
    EXPECT_GE(g.max_backlog.load(), 1);
    EXPECT_LE(g.max_backlog.load(), 16) << cores << " cores";
  }
}

// The same measure without a bound: a sender's records wait in its batch
// until it fills (dozens of records of this size), so the backlog passes
// 16: the bound above is what keeps it there.
TEST(object_channel_flow, WithoutABoundTheSameFloodRunsAhead) {
  shoal_test::run_checked(shoal_test::make_config(2),
                          [] { flow_scenario::flood(0, per_sender, true); });
  const auto& g = flow_scenario::g;
  EXPECT_EQ(g.good.load(), per_sender);
  EXPECT_EQ(g.bad.load(), 0);
  EXPECT_GT(g.max_backlog.load(), 16);
}

TEST(object_channel_flowDeathTest, ABoundOutOfRangeIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(1),
                                       [] {
                                         (void)shoal::make_object_channel<std::string>(
                                             [](const std::string&) {},
                                             {.max_in_flight = 1U << 24});
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::make_object_channel: max_in_flight 16777216 is above the largest bound, "
              "16777215");
}

}  // namespace
