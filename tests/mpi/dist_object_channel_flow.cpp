// Object-channel flow control across processes (1 x 2, 2 x 2, 3 x 2): every
// core floods core 0's slow handler with strings on a channel bounded at 16
// records; each sender asks core 0 every 64 sends how many of its records
// it has handled: never more than 16 behind (tests/object_channel_flow_scenario.hpp).
#include "mpi/dist_support.hpp"
#include "object_channel_flow_scenario.hpp"

namespace {

TEST(dist_object_channel_flow, ABoundedFloodNeverHasMoreThanTheBoundUnhandled) {
  constexpr std::int64_t per_sender = 2000;
  shoal_dist::run_job([] { flow_scenario::flood(16, per_sender, false); });
  // Senders check on their own process; core 0's process counts what arrived.
  EXPECT_LE(flow_scenario::g.max_backlog.load(), 16) << "rank " << shoal_dist::g_rank;
  if (!shoal_dist::rank0()) return;
  const auto& g = flow_scenario::g;
  EXPECT_EQ(g.good.load(), per_sender * (shoal_dist::job_cores() - 1));
  EXPECT_EQ(g.bad.load(), 0);
  EXPECT_EQ(g.out_of_order.load(), 0);
}

}  // namespace

SHOAL_DIST_MAIN()
