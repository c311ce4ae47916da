// Active routing (routing.hpp): the routes themselves, for every process
// count up to 64, and routed target channels on one process (where routing
// leaves every value in the process). Routes across processes are run by
// tests/mpi/dist_pebbles.cpp (1x2, 2x2, 3x2, 4x1, 8x1).
#include <bit>
#include <set>
#include <vector>

#include "keyed_scenarios.hpp"
#include "pebbles_scenarios.hpp"
#include "test_support.hpp"

namespace {

/// Follows `route` from `me` to `dest`; returns the hops, or -1 when a hop
/// leaves the job, stays put or the walk does not end within `ranks` hops.
template <class Route>
int hops(const Route& route, int me, int dest, int ranks, std::set<int>* peers = nullptr) {
  int at = me, n = 0;
  while (at != dest) {
    const int next = route.next_rank(at, dest, ranks);
    if (next < 0 || next >= ranks || next == at || ++n > ranks) return -1;
    if (peers != nullptr && at == me) peers->insert(next);
    at = next;
  }
  return n;
}

int ceil_log2(int p) { return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1)); }

TEST(routing, DirectIsOneHop) {
  for (int p = 1; p <= 16; ++p)
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b) EXPECT_EQ(hops(shoal::direct_routing{}, a, b, p), a == b ? 0 : 1);
}

// Any P (not only powers of two): every route stays in the job and takes at
// most ceil(log2 P) hops; a process's first hops go to O(log P) peers.
TEST(routing, HypercubeStaysInTheJobWithinLogHops) {
  for (int p = 1; p <= 64; ++p) {
    for (int a = 0; a < p; ++a) {
      std::set<int> peers;
      for (int b = 0; b < p; ++b) {
        const int h = hops(shoal::hypercube_routing{}, a, b, p, &peers);
        ASSERT_GE(h, 0) << "P " << p << ": " << a << " -> " << b << " leaves the job";
        ASSERT_LE(h, ceil_log2(p)) << "P " << p << ": " << a << " -> " << b;
      }
      EXPECT_LE(static_cast<int>(peers.size()), ceil_log2(p)) << "P " << p << " rank " << a;
    }
  }
}

TEST(routing, HypercubeExampleRoutes) {
  const shoal::hypercube_routing h;
  EXPECT_EQ(h.next_rank(0, 3, 4), 2);  // set the high bit first
  EXPECT_EQ(h.next_rank(2, 3, 4), 3);
  EXPECT_EQ(h.next_rank(5, 2, 6), 1);  // clear 4, clear 1, set 2: 5 -> 1 -> 0 -> 2
  EXPECT_EQ(h.next_rank(1, 2, 6), 0);
  EXPECT_EQ(h.next_rank(0, 2, 6), 2);
}

// Two levels: at most two hops; peers are this node's processes and the
// processes of the same local index on other nodes.
TEST(routing, NodeAwareTakesAtMostTwoHops) {
  for (int l = 1; l <= 4; ++l) {
    for (int p = 1; p <= 17; ++p) {
      const shoal::node_routing r{l};
      for (int a = 0; a < p; ++a) {
        std::set<int> peers;
        for (int b = 0; b < p; ++b) {
          const int h = hops(r, a, b, p, &peers);
          ASSERT_GE(h, 0) << "L " << l << " P " << p << ": " << a << " -> " << b;
          ASSERT_LE(h, 2) << "L " << l << " P " << p << ": " << a << " -> " << b;
        }
        const int nodes = (p + l - 1) / l;
        EXPECT_LE(static_cast<int>(peers.size()), (l - 1) + (nodes - 1)) << l << " " << p;
      }
    }
  }
}

