// shoal::bcl::fast_queue (bcl/fast_queue.hpp) on one process with 1, 2 and
// 4 cores, direct and am backends: redistribution (every core pushes, every
// core or the host alone pops, each value exactly once), full and empty
// reported, order across the ring's wrap; misuse named. Across processes and
// with shm and rma: mpi/one_sided_job.cpp.
#include "fast_queue_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace fast_queue_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class fast_queue : public shoal_test::backends_test {};

TEST_P(fast_queue, EveryValuePoppedExactlyOnce) {
  each_backend([] { return redistribute(2000, false); });
}

TEST_P(fast_queue, HostDrainsWithLocalNonatomicPop) {
  each_backend([] { return redistribute(2000, true); });
}

TEST_P(fast_queue, FullAndEmptyReportedOrderKeptAcrossTheWrap) {
  each_backend([] { return full_empty_and_wrap(); });
}

TEST_P(fast_queue, BulkLocalPopTakesTheOldestInOrderAcrossTheWrap) {
  each_backend([] { return local_bulk_pop_in_order(); });
}

SHOAL_TEST_CORES(fast_queue);

class fast_queue_misuse : public shoal_test::death_test {};

TEST_F(fast_queue_misuse, UseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             queue q = queue::make(1, 16);
                             q.destroy();
                             q.push(u64{1});
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "fast_queue::push on a queue that was destroyed or never made");
}

TEST_F(fast_queue_misuse, MoreThanTheCapacityAtOnceIsNamed) {
  EXPECT_EXIT(
      run_to_death(shoal_test::make_config(2),
                   [] {
                     queue q = queue::make(1, 4);
                     std::vector<u64> v(5);
                     q.push(std::span<const u64>(v));
                   }),
      ExitedWithCode(shoal::exit_status::fatal),
      "fast_queue\\(host core 1, capacity 4\\): push of 5 elements, more than the capacity");
}

TEST_F(fast_queue_misuse, HostOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2), [] { queue::make(2, 4); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "fast_queue::make: host core 2 is outside the job \\(2 cores\\)");
}

}  // namespace
