// shoal::bcl::hash_map_buffer (bcl/hash_map_buffer.hpp) on one process with
// 1, 2 and 4 cores, direct and am backends: two insert phases with
// duplicate keys (queues large, and small enough to overflow), counter
// phases (add, add_existing) exact, a table too small reported by flush;
// misuse named. Across processes: mpi/bcl_job.cpp.
#include "bcl_hash_map_buffer_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace bcl_hash_map_buffer_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class bcl_hash_map_buffer : public shoal_test::backends_test {};

TEST_P(bcl_hash_map_buffer, TwoPhasesEveryInsertApplied) {
  each_backend([] { return two_phases(300, 50, 1024, 32); });
}

TEST_P(bcl_hash_map_buffer, FullQueueFallsBackToAtomicInserts) {
  each_backend([] { return two_phases(300, 50, 8, 8); });
}

TEST_P(bcl_hash_map_buffer, CounterPhasesExact) {
  each_backend([] { return counter_phases(200, 8); });
}

TEST_P(bcl_hash_map_buffer, CounterPhasesExactThroughAFullQueue) {
  each_backend([] { return counter_phases(200, 8, 8); });
}

TEST_P(bcl_hash_map_buffer, FullTableReportedByFlush) {
  each_backend([] { return full_table_reported(20, 40); });
}

SHOAL_TEST_CORES(bcl_hash_map_buffer);

class bcl_hash_map_buffer_misuse : public shoal_test::death_test {};

TEST_F(bcl_hash_map_buffer_misuse, InsertAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1),
                           [] {
                             buffer b(map::make(8), 16, 4);
                             b.destroy();
                             b.insert(1, 2);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map_buffer::insert after destroy\\(\\) on core 0");
}

TEST_F(bcl_hash_map_buffer_misuse, MessageLargerThanTheQueueIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1), [] { buffer b(map::make(8), 16, 17); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map_buffer: a message of 17 entries does not fit a queue of 16 entries");
}

TEST_F(bcl_hash_map_buffer_misuse, DestroyedMapIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1),
                           [] {
                             map m = map::make(8);
                             m.destroy();
                             buffer b(m, 16, 4);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map_buffer: the hash_map was destroyed or never made");
}

}  // namespace
