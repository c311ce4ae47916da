// shoal::bcl::hash_map (bcl/hash_map.hpp) on one process with 1, 2 and 4
// cores, direct and am backends: concurrent inserts of the same keys,
// finds during inserts, full parts, update semantics, promise local;
// misuse named. Across processes and with shm and rma: mpi/bcl_job.cpp.
#include <array>

#include "bcl_hash_map_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace bcl_hash_map_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class bcl_hash_map : public shoal_test::backends_test {};

TEST_P(bcl_hash_map, SameKeysFromEveryCoreInsertedOnce) {
  each_backend([] { return same_keys_from_every_core(300, 300); });
}

TEST_P(bcl_hash_map, FindsDuringInsertsSeeNothingOrTheValue) {
  each_backend([] { return finds_during_inserts(200); });
}

TEST_P(bcl_hash_map, FullPartReportedNothingChanged) {
  each_backend([] { return full_parts_reported(); });
}

TEST_P(bcl_hash_map, SecondInsertReplacesTheValue) {
  each_backend([] { return update_replaces_value(); });
}

TEST_P(bcl_hash_map, LocalInsertsFromCoresOfOneProcess) {
  each_backend([] { return local_inserts(500); });
}

TEST_P(bcl_hash_map, AddsCountEveryCoreAndAddExistingInsertsNothing) {
  each_backend([] { return adds_from_every_core(200); });
}

SHOAL_TEST_CORES(bcl_hash_map);

class bcl_hash_map_misuse : public shoal_test::death_test {};

TEST_F(bcl_hash_map_misuse, UseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             map m = map::make(8);
                             m.destroy();
                             m.insert(1, 2);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map::insert on a table that was destroyed or never made");
}

TEST_F(bcl_hash_map_misuse, ZeroBucketsIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2), [] { map::make(0); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map::make: a table of 0 buckets per core");
}

TEST_F(bcl_hash_map_misuse, BucketWiderThanTheBlockIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] { shoal::bcl::hash_map<u64, std::array<u64, 8>>::make(4); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map::make: a bucket of 128 bytes \\(status, key of 8, value of 64\\) is "
              "wider than --block-bytes 64; raise --block-bytes to 128 or more");
}

TEST_F(bcl_hash_map_misuse, InsertWithFindOnlyPromiseIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] { map::make(8).insert(1, 2, hash_promise::find_only); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "hash_map<8-byte key, 8-byte value>\\(8 buckets per core\\): insert with promise "
              "find_only");
}

TEST_F(bcl_hash_map_misuse, AddWithFindOnlyPromiseIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             map m = map::make(8);
                             m.add(1, 2, hash_promise::find_only);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "add with promise find_only");
}

TEST_F(bcl_hash_map_misuse, FindWithInsertOnlyPromiseIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] { map::make(8).find(1, hash_promise::insert_only); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "\\(8 buckets per core\\): find with promise insert_only");
}

// A bucket left reserved (as an insert running concurrently leaves it) is
// named by a find that promised no insert runs.
TEST_F(bcl_hash_map_misuse, FindOnlyMeetingAnInsertIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             map m = map::make(1);
                             shoal::rput(m.at(m.home(5), 0).reinterpret<u64>(),
                                         map::reserved_state);
                             shoal::rflush();
                             m.find(5, hash_promise::find_only);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "find with promise find_only met a bucket being written \\(core [01], slot 0\\)");
}

}  // namespace
