// Regressions for defects found in review: each test failed (or was
// undefined behaviour caught by ASan) before its fix.
#include <chrono>
#include <cstdint>

#include "test_support.hpp"

namespace {

using ::testing::ExitedWithCode;

class regressions : public shoal_test::cores_test {};

// A future's state returns to its home core's pool, which lives until
// finalize(), so a future may be destroyed on the main thread after run().
TEST_P(regressions, FutureDestroyedAfterRunReturnsItsStateSafely) {
  shoal::init(config());
  {
    shoal::future<std::int64_t> f;
    std::int64_t got = -1;
    shoal_test::run_once([&] {
      auto table = shoal::global_alloc<std::int64_t>(64);
      shoal::delegate::write(table + 17, std::int64_t{42});
      f = shoal::delegate::async_read(table + 17);
      got = f.get();
      shoal::global_free(table);
    });
    EXPECT_EQ(got, 42);
  }  // f's state is released here, on the main thread
  shoal::finalize();
}

// Buffer sizes that are not a multiple of 64 still give aligned buffers and
// intact 8-byte payloads.
TEST_P(regressions, OddAggregationBufferSizeKeepsPayloadsIntact) {
  shoal::config c = config();
  c.aggregation_bytes = 300;
  constexpr std::int64_t per_core = 20'000;
  std::vector<std::int64_t> sums(static_cast<std::size_t>(ncores()), 0);
  std::int64_t* s = sums.data();
  run(c, [&] {
    shoal::on_all_cores([s] {
      const int to = (shoal::mycore() + 1) % shoal::cores();
      for (std::int64_t i = 0; i < per_core; ++i) {
        const std::uint64_t value = 0x0101010101010101ULL * static_cast<std::uint64_t>(i % 200);
        shoal::send(
            to, [s, value] { s[shoal::mycore()] += static_cast<std::int64_t>(value % 1000003); });
      }
      shoal::flush();
    });
    shoal::delegate::call(0, [] { return 0; });  // round trip: everything sent has run
  });
  std::int64_t expected = 0;
  for (std::int64_t i = 0; i < per_core; ++i)
    expected += static_cast<std::int64_t>(
        (0x0101010101010101ULL * static_cast<std::uint64_t>(i % 200)) % 1000003);
  for (std::int64_t got : sums) EXPECT_EQ(got, expected);
}

// The watchdog fires on a deadlock only: a long computation that never
// yields keeps its core busy and is left alone.
TEST_P(regressions, WatchdogLeavesALongComputationAlone) {
  shoal::config c = config();
  c.watchdog_s = 1;
  bool finished = false;
  run(c, [&] {
    shoal_test::spin_for_ns(2'500'000'000);
    finished = true;
  });
  EXPECT_TRUE(finished);
}

SHOAL_TEST_CORES(regressions);

class regression_deaths : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(regression_deaths, GlobalAllocSizeOverflowIsAnError) {
  EXPECT_EXIT(
      {
        shoal::init(shoal_test::make_config(2));
        shoal::run([] { shoal::global_alloc<std::uint64_t>(std::int64_t{1} << 61); });
      },
      ExitedWithCode(1), "global_alloc: 2305843009213693952 elements of 8 bytes exceed");
}

// Every worker of the capped core is suspended on an event that a queued
// task would complete: run() must not return as if the job had finished.
TEST_F(regression_deaths, WorkerCapDeadlockIsReportedNotMistakenForQuiescence) {
  EXPECT_EXIT(
      {
        shoal::config c = shoal_test::make_config(1);
        c.max_workers_per_core = 1;
        shoal::init(c);
        shoal::run([] {
          static shoal::completion_event* ev = nullptr;
          shoal::completion_event never_started(1);
          ev = &never_started;
          shoal::spawn([] { ev->complete(); });  // needs a second worker
          ev->wait();                            // the only worker suspends
        });
        std::_Exit(0);
      },
      ExitedWithCode(1), "deadlock: 1 tasks wait for a worker.*raise --max-workers-per-core");
}

}  // namespace
