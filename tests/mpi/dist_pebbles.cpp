// Target channels, distributions and message reductions across processes
// (1 x 2, 2 x 2, 3 x 2 through the dist_* glob, and 4 x 1 in
// tests/CMakeLists.txt); the scenarios are in pebbles_scenarios.hpp (also
// run on one process by tests/test_distribution.cpp and test_reduction.cpp).
#include "shoal/detail/aggregator.hpp"
#include "shoal/stats.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <utility>

#include "keyed_scenarios.hpp"
#include "mpi/dist_support.hpp"
#include "pebbles_scenarios.hpp"
#include "test_target_channel_combine.hpp"

namespace {

using pebbles::op;
using shoal_dist::job_cores;
using shoal_dist::rank0;
using shoal_dist::run_job;
namespace red = shoal::reduction;

auto job() {
  pebbles::g_check_here = rank0();
  return [](auto root) { run_job(root); };
}

TEST(dist_pebbles, BlockTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::block);
}
TEST(dist_pebbles, CyclicTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::cyclic);
}
TEST(dist_pebbles, BlockCyclicTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::block_cyclic);
}
TEST(dist_pebbles, HashedTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::hashed);
}
TEST(dist_pebbles, UnshortCircuitedTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::block, false);
}
TEST(dist_pebbles, CascadesThroughTargetsEndWithThePhase) {
  pebbles::check_cascade(job(), job_cores());
}
TEST(dist_pebbles, MinKeepsTheLeast) {
  pebbles::check_reduction<red::min>(job(), job_cores(), op::min, false, 1024);
}
TEST(dist_pebbles, MaxKeepsTheGreatest) {
  pebbles::check_reduction<red::max>(job(), job_cores(), op::max, false, 1024);
}
TEST(dist_pebbles, SumAddsEveryValue) {
  pebbles::check_reduction<red::sum>(job(), job_cores(), op::sum, false, 16);
}
TEST(dist_pebbles, DropDuplicatesKeepsOnePerSourceAtLeast) {
  pebbles::check_reduction<red::drop_duplicates>(job(), job_cores(), op::drop, false, 1024);
}
TEST(dist_pebbles, MinWithShortCircuit) {
  pebbles::check_reduction<red::min>(job(), job_cores(), op::min, true, 64);
}

// Combine until flush (target_channel.hpp): one record per core and target
// whatever the timing; arrays (block_distribution counts its targets) or a
// hash table (a distribution without local_count), with and without the
// short-circuit, and through hypercube hops.
TEST(dist_pebbles, CombineUntilFlushSumsInArrays) {
  pebbles::check_reduction<red::sum>(job(), job_cores(), op::sum, false, 0, {}, true);
}
TEST(dist_pebbles, CombineUntilFlushMinWithShortCircuit) {
  pebbles::check_reduction<red::min>(job(), job_cores(), op::min, true, 0, {}, true);
}
TEST(dist_pebbles, CombineUntilFlushDropsDuplicatesInAHashTable) {
  pebbles::check_reduction<red::drop_duplicates, decltype(job()), shoal::direct_routing,
                           pebbles::uncounted_block>(job(), job_cores(), op::drop, false, 0, {},
                                                     true);
}
TEST(dist_pebbles, CombineUntilFlushMaxThroughHypercubeHops) {
  pebbles::check_reduction<red::max>(job(), job_cores(), op::max, true, 0,
                                     shoal::hypercube_routing{}, true);
}

// A flat combiner's flushes, dense (marks scanned in target order) and
// sparse (the list of targets reached): sums equal the sequential sums.
TEST(dist_pebbles, CombinedSumsEqualTheSequentialSums) {
  combine_check::g_check_here = rank0();
  combine_check::check_combined_sums([](auto root) { run_job(root); }, job_cores());
}
TEST(dist_pebbles, CombinedSumsWithoutMarksEqualTheSequentialSums) {
  combine_check::g_check_here = rank0();
  combine_check::check_combined_sums([](auto root) { run_job(root); }, job_cores(), true);
}
TEST(dist_pebbles, CombinedSumsWithOwnTargetsInPlaceEqualTheSequentialSums) {
  combine_check::g_check_here = rank0();
  combine_check::check_combined_sums([](auto root) { run_job(root); }, job_cores(), true, true);
}

