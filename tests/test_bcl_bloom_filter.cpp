// shoal::bcl::bloom_filter (bcl/bloom_filter.hpp) on one process with 1, 2
// and 4 cores, direct and am backends: concurrent inserts of one value told
// added exactly once, no false negatives, the false-positive rate against
// the formula; misuse named. Across processes: mpi/bcl_job.cpp.
#include "bcl_bloom_filter_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace bcl_bloom_filter_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class bcl_bloom_filter : public shoal_test::backends_test {};

TEST_P(bcl_bloom_filter, ConcurrentInsertsOfOneValueAddItOnce) {
  each_backend([] { return same_values_from_every_core(300); });
}

TEST_P(bcl_bloom_filter, FalsePositiveRateMatchesTheFormula) {
  each_backend([] { return false_positive_rate(4096, 512, 3, 8000, true); });
}

TEST(bcl_bloom_filter_rate, FormulaAgreesWithKnownValues) {
  // One value per word on average, k = 1: a query hits a set bit with
  // probability sum_j P(j) (1 - (63/64)^j) = 1 - e^(-1/64).
  EXPECT_NEAR(predicted_rate(100, 100, 1), 1 - std::exp(-1.0 / 64), 1e-9);
  EXPECT_EQ(predicted_rate(0, 100, 3), 0.0);
}

SHOAL_TEST_CORES(bcl_bloom_filter);

class bcl_bloom_filter_misuse : public shoal_test::death_test {};

TEST_F(bcl_bloom_filter_misuse, UseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             filter f = filter::make(8);
                             f.destroy();
                             f.find(1);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "bloom_filter::find on a filter that was destroyed or never made");
}

TEST_F(bcl_bloom_filter_misuse, BitsPerValueOutOfRangeIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2), [] { filter::make(8, 11); }),
              ExitedWithCode(shoal::exit_status::fatal),
              "bloom_filter::make: 11 bits per value; k must be 1 to 10");
}

TEST_F(bcl_bloom_filter_misuse, ZeroWordsIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2), [] { filter::make(0); }),
              ExitedWithCode(shoal::exit_status::fatal), "bloom_filter::make: a filter of 0 words");
}

}  // namespace
