// shoal::bcl::circular_queue and checksum_queue (bcl/) on one process with
// 1, 2 and 4 cores, direct and am backends: concurrent pushes and pops on a
// small ring (each value popped exactly once), circular_queue's promises,
// full and empty reported, order across many wraps; misuse named. Across
// processes and with shm and rma: mpi/bcl_job.cpp.
#include "bcl_queue_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace bcl_queue_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class bcl_queues : public shoal_test::backends_test {};

TEST_P(bcl_queues, CircularConcurrentPushPopEachValueOnce) {
  each_backend([] { return concurrent_push_pop<circular>(300, 8); });
}

// Hung at random before one_sided_copy.hpp (memcpy stored a slot's check
// word twice, undoing a pop's free mark): test_bcl_checksum_race.cpp checks
// that cause directly; this one loops clean (300 repeats at 1 x 4).
TEST_P(bcl_queues, ChecksumConcurrentPushPopEachValueOnce) {
  each_backend([] { return concurrent_push_pop<checksum>(300, 8); });
}

// Runs longer than a delegate's batch, mixed with short ones (the path is
// whatever auto picks here; test_bcl_path.cpp forces each).
TEST_P(bcl_queues, LongRunsConcurrentEachValueOnce) {
  each_backend([] {
    return concurrent_push_pop<circular>(150, 48, 20) + concurrent_push_pop<checksum>(150, 48, 20);
  });
}

TEST_P(bcl_queues, LongRunsFullEmptyInOrder) {
  each_backend([] {
    return long_runs_full_empty<fast>() + long_runs_full_empty<circular>() +
           long_runs_full_empty<checksum>();
  });
}

TEST_P(bcl_queues, FastPhasesEachValueOnceFullReported) {
  each_backend([] { return fast_phases(60, 20); });
}

TEST_P(bcl_queues, CircularPhasesWithPromises) {
  each_backend([] { return phases_with_promises(200); });
}

TEST_P(bcl_queues, CircularFullEmptyAndWrap) {
  each_backend([] { return full_empty_and_wrap<circular>(); });
}

TEST_P(bcl_queues, FastDrainSeesWrappedRunsInPlace) {
  each_backend([] { return fast_drain_wraps(); });
}

TEST_P(bcl_queues, ChecksumFullEmptyAndWrap) {
  each_backend([] { return full_empty_and_wrap<checksum>(); });
}

TEST_P(bcl_queues, ResizeAndMigrateEveryQueue) {
  each_backend([] {
    return resize_and_migrate<fast>() + resize_and_migrate<circular>() +
           resize_and_migrate<checksum>();
  });
}

TEST_P(bcl_queues, ResizeKeepsTheOrder) {
  each_backend([] {
    return resize_keeps_order<fast>() + resize_keeps_order<circular>() +
           resize_keeps_order<checksum>();
  });
}

SHOAL_TEST_CORES(bcl_queues);

class bcl_queues_misuse : public shoal_test::death_test {};

TEST_F(bcl_queues_misuse, CircularUseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             circular q = circular::make(1, 16);
                             q.destroy();
                             q.push(u64{1});
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "circular_queue::push on a queue that was destroyed or never made");
}

TEST_F(bcl_queues_misuse, ChecksumUseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             checksum q = checksum::make(1, 16);
                             q.destroy();
                             u64 v;
                             q.pop(v);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "checksum_queue::pop on a queue that was destroyed or never made");
}

TEST_F(bcl_queues_misuse, MoreThanTheCapacityAtOnceIsNamed) {
  EXPECT_EXIT(
      run_to_death(shoal_test::make_config(2),
                   [] {
                     checksum q = checksum::make(1, 4);
                     std::vector<u64> v(5);
                     q.push(std::span<const u64>(v));
                   }),
      ExitedWithCode(shoal::exit_status::fatal),
      "checksum_queue\\(host core 1, capacity 4\\): push of 5 elements, more than the capacity");
}

TEST_F(bcl_queues_misuse, PushWithPromisePopIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] { circular::make(0, 4).push(u64{1}, queue_promise::pop); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "circular_queue\\(host core 0, capacity 4\\): push with promise pop");
}

TEST_F(bcl_queues_misuse, HostOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2), [] { circular::make(2, 4); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "circular_queue::make: host core 2 is outside the job \\(2 cores\\)");
}

TEST_F(bcl_queues_misuse, ResizeBelowTheContentsIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1),
                           [] {
                             circular q = circular::make(0, 8);
                             for (u64 i = 0; i < 5; ++i) q.push(i);
                             q.resize(4);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "circular_queue\\(host core 0, capacity 8\\): resize to a capacity of 4 elements, "
              "fewer than the 5 it holds");
}

TEST_F(bcl_queues_misuse, MigrateOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1), [] { fast::make(0, 8).migrate(3); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "fast_queue\\(host core 0, capacity 8\\): migrate to core 3, outside the job "
              "\\(1 cores\\)");
}

}  // namespace