// Routing (routing.hpp): every value reaches its owner whatever the hops;
// from 3 processes on, hypercube routes have intermediate hops.
TEST(dist_pebbles, HypercubeRoutedTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::cyclic, false, shoal::hypercube_routing{});
  if (rank0() && shoal_dist::g_ranks >= 3) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
  if (rank0() && shoal_dist::g_ranks <= 2) {
    EXPECT_EQ(pebbles::g_forwarded, 0);
  }
}
// Flow control at hops: a bound of 4 values in flight per (core, next core)
// pair holds every forwarding hop back too, and every sum still arrives.
TEST(dist_pebbles, HypercubeRoutedTargetsUnderABoundGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::cyclic, false, shoal::hypercube_routing{},
                      4);
  if (rank0() && shoal_dist::g_ranks >= 3) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
}
TEST(dist_pebbles, NodeRoutedTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::hashed, true, shoal::node_routing{2});
  if (rank0() && shoal_dist::g_ranks >= 4) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
}
/// By way of process 0 (a user-defined routing).
struct via_zero {
  int next_rank(int me, int dest, int) const { return me == 0 ? dest : 0; }
};
TEST(dist_pebbles, UserRoutedTargetsGetEverySum) {
  pebbles::check_sums(job(), job_cores(), pebbles::kind::block, true, via_zero{});
  if (rank0() && shoal_dist::g_ranks >= 3) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
}
// Reductions apply at every hop: sums and minima stay exact, and values
// looked up at hops are counted (lookups == sent + forwarded).
TEST(dist_pebbles, HypercubeRoutedSumReducesAtHops) {
  pebbles::check_reduction<red::sum>(job(), job_cores(), op::sum, false, 256,
                                     shoal::hypercube_routing{});
}
TEST(dist_pebbles, HypercubeRoutedMinReducesAtHops) {
  pebbles::check_reduction<red::min>(job(), job_cores(), op::min, true, 1024,
                                     shoal::hypercube_routing{});
}
// Cascades routed through hops still end with the phase.
TEST(dist_pebbles, RoutedCascadesEndWithThePhase) {
  pebbles::check_cascade(job(), job_cores(), shoal::hypercube_routing{});
}

// Keyed target channels (keyed_target_channel.hpp): the target is a
// function of the value, so a record is the 8-byte value alone, at the
// sender and at every hop: what crosses between processes costs under 12
// bytes per value (a target_channel's record is 16, plus batch headers).
void expect_bare_values() {
  if (!rank0() || shoal_dist::g_ranks < 2) return;
  EXPECT_GT(pebbles::g_net_messages, 0);
  EXPECT_LT(pebbles::g_net_bytes, pebbles::g_net_messages * 12)
      << pebbles::g_net_messages << " values in " << pebbles::g_net_bytes << " bytes";
}
TEST(dist_pebbles, KeyedTargetsTravelWithoutHeaders) {
  pebbles::check_keyed_sums(job(), job_cores(), pebbles::kind::block);
  expect_bare_values();
  if (rank0()) {
    EXPECT_EQ(pebbles::g_forwarded, 0);
  }
}
TEST(dist_pebbles, KeyedHypercubeHopsRecomputeTheNextHopFromTheValue) {
  pebbles::check_keyed_sums(job(), job_cores(), pebbles::kind::cyclic, false,
                            shoal::hypercube_routing{});
  expect_bare_values();
  if (rank0() && shoal_dist::g_ranks >= 3) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
  if (rank0() && shoal_dist::g_ranks <= 2) {
    EXPECT_EQ(pebbles::g_forwarded, 0);
  }
}
TEST(dist_pebbles, KeyedHypercubeHopsUnderABoundGetEverySum) {
  pebbles::check_keyed_sums(job(), job_cores(), pebbles::kind::hashed, true,
                            shoal::hypercube_routing{}, 4);
  if (rank0() && shoal_dist::g_ranks >= 3) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
}
TEST(dist_pebbles, KeyedUserRoutedTargetsGetEverySum) {
  pebbles::check_keyed_sums(job(), job_cores(), pebbles::kind::block_cyclic, true, via_zero{});
  if (rank0() && shoal_dist::g_ranks >= 3) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
}
TEST(dist_pebbles, KeyedNodeRoutedTargetsGetEverySum) {
  pebbles::check_keyed_sums(job(), job_cores(), pebbles::kind::cyclic, true,
                            shoal::node_routing{2});
  if (rank0() && shoal_dist::g_ranks >= 4) {
    EXPECT_GT(pebbles::g_forwarded, 0);
  }
}
TEST(dist_pebbles, KeyedRoutedCascadesEndWithThePhase) {
  pebbles::check_keyed_cascade(job(), job_cores(), shoal::hypercube_routing{});
}

