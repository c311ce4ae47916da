// hash_map with serialised values (bcl/object.hpp) on one process with 1, 2
// and 4 cores, direct and am backends: strings of 0 to 10000 bytes,
// vectors, a user type, replaced values, finds racing inserts, a full
// arena. Across processes and with shm and rma: mpi/bcl_object_job.cpp.
#include "bcl_object_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace bcl_object_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class bcl_object : public shoal_test::backends_test {};

TEST_P(bcl_object, StringsOf0To10000BytesRoundTrip) {
  each_backend([] { return strings_round_trip(12); });
}

TEST_P(bcl_object, VectorsRoundTrip) {
  each_backend([] { return vectors_round_trip(12); });
}

TEST_P(bcl_object, UserTypeRoundTrips) {
  each_backend([] { return readings_round_trip(12); });
}

TEST_P(bcl_object, ReplacedValuesTakeNewBytes) {
  each_backend([] { return replace_values(6, 5); });
}

TEST_P(bcl_object, FindsRacingInsertsSeeWholeValues) {
  each_backend([] { return finds_racing_inserts(60); });
}

TEST_P(bcl_object, FullArenaKeepsEarlierValues) {
  each_backend([] { return arena_filled_values_kept(); });
}

TEST_P(bcl_object, StringQueuePushPopWholeValues) {
  each_backend([] { return string_queue_push_pop(40); });
}

TEST_P(bcl_object, StringChecksumQueuePushPopWholeValues) {
  each_backend([] { return string_queue_push_pop<string_checksum_queue>(40); });
}

TEST_P(bcl_object, VectorFastQueuePhasesWholeValues) {
  each_backend([] { return vector_fast_queue_phases(30); });
}

SHOAL_TEST_CORES(bcl_object);

// The handle of a table of inline values does not grow.
static_assert(sizeof(shoal::bcl::hash_map<u64, u64>) <= 24);
static_assert(sizeof(string_map) == 32);
static_assert(std::is_same_v<shoal::bcl::stored_t<std::string>, shoal::bcl::serial_ptr>);
static_assert(std::is_same_v<shoal::bcl::stored_t<u64>, u64>);

class bcl_object_misuse : public shoal_test::death_test {};

TEST_F(bcl_object_misuse, FullArenaIsNamedBeforeTheTableIsTouched) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2), [] { overfill_arena_on(1); }),
              ExitedWithCode(shoal::exit_status::usage),
              "hash_map<8-byte key, serialised value>\\(64 buckets per core\\): a value of 104 "
              "serialised bytes does not fit core 1's arena \\([0-9]+ of 1008 bytes left; bytes of "
              "replaced values stay until destroy\\); raise arena_bytes_per_core of make\\(\\)");
}

TEST_F(bcl_object_misuse, FullQueueArenaIsNamedBeforeTheRingIsTouched) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1),
                           [] {
                             auto q = string_queue::make(0, 4, 100);
                             q.push(std::string(200, 'q'));
                           }),
              ExitedWithCode(shoal::exit_status::usage),
              "circular_queue\\(host core 0, capacity 4\\): a value of 204 serialised bytes does "
              "not fit core 0's arena \\(112 of 112 bytes left;.*raise arena_bytes_per_core");
}

TEST_F(bcl_object_misuse, ZeroArenaIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1), [] { string_map::make(8, 0); }),
              ExitedWithCode(shoal::exit_status::usage),
              "hash_map<8-byte key, serialised value>\\(8 buckets per core\\): "
              "arena_bytes_per_core 0 \\(the bytes for serialised values on each core\\) must be "
              "between 1 and 2\\^40");
}

}  // namespace
