// Message reductions (reduction.hpp) on one process, 1, 2 and 4 cores; the
// same scenarios across processes are in tests/mpi/dist_pebbles.cpp.
#include "pebbles_scenarios.hpp"
#include "test_support.hpp"

namespace {

using pebbles::op;
using ::testing::ExitedWithCode;
namespace red = shoal::reduction;

class reduction_test : public shoal_test::cores_test {
 protected:
  auto job() const {
    return [cfg = config()](auto root) { shoal_test::run_checked(cfg, root); };
  }
};

TEST_P(reduction_test, MinKeepsTheLeast) {
  pebbles::check_reduction<red::min>(job(), ncores(), op::min, false, 1024);
}
TEST_P(reduction_test, MaxKeepsTheGreatest) {
  pebbles::check_reduction<red::max>(job(), ncores(), op::max, false, 1024);
}
TEST_P(reduction_test, SumAddsEveryValue) {
  pebbles::check_reduction<red::sum>(job(), ncores(), op::sum, false, 1024);
}
TEST_P(reduction_test, DropDuplicatesKeepsOnePerSourceAtLeast) {
  pebbles::check_reduction<red::drop_duplicates>(job(), ncores(), op::drop, false, 1024);
}
// One slot: every other target evicts; still exact.
TEST_P(reduction_test, SumWithOneCacheSlot) {
  pebbles::check_reduction<red::sum>(job(), ncores(), op::sum, false, 1);
}
// Local targets short-circuit and are not reduced; the others are.
TEST_P(reduction_test, MinWithShortCircuit) {
  pebbles::check_reduction<red::min>(job(), ncores(), op::min, true, 64);
}

SHOAL_TEST_CORES(reduction_test);

// A user operation (wrapped by reduction::with): the sum again, spelled out.
struct plus {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};
using user_sum = decltype(red::with(plus{}));

TEST(reduction, UserOperationCombines) {
  pebbles::check_reduction<user_sum>(
      [](auto root) { shoal_test::run_checked(shoal_test::make_config(2), root); }, 2, op::sum,
      false, 256);
}

static_assert(shoal::reduction_like<red::min, int>);
static_assert(!shoal::reduction_like<red::none, int>);
static_assert(!shoal::declared_non_associative<user_sum>);

class reduction_misuse : public shoal_test::death_test {};

TEST_F(reduction_misuse, CacheSlotsWithoutAReductionAreNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::cyclic_distribution d(2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {},
                                             {.cache_slots = 8});
                                         ch.close();
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "make_target_channel: cache_slots 8 without a reduction");
}

TEST_F(reduction_misuse, ReducingThroughAClosedHandleIsNamed) {
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         shoal::cyclic_distribution d(2);
                                         auto ch = shoal::make_target_channel<int>(
                                             d, [](std::uint64_t, const int&) {}, {}, red::sum{});
                                         auto copy = ch;
                                         ch.close();
                                         copy.send(1, 1);
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::target_channel::send on a default-constructed or closed channel");
}

}  // namespace