TEST(routing, RanksPerNodeFromTheLauncher) {
  ::setenv("RANKS_PER_NODE", "3", 1);
  EXPECT_EQ(shoal::node_routing::from_launcher().ranks_per_node, 3);
  ::setenv("RANKS_PER_NODE", "junk", 1);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ::unsetenv("MPI_LOCALNRANKS");
  ::unsetenv("SLURM_NTASKS_PER_NODE");
  EXPECT_EQ(shoal::node_routing::from_launcher().ranks_per_node, 1);
  ::unsetenv("RANKS_PER_NODE");
}

/// A user-defined routing: by way of process 0.
struct via_zero {
  int next_rank(int me, int dest, int) const { return me == 0 ? dest : 0; }
};
static_assert(shoal::routing_like<via_zero>);
static_assert(shoal::routing_like<shoal::node_routing>);
static_assert(!shoal::routing_like<int>);

// On one process, routed channels deliver exactly as direct ones.
class routing_test : public shoal_test::cores_test {
 protected:
  auto job() const {
    return [cfg = config()](auto root) { shoal_test::run_checked(cfg, root); };
  }
};
TEST_P(routing_test, HypercubeTargetsGetEverySum) {
  pebbles::check_sums(job(), ncores(), pebbles::kind::cyclic, true, shoal::hypercube_routing{});
  EXPECT_EQ(pebbles::g_forwarded, 0);
}
TEST_P(routing_test, NodeRoutedSumReduction) {
  pebbles::check_reduction<shoal::reduction::sum>(job(), ncores(), pebbles::op::sum, false, 64,
                                                  shoal::node_routing{2});
}
// Keyed target channels (keyed_target_channel.hpp): the value's key names
// its target, on every distribution kind, own targets short-circuited or not.
TEST_P(routing_test, KeyedTargetsGetEverySum) {
  for (const pebbles::kind k : {pebbles::kind::block, pebbles::kind::cyclic,
                                pebbles::kind::block_cyclic, pebbles::kind::hashed}) {
    pebbles::check_keyed_sums(job(), ncores(), k, k != pebbles::kind::cyclic,
                              shoal::hypercube_routing{});
    EXPECT_EQ(pebbles::g_forwarded, 0);
    EXPECT_EQ(pebbles::g_net_messages, 0);
  }
}
TEST_P(routing_test, KeyedCascadesEndWithThePhase) {
  pebbles::check_keyed_cascade(job(), ncores());
}
SHOAL_TEST_CORES(routing_test);

// A keyed channel's send through a handle that cannot send ends the job
// naming the handle, whether the target is this core's own (short-circuited:
// the keyed channel names itself) or another core's (staged: the runtime
// names the closed channel id).
struct key_is_value {
  std::uint64_t operator()(const std::uint64_t& v) const noexcept { return v; }
};
class keyed_misuse : public shoal_test::death_test {};

TEST_F(keyed_misuse, SendThroughADefaultHandleIsNamed) {
  EXPECT_EXIT(
      shoal_test::run_to_death(
          shoal_test::make_config(2),
          [] {
            shoal::keyed_target_channel<std::uint64_t, shoal::cyclic_distribution, key_is_value> ch;
            ch.send(0);
          }),
      testing::ExitedWithCode(shoal::exit_status::fatal),
      "shoal::keyed_target_channel::send on a default-constructed or closed channel");
}

TEST_F(keyed_misuse, SendThroughAClosedHandleIsNamed) {
  for (const std::uint64_t target : {0, 1}) {  // this core's own, the other core's
    EXPECT_EXIT(
        shoal_test::run_to_death(shoal_test::make_config(2),
                                 [target] {
                                   auto ch = shoal::make_keyed_target_channel<std::uint64_t>(
                                       shoal::cyclic_distribution(2), key_is_value{},
                                       [](std::uint64_t, const std::uint64_t&) {});
                                   auto copy = ch;
                                   ch.close();
                                   copy.send(target);
                                 }),
        testing::ExitedWithCode(shoal::exit_status::fatal),
        "send on (a default-constructed or closed channel|channel id [0-9]+, which is closed)")
        << "target " << target;
  }
}

}  // namespace
