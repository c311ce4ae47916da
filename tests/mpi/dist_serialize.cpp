// Object channels (include/shoal/object_channel.hpp) across processes: the
// exchange of tests/object_channel_scenarios.hpp (strings of length 0, 1,
// 1000 and 10000, vectors, tuples, a user type) at 1 x 2, 2 x 2 and 3 x 2.
#include "mpi/dist_support.hpp"
#include "object_channel_scenarios.hpp"

namespace {

TEST(dist_serialize, EveryBuiltInAndAUserTypeArriveIntactAndInOrder) {
  constexpr int per_pair = 24;
  shoal_dist::run_job([] { object_scenarios::exchange(per_pair); });
  if (!shoal_dist::rank0()) return;
  const auto& t = object_scenarios::g_totals;
  const std::int64_t cores = shoal_dist::job_cores();
  EXPECT_EQ(t.good, 2 * per_pair * cores * cores);
  EXPECT_EQ(t.bad, 0);
  EXPECT_EQ(t.out_of_order, 0);
}

}  // namespace

SHOAL_DIST_MAIN()
