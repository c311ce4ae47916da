// channel::send_run on one process (1, 2 and 4 cores): the scenarios of
// tests/channel_run_scenario.hpp (order with single sends, batches split at
// the batch size, phases, fences, flow control) and misuse named. Across
// processes: tests/mpi/dist_channel_run.cpp.
#include "channel_run_scenario.hpp"
#include "test_support.hpp"

namespace {

using ::testing::ExitedWithCode;

class channel_run : public shoal_test::cores_test {};

auto job(int cores) {
  return [cores](auto root) { shoal_test::run_checked(shoal_test::make_config(cores), root); };
}

// Batches of 7 values: every length splits at odd places.
TEST_P(channel_run, RunsKeepOrderWithSingleSendsAndSplitAtACoalescedBatch) {
  run_scenario::check_ordered(job(ncores()), 7, ncores());
}

// Batches as large as an aggregation buffer: runs of several buffers.
TEST_P(channel_run, RunsLargerThanSeveralAggregationBuffersKeepOrder) {
  run_scenario::check_ordered(job(ncores()), 0, ncores());
}

TEST_P(channel_run, RunsOnABoundedChannelStayWithinTheBound) {
  run_scenario::check_bounded(job(ncores()), 16, 20, ncores());
}

INSTANTIATE_TEST_SUITE_P(cores, channel_run, ::testing::Values(1, 2, 4));

TEST(channel_runDeathTest, SendRunOnADefaultConstructedChannelIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::channel<int> ch;
                                         ch.send_run(1, std::span<const int>());
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "fatal on rank 0 core 0: shoal::channel::send_run on a default-constructed or "
              "closed channel handle \\(id 0\\)");
}

TEST(channel_runDeathTest, SendRunOnAClosedChannelIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_channel<int>([](const int&) {});
                                         ch.close();
                                         const std::array<int, 3> v{1, 2, 3};
                                         ch.send_run(1, std::span<const int>(v));
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::channel::send_run on a default-constructed or closed channel handle");
}

// A handle kept from a run, used after it: no shoal core on the thread.
void send_run_after_the_run() {
  shoal::channel<int> ch;
  shoal_test::run_to_death(shoal_test::make_config(1),
                           [&ch] { ch = shoal::make_channel<int>([](const int&) {}); });
  const std::array<int, 2> v{1, 2};
  ch.send_run(0, std::span<const int>(v));
}

TEST(channel_runDeathTest, SendRunOutsideRunIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(send_run_after_the_run(), ExitedWithCode(shoal::exit_status::fatal),
              "shoal::channel::send_run called outside shoal::run\\(\\) \\(no shoal core on "
              "this thread\\)");
}

}  // namespace
