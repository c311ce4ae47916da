// Draining barrier, channel phases, drain() and flow control across
// processes (1x2, 2x2, 3x2); the scenarios and their closed-form counts are
// in phases_scenarios.hpp (also run on one process by tests/test_phases.cpp).
// The flow-control bound is checked at receivers for pairs of cores of one
// process (a receiver can read the sender's count only there); pairs across
// processes are checked for exact totals and completion.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "comm/network.hpp"
#include "mpi/dist_support.hpp"
#include "phases_scenarios.hpp"

namespace {

using shoal_dist::job_cores;
using shoal_dist::rank0;
using shoal_dist::run_job;

auto job() {
  phases::g_check_here = rank0();
  return [](auto root) { run_job(root); };
}

TEST(dist_phases, BarrierDrainsCascadesEveryRound) {
  phases::check_barrier_rounds(job(), job_cores());
}

TEST(dist_phases, EndPhaseCountsEveryCascadeAcrossReopenedChannels) {
  phases::check_reopened_phases(job(), job_cores());
}

TEST(dist_phases, TwoChannelsHaveIndependentPhases) {
  phases::check_independent_phases(job(), job_cores());
}

TEST(dist_phases, HandlerOfOneChannelSendingOnAnother) {
  phases::check_forwarding_phases(job(), job_cores());
}

TEST(dist_phases, DrainFromOneTaskWaitsForCascades) {
  phases::check_drained_from_root(job(), job_cores());
}

TEST(dist_phases, FencesCompleteAfterTheirHandlersAndInOrder) { phases::check_fences(job()); }

// Run by tests/CMakeLists.txt at 2 x 2 (expects the job to end, naming the
// cause): on rank 1 only, a handler makes a fence.
TEST(dist_phases, DISABLED_FenceFromAHandlerOnRank1) {
  run_job([] {
    auto ch = shoal::make_channel<int>([](int) {});
    shoal::on_all_cores([ch] {
      if (shoal::myrank() == 1) shoal::send(shoal::mycore(), [ch] { (void)ch.fence(); });
      shoal::barrier();
    });
    ch.close();
  });
}

TEST(dist_phases, FlowControlBoundsValuesInFlightPerPair) {
  phases::check_flow_control(job(), job_cores(), 16, 2000);
}

// A channel flood from computing cores across processes (1x2, 2x2, 3x2;
// 2x1 in tests/CMakeLists.txt) with no window of the senders' own.
TEST(dist_phases, FloodFromComputingCoresKeepsPollingWithoutAWindow) {
  phases::check_flood(job(), job_cores(), 300000);
}

// With control messages routed over hypercube edges, the collectives run
// as butterfly rounds (src/comm/butterfly_phase.hpp): the same scenarios
// must drain every cascade, at 2 processes (one bit) and 3 (an extra
// process folded into rank 0 before the rounds and told the totals after).
TEST(dist_phases, ScenariosWithControlOverHypercubeEdges) {
  shoal::route_control_over_hypercube(true);
  phases::check_barrier_rounds(job(), job_cores());
  phases::check_reopened_phases(job(), job_cores());
  phases::check_forwarding_phases(job(), job_cores());
  shoal::route_control_over_hypercube(false);
}

// Run by tests/CMakeLists.txt at 2 x 2 (expects the job to end, naming the
// collective): on rank 1 only, local core 0 enters a barrier with control
// over hypercube edges and local core 1, later, with it off.
TEST(dist_phases, DISABLED_ControlSwitchDiffersBetweenCoresOfRank1) {
  run_job([] {
    shoal::on_all_cores([] {
      if (shoal::myrank() == 1) {
        const bool late = shoal::mycore() % shoal::local_cores() == 1;
        if (late) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        shoal::route_control_over_hypercube(!late);
      }
      shoal::barrier();
    });
  });
}

// Run by tests/CMakeLists.txt at 2 x 2 (expects the job to end in the
// barrier's first round, naming both processes' settings): rank 1 alone
// enters a barrier with control over hypercube edges, on both its cores.
TEST(dist_phases, DISABLED_ProcessesDisagreeOnControlSwitch) {
  run_job([] {
    shoal::on_all_cores([] {
      if (shoal::myrank() == 1) shoal::route_control_over_hypercube(true);
      shoal::barrier();
    });
  });
}

// push_staged_partial() (what a channel phase's values, end_phase_depth's
// markers and wave replies leave through) sends a partly filled network
// buffer at once, even while an earlier one to the same process is still in
// flight (push_staged() and shoal::flush() leave it to combine): global core 0
// sends a buffer's worth of values to the first core of the next process,
// pushes it out, sends a few more and pushes again without polling in
// between, so the first cannot have been seen finished; no buffer may be left
// open. The other cores of process 0 spin meanwhile (a task that does not
// yield runs no poll hook), so that none of them opens a buffer (a steal
// request) between the push and the look. Run at 1 x 2, 2 x 2, 3 x 2 (where
// on one process the values stay in it and there is no network to look at)
// and at 2 x 1 (tests/CMakeLists.txt).
std::atomic<std::int64_t> g_values_handled{0};
std::int64_t g_open_after_push = -1;
std::atomic<int> g_spinning{0};
std::atomic<bool> g_looked{false};

TEST(dist_phases, PushStagedPartialLeavesNoPartlyFilledBuffer) {
  g_values_handled = 0;
  g_open_after_push = -1;
  g_spinning = 0;
  g_looked = false;
  constexpr int first = 3000, second = 10;  // first: more than one 16 KiB aggregation buffer
  // The first core of process 1, or on one process its last core.
  const int to =
      shoal_dist::g_ranks > 1 ? shoal_dist::g_cores_per_rank : shoal_dist::g_cores_per_rank - 1;
  run_job([to] {
    auto ch = shoal::make_channel<std::uint64_t>([](std::uint64_t) { ++g_values_handled; });
    shoal::on_all_cores([ch, to] {
      if (shoal::myrank() == 0 && shoal::mycore() != 0) {
        ++g_spinning;
        while (!g_looked.load()) {
        }
      }
      if (shoal::mycore() == 0) {
        while (g_spinning.load() != shoal::local_cores() - 1) shoal::yield();
        for (int i = 0; i < first; ++i) ch.send(to, std::uint64_t(i));
        shoal::detail::push_staged_partial();
        for (int i = 0; i < second; ++i) ch.send(to, std::uint64_t(i));
        shoal::detail::push_staged_partial();
        if (shoal::detail::network* net = shoal::detail::this_network()) {
          net->reset_buffers_peak();  // the peak restarts at what is open now
          g_open_after_push = static_cast<std::int64_t>(net->open_peak());
        }
        g_looked = true;
      }
      ch.end_phase();
    });
    ch.close();
  });
  if (rank0() && shoal_dist::g_ranks > 1) {
    EXPECT_EQ(g_open_after_push, 0);
  }
  if (shoal_dist::g_rank == to / shoal_dist::g_cores_per_rank) {
    EXPECT_EQ(g_values_handled.load(), first + second);
  }
}

// Median cost of an empty collective, in microseconds (printed on rank 0;
// quoted in include/shoal/detail/phase_barrier.hpp).
double median_us(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
std::vector<double> g_barrier_us, g_phase_us, g_depth_us, g_arrival_us;

void time_empty_collectives(int reps, bool over_hypercube) {
  g_barrier_us.clear();
  g_phase_us.clear();
  g_depth_us.clear();
  g_arrival_us.clear();
  run_job([reps, over_hypercube] {
    auto ch = shoal::make_channel<int>([](int) {});
    shoal::on_all_cores([ch, reps, over_hypercube] {
      shoal::route_control_over_hypercube(over_hypercube);
      shoal::barrier();  // every core has switched
      const bool me0 = shoal::mycore() == 0;
      using clock = std::chrono::steady_clock;
      auto time = [&](auto op, std::vector<double>& into) {
        for (int i = 0; i < reps; ++i) {
          const auto t0 = clock::now();
          op();
          const double us = std::chrono::duration<double, std::micro>(clock::now() - t0).count();
          if (me0) into.push_back(us);
        }
      };
      time([] { shoal::barrier(); }, g_barrier_us);
      time([ch] { ch.end_phase(); }, g_phase_us);
      time([ch] { ch.end_phase_depth(1); }, g_depth_us);
      time([] { shoal::arrival_barrier(); }, g_arrival_us);
      shoal::barrier();
      shoal::route_control_over_hypercube(false);
    });
    ch.close();
  });
  if (rank0())
    std::printf(
        "[ cost ] %d x %d%s: empty barrier %.1f us, end_phase %.1f us, end_phase_depth(1) "
        "%.1f us, arrival_barrier %.1f us (median of %d, core 0)\n",
        shoal_dist::g_ranks, shoal_dist::g_cores_per_rank,
        over_hypercube ? " (control over hypercube edges)" : "", median_us(g_barrier_us),
        median_us(g_phase_us), median_us(g_depth_us), median_us(g_arrival_us), reps);
}

TEST(dist_phases, CostOfEmptyBarrierAndEndPhase) {
  time_empty_collectives(400, false);
  time_empty_collectives(100, true);
}

}  // namespace

SHOAL_DIST_MAIN()
