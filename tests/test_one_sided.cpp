// The one-sided layer (one_sided.hpp) on one process with 1, 2 and 4 cores,
// with the direct backend (the default here) and with am forced; misuse and
// impossible backends end the job naming the cause. Across processes and
// with shm and rma: tests/mpi/one_sided_job.cpp (tests/one_sided.cmake).
#include "one_sided_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace one_sided_checks;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class one_sided : public shoal_test::backends_test {};

TEST_P(one_sided, AutoIsDirectOnOneProcess) {
  std::string name;
  run([&] { name = shoal::one_sided_backend_name(); });
  EXPECT_EQ(name, "direct");
}

TEST_P(one_sided, PutFlushBarrierThenGetSeesTheValue) {
  each_backend([] { return put_flush_barrier_get(); });
}

TEST_P(one_sided, BulkRangesBlockingAndAsync) {
  each_backend([] { return bulk_ranges(); });
}

TEST_P(one_sided, FetchOpsFromEveryCoreGiveExactTotals) {
  each_backend([](shoal::one_sided_kind k) {
    // Direct: enough adds that the cores overlap for milliseconds (a
    // non-atomic add loses some then: seen when it was made one).
    return fetch_ops_exact(k == shoal::one_sided_kind::direct ? 1000000 : 5000);
  });
}

TEST_P(one_sided, CompareAndSwapLockLosesNoIncrement) {
  each_backend([] { return cas_lock(300); });
}

TEST_P(one_sided, TwoDPointersReachTheSameMemory) {
  each_backend([] { return two_d_pointers(); });
}

TEST_P(one_sided, PlainAddressReachesTheElementsUnderDirectOnly) {
  each_backend([] { return plain_addresses(); });
}

TEST_P(one_sided, UnderAmAtomicsAndDelegatesOnOneWordAreAtomicTogether) {
  u64 wrong = 1;
  run(with(shoal::one_sided_kind::am), [&] { wrong = mixed_with_delegates(3000); });
  EXPECT_EQ(wrong, 0u);
}

SHOAL_TEST_CORES(one_sided);

class one_sided_misuse : public shoal_test::death_test {};

TEST_F(one_sided_misuse, NullPointerIsNamed) {
  EXPECT_EXIT(
      run_to_death(shoal_test::make_config(2), [] { shoal::rget(shoal::global_ptr<u64>{}); }),
      ExitedWithCode(shoal::exit_status::fatal),
      "shoal::rget on global_ptr\\(null\\): null pointer");
}

// Under direct and under am (where a valid pointer gives nullptr): a null
// pointer is misuse, not memory out of reach.
TEST_F(one_sided_misuse, PlainAddressOfNullIsNamed) {
  for (auto k : {shoal::one_sided_kind::direct, shoal::one_sided_kind::am}) {
    shoal::config c = shoal_test::make_config(2);
    c.one_sided = k;
    EXPECT_EXIT(run_to_death(c, [] { (void)shoal::plain_address(shoal::global_ptr<u64>{}); }),
                ExitedWithCode(shoal::exit_status::fatal),
                "plain_address on global_ptr\\(null\\): null pointer")
        << "backend " << static_cast<int>(k);
  }
}

TEST_F(one_sided_misuse, RangePastTheHeapIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             const auto a = shoal::global_alloc<u64>(4);
                             std::vector<u64> v(100);
                             // The last core's segment ends 16 MiB on: run past it.
                             shoal::rget(a + (std::int64_t{1} << 30), v.data(), v.size());
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::rget on global_ptr\\(linear .*outside the global heap");
}

TEST_F(one_sided_misuse, MisalignedAtomicIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(1),
                           [] {
                             const auto a = shoal::global_alloc<u64>(4);
                             shoal::compare_and_swap((a.reinterpret<char>() + 2).reinterpret<u32>(),
                                                     u32{0}, u32{1});
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::compare_and_swap on .*a 4-byte atomic needs an address aligned to 4 bytes");
}

TEST_F(one_sided_misuse, CoreOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(shoal_test::make_config(2),
                           [] {
                             u64 x = 0;
                             const auto p = shoal::global_ptr<u64>::make_2d(7, &x);
                             shoal::fetch_add(p, u64{1});
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::fetch_add on global_ptr\\(core 7, .*core 7 is outside the job \\(2 cores\\)");
}

TEST_F(one_sided_misuse, ShmWithoutMpiSaysWhatItNeeds) {
  shoal::config c = shoal_test::make_config(2);
  c.one_sided = shoal::one_sided_kind::rma;
  c.transport = shoal::transport_kind::local;
  EXPECT_EXIT(run_to_death(c, [] {}), ExitedWithCode(2), "--one-sided rma needs the mpi transport");
}

}  // namespace