// Depth-limited phases: markers across processes keep FIFO order with data.
TEST(dist_pebbles, DepthTwoPhaseHandlesBothDepths) {
  pebbles::check_depth(job(), job_cores(), 2, 2);
}
TEST(dist_pebbles, DepthFivePhaseHandlesEveryDepth) {
  pebbles::check_depth(job(), job_cores(), 5, 5);
}

// Per-channel coalescing across processes: with 4 values per batch no
// batch carries more (messages per packet, control traffic included, at
// most 4); with the default size the same traffic travels in larger ones.
shoal::core_stats coalesced_traffic(std::uint32_t k) {
  shoal::init(shoal_dist::job_config());
  const auto start = shoal::stats_total();
  shoal_test::run_once([k] {
    shoal::cyclic_distribution d(shoal::cores());
    auto ch = shoal::make_target_channel<int>(d, [](std::uint64_t, const int&) {},
                                              {.coalesce_values = k});
    shoal::on_all_cores([ch] {
      for (int t = 0; t < 4000; ++t) ch.send(static_cast<std::uint64_t>(t), t);
      ch.end_phase();
    });
    auto c = ch;
    c.close();
  });
  auto diff = shoal::stats_total();
  diff -= start;
  shoal::finalize();
  return diff;
}

TEST(dist_pebbles, CoalescingSizeHoldsAcrossProcesses) {
  const shoal::core_stats four = coalesced_traffic(4);
  EXPECT_LE(four.messages_sent, 4 * four.packets_sent) << "a batch of more than 4 values left";
  EXPECT_GE(four.packets_sent, 500U);
  const shoal::core_stats full = coalesced_traffic(0);
  EXPECT_GT(full.messages_sent, 4 * full.packets_sent) << "default batches should be larger";
}

// Buffer memory under hypercube routing (issue 14 item 3): during a phase
// in which every core sends to every core, a process has a network buffer
// open to at most ceil(log2 P) peers at once, the phase's barrier and
// message waves included (route_control_over_hypercube sends them to
// hypercube neighbours too, hop by hop), and every value arrives. Returns {most peers open at once,
// values handled}.
template <class Route>
std::pair<std::int64_t, std::int64_t> phase_peers_and_values(Route route) {
  static std::atomic<std::int64_t> handled{0};
  handled = 0;
  std::pair<std::int64_t, std::int64_t> got{};
  run_job([&got, route] {
    shoal::cyclic_distribution d(shoal::cores());
    auto ch = shoal::make_target_channel<std::int64_t>(
        d, [](std::uint64_t, const std::int64_t&) { handled.fetch_add(1); }, {},
        shoal::reduction::none{}, route);
    std::pair<std::int64_t, std::int64_t>* out = &got;
    shoal::on_all_cores([ch, out] {
      shoal::route_control_over_hypercube(true);
      shoal::barrier();  // on_all_cores' launch messages have left
      shoal::reset_network_buffers_peak();
      shoal::barrier();
      for (int round = 0; round < 64; ++round)
        for (int t = 0; t < shoal::cores(); ++t) ch.send(static_cast<std::uint64_t>(t), round);
      ch.end_phase();
      const bool first = shoal::mycore() % shoal::local_cores() == 0;
      const std::int64_t mine =
          first ? static_cast<std::int64_t>(shoal::local_network_traffic().coalescing_buffers_peak)
                : 0;
      const std::int64_t most = shoal::allreduce_max(mine);
      const std::int64_t values = shoal::allreduce_sum(first ? handled.load() : 0);
      if (shoal::mycore() == 0) *out = {most, values};
      shoal::route_control_over_hypercube(false);
    });
    auto c = ch;
    c.close();
  });
  return got;
}

