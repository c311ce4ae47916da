// Draining barrier, channel phases, drain() and flow control on one process
// (1, 2 and 4 cores); the same scenarios run at 1x2, 2x2 and 3x2 in
// tests/mpi/dist_phases.cpp. See phases_scenarios.hpp for what each checks.
#include "phases_scenarios.hpp"
#include "test_support.hpp"

namespace {

using ::testing::ExitedWithCode;

// Closures capture channel handles: the bound travels in the same 4 bytes.
static_assert(sizeof(shoal::channel<int>) == 4);

class phases_test : public shoal_test::cores_test {
 protected:
  auto job() {
    return [this](auto root) { run(root); };
  }
};

TEST_P(phases_test, BarrierDrainsCascadesEveryRound) {
  phases::check_barrier_rounds(job(), ncores());
}

TEST_P(phases_test, EndPhaseCountsEveryCascadeAcrossReopenedChannels) {
  phases::check_reopened_phases(job(), ncores());
}

TEST_P(phases_test, TwoChannelsHaveIndependentPhases) {
  phases::check_independent_phases(job(), ncores());
}

TEST_P(phases_test, HandlerOfOneChannelSendingOnAnother) {
  phases::check_forwarding_phases(job(), ncores());
}

TEST_P(phases_test, DrainFromOneTaskWaitsForCascades) {
  phases::check_drained_from_root(job(), ncores());
}

TEST_P(phases_test, FlowControlBoundsValuesInFlightPerPair) {
  phases::check_flow_control(job(), ncores(), 16, 3000);
}

TEST_P(phases_test, FlowControlBoundOfOne) { phases::check_flow_control(job(), ncores(), 1, 500); }

// 300000 values of 8 bytes per core: about 150 aggregation buffers, over
// twice a core's pool, sent in a loop that never yields.
TEST_P(phases_test, FloodFromComputingCoresKeepsPollingWithoutAWindow) {
  phases::check_flood(job(), ncores(), 300000);
}

// Without a bound the same measurement sees far more than 16 values in
// flight: the bounded test above measures something.
// The control case of the flow-control tests: without a bound, values pile
// up in flight. Needs two cores or more (a single core handles nothing while
// it sends), so it is a plain test at 2 and 4 cores rather than a skip at 1.
TEST(phases_unbounded, WithoutFlowControlManyValuesAreInFlight) {
  for (const int n : {2, 4}) {
    shoal_test::run_checked(shoal_test::make_config(n), [] { phases::flow_controlled(0, 3000); });
    EXPECT_EQ(phases::g_fc.total, static_cast<phases::i64>(n) * n * 3000) << n << " cores";
    EXPECT_GT(phases::g_fc.max_in_flight, 16) << n << " cores";
  }
}

// The arrival-only barrier still separates phases of shared-memory writes.
TEST_P(phases_test, ArrivalBarrierHoldsBackEarlyCores) {
  std::atomic<int> arrived{0};
  std::atomic<int> early{0};
  run([&] {
    auto* a = &arrived;
    auto* e = &early;
    shoal::on_all_cores([a, e] {
      for (int round = 1; round <= 20; ++round) {
        if (shoal::mycore() == round % shoal::cores()) shoal_test::spin_for_ns(1'000'000);
        a->fetch_add(1);
        shoal::arrival_barrier();
        if (a->load() < round * shoal::cores()) e->fetch_add(1);
        shoal::arrival_barrier();
      }
    });
  });
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(arrived.load(), 20 * ncores());
}

TEST_P(phases_test, FencesCompleteAfterTheirHandlersAndInOrder) { phases::check_fences(job()); }

SHOAL_TEST_CORES(phases_test);

// ------------------------------------------------------------------ misuse

class phases_misuse : public shoal_test::death_test {};

/// Two cores: a handler can run on a core other than the root's.
template <class F>
void run_to_death(F body) {
  shoal_test::run_to_death(shoal_test::make_config(2), body);
}

TEST_F(phases_misuse, EndPhaseOnADefaultChannelIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                shoal::channel<int> ch;
                ch.end_phase();
              }),
              ExitedWithCode(shoal::exit_status::fatal), "channel::end_phase on a closed or default-constructed channel");
}

TEST_F(phases_misuse, EndPhaseOnAClosedChannelIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                auto ch = shoal::make_channel<int>([](int) {});
                ch.close();
                ch.end_phase();
              }),
              ExitedWithCode(shoal::exit_status::fatal), "channel::end_phase on a closed or default-constructed channel");
}

TEST_F(phases_misuse, DrainThroughAHandleOfAClosedChannelIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                auto ch = shoal::make_channel<int>([](int) {});
                auto copy = ch;
                ch.close();
                copy.drain();
              }),
              ExitedWithCode(shoal::exit_status::fatal), "channel::drain on channel [0-9]+, which is not open");
}

TEST_F(phases_misuse, EndPhaseFromAHandlerIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                auto ch = shoal::make_channel<int>([](int) {});
                shoal::send(1, [ch] { ch.end_phase(); });
                ch.drain();
              }),
              ExitedWithCode(shoal::exit_status::fatal), "channel::end_phase on channel [0-9]+ called outside a task");
}

TEST_F(phases_misuse, FenceOnADefaultChannelIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                shoal::channel<int> ch;
                ch.fence().wait();
              }),
              ExitedWithCode(shoal::exit_status::fatal),
              "channel::fence on a closed or default-constructed channel");
}

TEST_F(phases_misuse, FenceOnAClosedChannelIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                auto ch = shoal::make_channel<int>([](int) {});
                ch.close();
                ch.fence().wait();
              }),
              ExitedWithCode(shoal::exit_status::fatal),
              "channel::fence on a closed or default-constructed channel");
}

TEST_F(phases_misuse, FenceFromAHandlerIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                auto ch = shoal::make_channel<int>([](int) {});
                shoal::send(1, [ch] { (void)ch.fence(); });
                ch.drain();
              }),
              ExitedWithCode(shoal::exit_status::fatal),
              "channel::fence on channel [0-9]+ called outside a task");
}

TEST_F(phases_misuse, FenceTestedOnAnotherCoreIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                auto ch = shoal::make_channel<int>([](int) {});
                ch.send(1, 7);
                const shoal::channel_fence f = ch.fence();
                shoal::send(1, [f] { (void)f.ready(); });
                shoal::drain_messages();
              }),
              ExitedWithCode(shoal::exit_status::fatal),
              "channel_fence::ready on core 1 for a fence of channel [0-9]+ made on core 0");
}

TEST_F(phases_misuse, BarrierFromAHandlerIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                shoal::send(1, [] { shoal::barrier(); });
                shoal::drain_messages();
              }),
              ExitedWithCode(shoal::exit_status::fatal), "barrier called outside a task");
}

}  // namespace

namespace {

// end_phase called on some cores only: the watchdog names the channel and
// the phase each waiting core is in.
TEST_F(phases_misuse, WatchdogNamesTheChannelPhase) {
  EXPECT_EXIT(
      {
        shoal::config c = shoal_test::make_config(2);
        c.watchdog_s = 1;
        shoal::init(c);
        shoal::run([] {
          auto ch = shoal::make_channel<int>([](int) {});
          shoal::on_all_cores([ch] {
            ch.end_phase();
            if (shoal::mycore() == 1) ch.end_phase();  // core 0 never joins phase 1
          });
        });
      },
      [](int status) { return status != 0; }, "waiting on channel [0-9]+ phase #1");
}

}  // namespace
