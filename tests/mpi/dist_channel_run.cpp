// channel::send_run across processes (1x2, 2x2, 3x2): the scenarios of
// tests/channel_run_scenario.hpp (also run on one process by
// tests/test_channel_run.cpp), and misuse on rank 1 only.
#include "channel_run_scenario.hpp"
#include "mpi/dist_support.hpp"

namespace {

using shoal_dist::job_cores;
using shoal_dist::rank0;

auto job() {
  run_scenario::g_check_here = rank0();
  return [](auto root) { shoal_dist::run_job(root); };
}

TEST(dist_channel_run, RunsKeepOrderWithSingleSendsAndSplitAtACoalescedBatch) {
  run_scenario::check_ordered(job(), 7, job_cores());
}

TEST(dist_channel_run, RunsLargerThanSeveralAggregationBuffersKeepOrder) {
  run_scenario::check_ordered(job(), 0, job_cores());
}

TEST(dist_channel_run, RunsOnABoundedChannelStayWithinTheBound) {
  run_scenario::check_bounded(job(), 16, 20, job_cores());
}

// Run by tests/channel_run.cmake at 2 x 2 (expects the job to end, naming
// the cause): on rank 1 only, a run on a default-constructed channel.
TEST(dist_channel_run, DISABLED_SendRunOnADefaultChannelOnRank1) {
  shoal_dist::run_job([] {
    shoal::on_all_cores([] {
      if (shoal::myrank() == 1) {
        shoal::channel<int> ch;
        const std::array<int, 2> v{1, 2};
        ch.send_run(0, std::span<const int>(v));
      }
      shoal::barrier();
    });
  });
}

}  // namespace

SHOAL_DIST_MAIN()