// Run at 4 x 1 and 8 x 1 by tests/CMakeLists.txt, where ceil(log2 P) is
// below P - 1: the same phase under direct routing must open more peers
// than the bound (it reaches every other process at once), so the peak
// measures what the bound claims and the hypercube's figure is not simply
// what any routing gets (at P <= 3 the two bounds coincide).
TEST(dist_pebbles, HypercubePhaseOpensBuffersToLogPPeers) {
  const auto [peers, values] = phase_peers_and_values(shoal::hypercube_routing{});
  const auto [direct_peers, direct_values] = phase_peers_and_values(shoal::direct_routing{});
  if (!rank0()) return;
  const int p = shoal_dist::g_ranks;
  const auto log_p = static_cast<std::int64_t>(std::bit_width(static_cast<unsigned>(p - 1)));
  EXPECT_LE(peers, log_p) << "peers with a buffer open at once at P = " << p;
  if (p > 1) {
    EXPECT_GE(peers, 1);
  }
  if (log_p < p - 1) {
    EXPECT_GT(direct_peers, log_p) << "direct routing at P = " << p;
  }
  const std::int64_t cores = job_cores();
  EXPECT_EQ(values, 64 * cores * cores);
  EXPECT_EQ(direct_values, 64 * cores * cores);
}

// Peers with a network buffer open at once, the most of any process, while
// global core 0 waits on a global_completion_event (its waves ask every
// process) with route_control_over_hypercube set to `near`.
std::int64_t event_wait_peers(bool near) {
  static std::int64_t most = -1;
  run_job([near] {
    shoal::global_completion_event gce;
    const shoal::completion_ref ref = gce;
    const shoal::global_completion_event* ev = &gce;  // used on its own core only
    shoal::on_all_cores([ref, ev, near] {
      shoal::route_control_over_hypercube(near);
      ref.enroll();
      shoal::barrier();
      shoal::reset_network_buffers_peak();
      shoal::barrier();
      ref.complete();
      if (shoal::mycore() == 0) ev->wait();
      shoal::barrier();
      const bool first = shoal::mycore() % shoal::local_cores() == 0;
      const std::int64_t mine =
          first ? static_cast<std::int64_t>(shoal::local_network_traffic().coalescing_buffers_peak)
                : 0;
      const std::int64_t m = shoal::allreduce_max(mine);
      if (shoal::mycore() == 0) most = m;
      shoal::route_control_over_hypercube(false);
    });
  });
  return most;
}

// A global completion event's waves travel over hypercube edges when the
// switch is on: at most ceil(log2 P) peers, where the direct waves of
// global core 0 reach all P - 1 other processes (run at 4 x 1 and 8 x 1).
TEST(dist_pebbles, EventWavesOverHypercubeOpenLogPPeers) {
  const std::int64_t near = event_wait_peers(true);
  const std::int64_t direct = event_wait_peers(false);
  if (!rank0()) return;
  const int p = shoal_dist::g_ranks;
  const auto log_p = static_cast<std::int64_t>(std::bit_width(static_cast<unsigned>(p - 1)));
  EXPECT_LE(near, log_p) << "peers open at once at P = " << p << " with the switch on";
  EXPECT_EQ(direct, p - 1) << "peers open at once at P = " << p << " with the switch off";
}

// on_all_cores' launch and completion messages go over hypercube edges
// when the switch is on (detail/near_send.hpp): with every protocol routed
// too, an on_all_cores round opens buffers to at most ceil(log2 P) peers
// per process, where launching from rank 0 directly reaches all P - 1
// (run at 4 x 1 and 8 x 1; the peak covers the launch and completions of
// an empty round and the launch of the round that reads it).
TEST(dist_pebbles, OnAllCoresOverHypercubeOpensLogPPeers) {
  static std::int64_t most = -1;
  static std::int64_t ran_all = -1;
  static std::atomic<int> ran{0};
  ran = 0;
  run_job([] {
    shoal::on_all_cores([] { shoal::route_control_over_hypercube(true); });
    shoal::on_all_cores([] {
      shoal::barrier();
      shoal::reset_network_buffers_peak();
      shoal::barrier();
    });
    shoal::on_all_cores([] { ran.fetch_add(1); });
    shoal::on_all_cores([] {
      const bool first = shoal::mycore() % shoal::local_cores() == 0;
      const std::int64_t mine =
          first ? static_cast<std::int64_t>(shoal::local_network_traffic().coalescing_buffers_peak)
                : 0;
      const std::int64_t m = shoal::allreduce_max(mine);
      const std::int64_t r = shoal::allreduce_sum(first ? std::int64_t{ran.load()} : 0);
      if (shoal::mycore() == 0) {
        most = m;
        ran_all = r;
      }
      shoal::route_control_over_hypercube(false);
    });
  });
  if (!rank0()) return;
  const int p = shoal_dist::g_ranks;
  const auto log_p = static_cast<std::int64_t>(std::bit_width(static_cast<unsigned>(p - 1)));
  EXPECT_LE(most, log_p) << "peers open at once at P = " << p;
  EXPECT_EQ(ran_all, job_cores()) << "every core ran the routed round once";
}

// Idle cores ask other processes for work (remote_steal.hpp); those
// requests and their empty replies are protocol: a barrier's message waves
// must not count them, or a drain that waits for two agreeing waves keeps
// finding a few requests more sent than handled (barriers at 16 x 1 took up
// to 3 s). Every core but global core 0 idles in a barrier while core 0
// computes for 20 ms; over that window the idle cores send steal requests,
// and the application messages sent are at most the tasks handed over and
// one reply per handover (2 per stolen task), none for a request.
TEST(dist_pebbles, IdleCoresStealRequestsStayOutOfMessageWaves) {
  static std::array<std::int64_t, 3> got{};  // app messages sent, steal attempts, tasks stolen
  run_job([] {
    shoal::on_all_cores([] {
      const auto here = [] {
        const shoal::core_stats st = shoal::stats_per_core()[static_cast<std::size_t>(
            shoal::mycore() % shoal::local_cores())];
        return std::array<std::int64_t, 3>{
            static_cast<std::int64_t>(shoal::detail::tls_aggregator->app_sent()),
            static_cast<std::int64_t>(st.steal_attempts),
            static_cast<std::int64_t>(st.tasks_stolen)};
      };
      shoal::barrier();
      const std::array<std::int64_t, 3> before = here();
      if (shoal::mycore() == 0) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        while (std::chrono::steady_clock::now() < until) {
        }
      }
      shoal::barrier();
      const std::array<std::int64_t, 3> after = here();
      std::array<std::int64_t, 3> total{};
      for (std::size_t k = 0; k < total.size(); ++k)
        total[k] = shoal::allreduce_sum(after[k] - before[k]);
      if (shoal::mycore() == 0) got = total;
    });
  });
  if (!rank0()) return;
  EXPECT_LE(got[0], 2 * got[2]) << "application messages sent while cores idled in a barrier ("
                                << got[1] << " steal attempts, " << got[2] << " tasks stolen)";
  if (shoal_dist::g_ranks > 1) {
    EXPECT_GT(got[1], 0) << "no steal request was sent: the check saw nothing";
  }
}

// Run by tests/CMakeLists.txt at 2 x 2: a depth-2 phase whose handlers
// send at depth 3 ends the job, naming the depth, on whichever process.
TEST(dist_pebbles, DISABLED_DepthExceededAcrossProcesses) {
  pebbles::check_depth(job(), job_cores(), 3, 2);
}

// Run by tests/CMakeLists.txt at 2 x 2 (expects the job to end, naming the
// target and the distribution): a core of rank 1 sends to a target that a
// distribution of more cores than the job maps outside it.
TEST(dist_pebbles, DISABLED_TargetOutsideTheJobFromRank1) {
  run_job([] {
    shoal::cyclic_distribution d(shoal::cores() + 3);
    auto ch = shoal::make_target_channel<int>(d, [](std::uint64_t, const int&) {});
    shoal::on_all_cores([ch] {
      if (shoal::myrank() == 1) ch.send(static_cast<std::uint64_t>(shoal::cores() + 1), 1);
      ch.end_phase();
    });
    auto c = ch;
    c.close();
  });
}

// Run by tests/CMakeLists.txt at 2 x 2 (expects the job to end, naming the
// target and the distribution): a core of rank 1 sends a value whose key is
// a target that a distribution of more cores than the job maps outside it.
TEST(dist_pebbles, DISABLED_KeyOutsideTheJobFromRank1) {
  run_job([] {
    shoal::cyclic_distribution d(shoal::cores() + 3);
    auto ch = shoal::make_keyed_target_channel<std::int64_t>(
        d, pebbles::target_before{}, [](std::uint64_t, const std::int64_t&) {}, {},
        shoal::hypercube_routing{});
    shoal::on_all_cores([ch] {
      if (shoal::myrank() == 1) ch.send(static_cast<std::int64_t>(shoal::cores() + 2));
      ch.end_phase();
    });
    auto c = ch;
    c.close();
  });
}

}  // namespace

SHOAL_DIST_MAIN()
