// Tasks and workers: spawn (local and stealable) runs every task exactly
// once, masses of suspended workers resume, yield interleaves round-robin,
// parallel_for / on_all_cores / barrier, stealing, the root task's
// exception reaching run()'s caller, quiescence at the end of run(), the
// worker limit and nested parallelism.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal_test::cores_test;
using shoal_test::padded_counter;
constexpr auto relaxed = std::memory_order_relaxed;

/// Counts entries of `runs` that are not exactly 1.
template <class V>
std::int64_t not_once(const V& runs) {
  return std::count_if(runs.begin(), runs.end(), [](const auto& r) { return r.load() != 1; });
}

// ------------------------------------------------------------------ spawn

class task_spawn : public cores_test {};

TEST_P(task_spawn, MillionLocalTasksRunExactlyOnceOnTheSpawningCore) {
  constexpr std::int64_t n = 1'000'000;
  std::vector<std::atomic<std::uint8_t>> runs(n);
  std::atomic<std::int64_t> total{0};
  std::atomic<std::int64_t> off_core{0};
  run([&] {
    auto* r = runs.data();
    auto* t = &total;
    auto* off = &off_core;
    for (std::int64_t i = 0; i < n; ++i) {
      shoal::spawn([r, t, off, i] {
        r[i].fetch_add(1, relaxed);
        t->fetch_add(1, relaxed);
        if (shoal::mycore() != 0) off->fetch_add(1, relaxed);
      });
    }
  });
  EXPECT_EQ(total.load(), n);
  EXPECT_EQ(not_once(runs), 0);
  EXPECT_EQ(off_core.load(), 0) << "a local task ran on another core";
}

TEST_P(task_spawn, MillionStealableTasksRunExactlyOnce) {
  constexpr std::int64_t outer = 1000;
  constexpr std::int64_t inner = 1000;
  constexpr std::int64_t n = outer * inner;
  std::vector<std::atomic<std::uint8_t>> runs(n);
  std::atomic<std::int64_t> total{0};
  std::vector<padded_counter> per_core(static_cast<std::size_t>(ncores()));
  run([&] {
    auto* r = runs.data();
    auto* t = &total;
    auto* pc = per_core.data();
    for (std::int64_t o = 0; o < outer; ++o) {
      shoal::spawn<shoal::stealable>([r, t, pc, o] {
        for (std::int64_t k = 0; k < inner; ++k) {
          const std::int64_t i = o * inner + k;
          shoal::spawn<shoal::stealable>([r, t, pc, i] {
            r[i].fetch_add(1, relaxed);
            t->fetch_add(1, relaxed);
            pc[shoal::mycore()].value.fetch_add(1, relaxed);
          });
        }
      });
    }
  });
  EXPECT_EQ(total.load(), n);
  EXPECT_EQ(not_once(runs), 0);
  std::int64_t sum = 0;
  for (const auto& c : per_core) sum += c.value.load();
  EXPECT_EQ(sum, n);
}

TEST_P(task_spawn, FlatStealableSpawnsBeyondTheDequeCapacityAllRun) {
  // The public deque holds 4096 tasks; the rest must still run.
  constexpr std::int64_t n = 200'000;
  std::vector<std::atomic<std::uint8_t>> runs(n);
  run([&] {
    auto* r = runs.data();
    for (std::int64_t i = 0; i < n; ++i)
      shoal::spawn<shoal::stealable>([r, i] { r[i].fetch_add(1, relaxed); });
  });
  EXPECT_EQ(not_once(runs), 0);
}

TEST_P(task_spawn, HandlersAndRemoteTasksMaySpawn) {
  constexpr int per_core = 1000;
  std::vector<padded_counter> ran_on(static_cast<std::size_t>(ncores()));
  std::atomic<std::int64_t> wrong{0};
  run([&] {
    auto* ro = ran_on.data();
    auto* w = &wrong;
    for (int c = 0; c < shoal::cores(); ++c) {
      shoal::send(c, [ro, w, c] {
        for (int i = 0; i < per_core; ++i) {
          shoal::spawn([ro, w, c] {
            if (shoal::mycore() != c) w->fetch_add(1, relaxed);
            ro[shoal::mycore()].value.fetch_add(1, relaxed);
          });
        }
      });
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  for (int c = 0; c < ncores(); ++c)
    EXPECT_EQ(ran_on[static_cast<std::size_t>(c)].value.load(), per_core) << c;
}

TEST_P(task_spawn, RunCanBeCalledRepeatedlyBetweenInitAndFinalize) {
  shoal::init(config());
  std::int64_t total = 0;
  for (int round = 1; round <= 5; ++round) {
    std::atomic<std::int64_t> count{0};
    shoal_test::run_once([&] {
      auto* c = &count;
      for (int i = 0; i < 1000 * round; ++i)
        shoal::spawn<shoal::stealable>([c] { c->fetch_add(1, relaxed); });
    });
    EXPECT_EQ(count.load(), 1000 * round);
    total += count.load();
  }
  shoal::finalize();
  EXPECT_EQ(total, 15000);
  // And init() again with another core count.
  shoal::config other = config();
  other.cores = ncores() == 1 ? 2 : 1;
  int seen = 0;
  shoal_test::run_checked(other, [&] { seen = shoal::cores(); });
  EXPECT_EQ(seen, other.cores);
}

TEST_P(task_spawn, StatsCountSpawnedAndRunTasks) {
  constexpr std::uint64_t n = 5000;
  shoal::init(config());
  shoal_test::run_once([] {
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        shoal::spawn([] {});
      } else {
        shoal::spawn<shoal::stealable>([] {});
      }
    }
  });
  const auto st = shoal::stats_total();
  shoal::finalize();
  EXPECT_EQ(st.tasks_spawned, n + 1) << "the tasks and the root";
  EXPECT_EQ(st.tasks_run, n + 1);
  EXPECT_GE(st.workers_created, 1u);
}

SHOAL_TEST_CORES(task_spawn);

// A task that yields with nothing else ready on its core offers the CPU to
// the OS under --idle yield and sleep (a spin on another thread's work then
// leaves that thread the CPU), and never under spin; a yield that switches
// to another ready task does not.
std::uint64_t os_yields_of(shoal::idle_kind idle, bool with_partner) {
  shoal::config cfg;
  cfg.cores = 1;
  cfg.idle = idle;
  shoal::init(cfg);
  std::uint64_t before = 0;
  std::uint64_t after = 0;
  shoal_test::run_once([&] {
    before = shoal::stats_per_core()[0].os_yields;
    bool stop = false;
    bool partner_done = !with_partner;
    if (with_partner) {
      shoal::spawn([&stop, &partner_done] {
        while (!stop) shoal::yield();
        partner_done = true;
      });
      shoal::yield();  // the partner starts and is ready from here on
    }
    for (int i = 0; i < 200; ++i) shoal::yield();
    stop = true;
    after = shoal::stats_per_core()[0].os_yields;
    while (!partner_done) shoal::yield();  // it reads `stop` on this stack
  });
  shoal::finalize();
  return after - before;
}

TEST(lone_yield, OffersTheCpuUnderSleepAndYieldOnly) {
  EXPECT_GE(os_yields_of(shoal::idle_kind::sleep, false), 200u);
  EXPECT_GE(os_yields_of(shoal::idle_kind::yield, false), 200u);
  EXPECT_EQ(os_yields_of(shoal::idle_kind::spin, false), 0u);
}

TEST(lone_yield, NotWhenAnotherTaskIsReady) {
  EXPECT_EQ(os_yields_of(shoal::idle_kind::sleep, true), 0u);
}

// ------------------------------------------------------ suspended workers

class suspended_workers : public cores_test {};

struct suspend_shared {
  std::int64_t per_core = 0;
  shoal::completion_event* arrived = nullptr;  // on core 0
  shoal::completion_event* resumed = nullptr;  // on core 0
  std::atomic<shoal::completion_event*> gate[4] = {};
  std::atomic<std::int64_t> suspended_now{0};
  std::atomic<std::int64_t> woke_early{0};
  std::atomic<std::int64_t> wrong_core{0};
};

// One leader task per core: opens that core's gate event, spawns the
// waiters and outlives them.
void suspend_leader(suspend_shared* s) {
  shoal::completion_event gate(1);
  shoal::completion_event finished(s->per_core);
  s->gate[shoal::mycore()].store(&gate);
  shoal::completion_event* g = &gate;
  shoal::completion_event* f = &finished;
  const int me = shoal::mycore();
  for (std::int64_t i = 0; i < s->per_core; ++i) {
    shoal::spawn([s, g, f, me] {
      s->suspended_now.fetch_add(1);
      s->arrived->complete();
      g->wait();
      if (g->count() != 0) s->woke_early.fetch_add(1);
      if (shoal::mycore() != me) s->wrong_core.fetch_add(1);
      s->suspended_now.fetch_sub(1);
      s->resumed->complete();
      f->complete();
    });
  }
  finished.wait();
}

TEST_P(suspended_workers, HundredThousandSuspendedWorkersAllResume) {
  constexpr std::int64_t n = 100'000;
  shoal::config cfg = config();
  cfg.max_workers_per_core = 200'000;
  cfg.stack_kb = 32;
  suspend_shared sh;
  sh.per_core = n / ncores();
  ASSERT_EQ(sh.per_core * ncores(), n);
  std::int64_t suspended_at_peak = -1;
  std::int64_t rss_growth = -1;
  const std::int64_t rss_before = shoal_test::rss_bytes();
  run(cfg, [&] {
    shoal::completion_event arrived(n);
    shoal::completion_event resumed(n);
    sh.arrived = &arrived;
    sh.resumed = &resumed;
    suspend_shared* s = &sh;
    for (int c = 0; c < shoal::cores(); ++c)
      shoal::send(c, [s] { shoal::spawn([s] { suspend_leader(s); }); });
    arrived.wait();
    suspended_at_peak = sh.suspended_now.load();
    rss_growth = shoal_test::rss_bytes() - rss_before;
    for (int c = 0; c < shoal::cores(); ++c)
      shoal::send(c, [s, c] { s->gate[c].load()->complete(); });
    resumed.wait();
  });
  EXPECT_EQ(suspended_at_peak, n) << "every worker was suspended at once";
  EXPECT_EQ(sh.suspended_now.load(), 0);
  EXPECT_EQ(sh.woke_early.load(), 0);
  EXPECT_EQ(sh.wrong_core.load(), 0);
  // A suspended worker costs about one touched stack page (measured: ~4.1
  // KiB in a release build, ~8.1 KiB in a debug ASan build); guards cost no
  // memory. Allow three pages, below the 16 KiB stack; sanitizer builds only
  // get a sanity bound.
  const std::int64_t per_worker = rss_growth / n;
  RecordProperty("rss_growth_bytes", std::to_string(rss_growth));
  EXPECT_LT(per_worker, shoal_test::sanitized_build ? 32 * 1024 : 12 * 1024)
      << "RSS grew by " << rss_growth << " bytes for " << n << " suspended workers";
}

INSTANTIATE_TEST_SUITE_P(Cores, suspended_workers, ::testing::Values(1, 2, 4),
                         shoal_test::cores_name);

// ------------------------------------------------------------------ yield

class task_yield : public cores_test {};

TEST_P(task_yield, RoundRobinAmongReadyWorkersOfOneCore) {
  constexpr int tasks = 4;
  constexpr int rounds = 50;
  std::vector<int> order;
  order.reserve(tasks * rounds);
  run([&] {
    auto* o = &order;
    shoal_test::run_gated_workers(tasks, [o](int t) {
      for (int r = 0; r < rounds; ++r) {
        o->push_back(t);
        shoal::yield();
      }
    });
  });
  ASSERT_EQ(order.size(), static_cast<std::size_t>(tasks * rounds));
  // Each round holds every task once, in the same order as the first round.
  const std::vector<int> first(order.begin(), order.begin() + tasks);
  std::vector<int> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  for (int t = 0; t < tasks; ++t) EXPECT_EQ(sorted[static_cast<std::size_t>(t)], t);
  for (int r = 1; r < rounds; ++r) {
    const std::vector<int> round(order.begin() + r * tasks, order.begin() + (r + 1) * tasks);
    EXPECT_EQ(round, first) << "round " << r;
  }
}

TEST_P(task_yield, YieldLetsANewlySpawnedTaskStart) {
  // spawn() then `while (!flag) yield();` is the simplest hand-off; yield's
  // contract is "lets other work of this core run", so the spawned task must
  // start while the spawner keeps yielding.
  bool started = false;
  bool seen = false;
  run([&] {
    bool* s = &started;
    shoal::spawn([s] { *s = true; });
    seen = shoal_test::yield_until([&] { return started; }, std::chrono::milliseconds(2000));
  });
  EXPECT_TRUE(started);
  EXPECT_TRUE(seen) << "the spawning task yielded for 2 s and the local task it spawned never ran";
}

TEST_P(task_yield, YieldingWorkerDoesNotStarveAWorkerWokenByAHandler) {
  // The root yields while a message handler on this core completes an event
  // that a second worker waits on.
  bool woke = false;
  bool seen = false;
  run([&] {
    shoal::completion_event ev(1);
    shoal::completion_event arrived(1);
    auto* e = &ev;
    auto* a = &arrived;
    bool* w = &woke;
    shoal::spawn([e, a, w] {
      a->complete();
      e->wait();
      *w = true;
    });
    arrived.wait();
    shoal::send(0, [e] { e->complete(); });
    seen = shoal_test::yield_until([&] { return woke; }, std::chrono::milliseconds(5000));
  });
  EXPECT_TRUE(seen);
}

SHOAL_TEST_CORES(task_yield);

// ---------------------------------------------------------- parallel_for

struct pfor_case {
  std::int64_t begin;
  std::int64_t end;
  std::int64_t grain;
};

class parallel_for_sizes : public ::testing::TestWithParam<std::tuple<int, pfor_case>> {
 protected:
  void TearDown() override {  // NOLINT(readability-identifier-naming): gtest
    if (shoal::initialized()) shoal::finalize();
  }
};

TEST_P(parallel_for_sizes, EveryIterationRunsOnceAndTheSumIsExact) {
  const int cores = std::get<0>(GetParam());
  const pfor_case pc = std::get<1>(GetParam());
  const std::int64_t n = pc.end - pc.begin;
  std::vector<std::atomic<std::uint8_t>> runs(static_cast<std::size_t>(n));
  std::vector<padded_counter> partial(static_cast<std::size_t>(cores));
  shoal_test::run_checked(shoal_test::make_config(cores), [&] {
    auto* r = runs.data();
    auto* p = partial.data();
    const std::int64_t b = pc.begin;
    shoal::parallel_for(pc.begin, pc.end, pc.grain, [r, p, b](std::int64_t i) {
      r[i - b].fetch_add(1, relaxed);
      p[shoal::mycore()].value.fetch_add(i, relaxed);
    });
  });
  std::int64_t sum = 0;
  for (const auto& c : partial) sum += c.value.load();
  // Sum of begin..end-1.
  const std::int64_t expected = (pc.begin + pc.end - 1) * n / 2;
  EXPECT_EQ(sum, expected);
  EXPECT_EQ(not_once(runs), 0);
}

std::string pfor_name(const ::testing::TestParamInfo<std::tuple<int, pfor_case>>& info) {
  const int cores = std::get<0>(info.param);
  const pfor_case pc = std::get<1>(info.param);
  return "cores" + std::to_string(cores) + "_n" + std::to_string(pc.end - pc.begin) + "_grain" +
         std::to_string(pc.grain);
}

INSTANTIATE_TEST_SUITE_P(Sizes, parallel_for_sizes,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values(pfor_case{0, 100'000, 1},
                                                              pfor_case{-37, 100'000, 7},
                                                              pfor_case{0, 10'000'000, 1000},
                                                              pfor_case{5, 10'000'000, 100'000})),
                         pfor_name);

class parallel_for_misc : public cores_test {};

TEST_P(parallel_for_misc, EmptyAndReversedRangesDoNothing) {
  std::atomic<int> calls{0};
  run([&] {
    auto* c = &calls;
    shoal::parallel_for(5, 5, 1, [c](std::int64_t) { c->fetch_add(1); });
    shoal::parallel_for(10, 0, 1, [c](std::int64_t) { c->fetch_add(1); });
    shoal::parallel_for(0, 3, 0, [c](std::int64_t) { c->fetch_add(1); });  // grain 0 -> 1
  });
  EXPECT_EQ(calls.load(), 3);
}

TEST_P(parallel_for_misc, IterationsMaySuspend) {
  constexpr std::int64_t n = 2000;
  std::vector<std::atomic<std::uint8_t>> runs(n);
  run([&] {
    auto* r = runs.data();
    shoal::parallel_for(0, n, 4, [r](std::int64_t i) {
      // A blocking round trip to another core suspends this iteration.
      const int other = (shoal::mycore() + 1) % shoal::cores();
      const std::int64_t v = shoal::delegate::call(other, [i] { return i * 2; });
      if (v == i * 2) r[i].fetch_add(1, relaxed);
    });
  });
  EXPECT_EQ(not_once(runs), 0);
}

SHOAL_TEST_CORES(parallel_for_misc);

// ------------------------------------------------- on_all_cores, barrier

class spmd : public cores_test {};

TEST_P(spmd, OnAllCoresRunsOnceOnEveryCore) {
  constexpr int repeats = 10;
  std::vector<padded_counter> count(static_cast<std::size_t>(ncores()));
  std::atomic<int> wrong{0};
  std::vector<int> ids;
  run([&] {
    for (int r = 0; r < repeats; ++r) {
      auto* c = count.data();
      auto* w = &wrong;
      shoal::on_all_cores([c, w] {
        const int me = shoal::mycore();
        if (me < 0 || me >= shoal::cores()) {
          w->fetch_add(1);
          return;
        }
        c[me].value.fetch_add(1);
      });
      // on_all_cores is blocking: every copy has run by now.
      for (int k = 0; k < shoal::cores(); ++k) ids.push_back(static_cast<int>(c[k].value.load()));
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  for (int k = 0; k < ncores(); ++k)
    EXPECT_EQ(count[static_cast<std::size_t>(k)].value.load(), repeats);
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(repeats * ncores()));
  for (int r = 0; r < repeats; ++r)
    for (int k = 0; k < ncores(); ++k)
      EXPECT_EQ(ids[static_cast<std::size_t>(r * ncores() + k)], r + 1);
}

TEST_P(spmd, BarrierSeparatesPhases) {
  constexpr int rounds = 100;
  std::vector<padded_counter> slot(static_cast<std::size_t>(ncores()));
  std::atomic<std::int64_t> stale{0};
  std::atomic<std::int64_t> passes{0};
  run([&] {
    auto* s = slot.data();
    auto* st = &stale;
    auto* ps = &passes;
    shoal::on_all_cores([s, st, ps] {
      const int me = shoal::mycore();
      for (int r = 1; r <= rounds; ++r) {
        s[me].value.store(r, relaxed);
        shoal::barrier();
        // Every core's phase-1 write of this round is visible.
        for (int c = 0; c < shoal::cores(); ++c)
          if (s[c].value.load(relaxed) != r) st->fetch_add(1);
        ps->fetch_add(1);
        shoal::barrier();  // nobody starts the next round's writes before all have read
      }
    });
  });
  EXPECT_EQ(stale.load(), 0);
  EXPECT_EQ(passes.load(), static_cast<std::int64_t>(rounds) * ncores());
}

TEST_P(spmd, BarrierHoldsBackEarlyCores) {
  // Core 0 is slow before the barrier; no core may pass before it arrives.
  std::atomic<int> arrived{0};
  std::atomic<int> passed_early{0};
  run([&] {
    auto* a = &arrived;
    auto* pe = &passed_early;
    shoal::on_all_cores([a, pe] {
      if (shoal::mycore() == 0) shoal_test::spin_for_ns(20'000'000);
      a->fetch_add(1);
      shoal::barrier();
      if (a->load() != shoal::cores()) pe->fetch_add(1);
    });
  });
  EXPECT_EQ(passed_early.load(), 0);
  EXPECT_EQ(arrived.load(), ncores());
}

SHOAL_TEST_CORES(spmd);

// --------------------------------------------------------------- stealing

class work_stealing : public cores_test {};

TEST_P(work_stealing, IdleCoresStealLongStealableTasks) {
  // On one core there is nobody to steal: every task runs at home, none stolen.
  constexpr int tasks = 64;
  std::vector<int> ran_on(tasks, -1);
  shoal::core_stats before;
  shoal::core_stats after;
  shoal::init(config());
  before = shoal::stats_total();
  shoal_test::run_once([&] {
    int* r = ran_on.data();
    for (int t = 0; t < tasks; ++t) {
      shoal::spawn<shoal::stealable>([r, t] {
        r[t] = shoal::mycore();
        shoal_test::spin_for_ns(2'000'000);
      });
    }
  });
  after = shoal::stats_total();
  shoal::finalize();
  std::vector<int> cores_used;
  for (int c : ran_on) {
    EXPECT_GE(c, 0) << "a task did not run";
    if (std::find(cores_used.begin(), cores_used.end(), c) == cores_used.end())
      cores_used.push_back(c);
  }
  if (ncores() < 2) {
    EXPECT_EQ(after.tasks_stolen - before.tasks_stolen, 0u);
    EXPECT_EQ(cores_used, std::vector<int>{0});
  } else {
    EXPECT_GT(after.tasks_stolen - before.tasks_stolen, 0u);
    EXPECT_GE(cores_used.size(), 2u) << "all long tasks ran on one core";
  }
}

TEST_P(work_stealing, LocalTasksAreNeverStolen) {
  constexpr int tasks = 64;
  std::vector<int> ran_on(tasks, -1);
  shoal::init(config());
  shoal_test::run_once([&] {
    int* r = ran_on.data();
    for (int t = 0; t < tasks; ++t) {
      shoal::spawn([r, t] {
        r[t] = shoal::mycore();
        shoal_test::spin_for_ns(200'000);
      });
    }
  });
  const auto st = shoal::stats_total();
  shoal::finalize();
  EXPECT_EQ(st.tasks_stolen, 0u);
  for (int c : ran_on) EXPECT_EQ(c, 0);
}

SHOAL_TEST_CORES(work_stealing);

// ------------------------------------------------------------- exceptions

class root_exception : public cores_test {};

TEST_P(root_exception, PropagatesOutOfRun) {
  shoal::init(config());
  EXPECT_THROW(shoal::run([] { throw std::runtime_error("root failed"); }), std::runtime_error);
  shoal_test::expect_clean_teardown();
  try {
    shoal::run([] { throw std::logic_error("second"); });
    ADD_FAILURE() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "second");
  }
  // The runtime is still usable afterwards.
  int value = 0;
  shoal_test::run_once([&] { value = 42; });
  EXPECT_EQ(value, 42);
  shoal::finalize();
}

TEST_P(root_exception, ThrownAfterSuspendingStillPropagates) {
  shoal::init(config());
  EXPECT_THROW(shoal::run([] {
                 const int other = shoal::cores() - 1;
                 const int v = shoal::delegate::call(other, [] { return shoal::mycore(); });
                 if (v == shoal::cores() - 1) throw std::out_of_range("after a round trip");
               }),
               std::out_of_range);
  shoal_test::expect_clean_teardown();
  shoal::finalize();
}

SHOAL_TEST_CORES(root_exception);

// ------------------------------------------------------------ quiescence

class quiescence : public cores_test {};

// A chain that alternates handlers and tasks across cores; the last link
// counts. run() may only return after every chain has finished.
struct chain_state {
  std::atomic<std::int64_t> finished{0};
};

void chain_link(chain_state* s, int left) {
  if (left == 0) {
    s->finished.fetch_add(1, relaxed);
    return;
  }
  const int next = (shoal::mycore() + 1) % shoal::cores();
  shoal::send(next, [s, left] {
    shoal::spawn([s, left] {
      for (int k = 0; k < left % 3; ++k) shoal::yield();
      chain_link(s, left - 1);
    });
  });
}

TEST_P(quiescence, RunReturnsOnlyWhenChainedWorkHasFinished) {
  constexpr int runs = 100;
  constexpr int chains = 20;
  constexpr int depth = 10;
  std::vector<std::int64_t> finished;
  shoal::init(config());
  for (int r = 0; r < runs; ++r) {
    chain_state st;
    shoal_test::run_once([&] {
      for (int c = 0; c < chains; ++c) chain_link(&st, depth);
      // The root returns at once; the chains are still running.
    });
    finished.push_back(st.finished.load());
  }
  shoal::finalize();
  EXPECT_EQ(finished, std::vector<std::int64_t>(runs, chains));
}

TEST_P(quiescence, RootExceptionIsRethrownAfterOutstandingWorkFinished) {
  chain_state st;
  shoal::init(config());
  EXPECT_THROW(shoal_test::run_once([&] {
                 for (int c = 0; c < 50; ++c) chain_link(&st, 8);
                 throw std::runtime_error("root gives up early");
               }),
               std::runtime_error);
  shoal::finalize();
  EXPECT_EQ(st.finished.load(), 50);
}

TEST_P(quiescence, TaskWaitingOnAGlobalEventOutlivesTheRoot) {
  // A task on the last core waits on an event whose work is completed on
  // another core after the root has returned; run() must wait for it.
  constexpr int runs = 50;
  std::vector<int> woke;
  shoal::init(config());
  shoal::global_completion_event* gce = nullptr;
  for (int r = 0; r < runs; ++r) {
    std::atomic<int> flag{0};
    shoal_test::run_once([&] {
      if (gce == nullptr) gce = new shoal::global_completion_event;
      shoal::global_completion_event* g = gce;
      std::atomic<int>* f = &flag;
      g->enroll();
      const int last = shoal::cores() - 1;
      shoal::send(last, [g, f] {
        shoal::spawn([g, f] {
          g->wait();
          f->store(1);
        });
      });
      // Complete it later, from a task on core 0 that spins first.
      shoal::spawn([g] {
        shoal_test::spin_for_ns(200'000);
        g->complete();
      });
    });
    woke.push_back(flag.load());
  }
  delete gce;
  shoal::finalize();
  EXPECT_EQ(woke, std::vector<int>(runs, 1));
}

SHOAL_TEST_CORES(quiescence);

// ------------------------------------------------------------ worker limit

class worker_limit : public cores_test {};

TEST_P(worker_limit, TasksBeyondTheLimitWaitForAFreeWorker) {
  // 4 workers per core (one is the root): 200 tasks that each suspend on a
  // round trip must still all finish.
  constexpr int tasks = 200;
  shoal::config cfg = config();
  cfg.max_workers_per_core = 4;
  std::atomic<int> done_count{0};
  std::uint64_t workers = 0;
  shoal::init(cfg);
  shoal_test::run_once([&] {
    shoal::completion_event done(tasks);
    auto* d = &done;
    auto* dc = &done_count;
    for (int t = 0; t < tasks; ++t) {
      shoal::spawn([d, dc, t] {
        const int other = (shoal::mycore() + 1) % shoal::cores();
        if (shoal::delegate::call(other, [t] { return t; }) == t) dc->fetch_add(1);
        d->complete();
      });
    }
    done.wait();
  });
  workers = shoal::stats_per_core()[0].workers_created;
  shoal::finalize();
  EXPECT_EQ(done_count.load(), tasks);
  EXPECT_LE(workers, 4u);
}

SHOAL_TEST_CORES(worker_limit);

// Every worker of the capped core is suspended on an event that a queued
// task would complete: run() must not return as if the job had finished.
class worker_limit_deaths : public shoal_test::death_test {};

TEST_F(worker_limit_deaths, CapDeadlockIsReportedNotMistakenForQuiescence) {
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
      ::testing::ExitedWithCode(shoal::exit_status::fatal),
      "deadlock: 1 tasks wait for a worker.*raise --max-workers-per-core");
}

// ------------------------------------------------------ nested parallelism

class nested_parallelism : public cores_test {};

TEST_P(nested_parallelism, ParallelForInsideParallelFor) {
  constexpr std::int64_t outer = 200;
  constexpr std::int64_t inner = 500;
  std::vector<std::atomic<std::uint8_t>> runs(outer * inner);
  run([&] {
    auto* r = runs.data();
    shoal::parallel_for(0, outer, 1, [r](std::int64_t i) {
      shoal::parallel_for(0, inner, 16,
                          [r, i](std::int64_t j) { r[i * inner + j].fetch_add(1, relaxed); });
    });
  });
  EXPECT_EQ(not_once(runs), 0);
}

TEST_P(nested_parallelism, OnAllCoresFromATaskOnAnotherCore) {
  std::vector<shoal_test::padded_counter> hits(static_cast<std::size_t>(ncores()));
  bool returned = false;
  run([&] {
    auto pf_pair = shoal::make_promise_pair<int>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    auto* h = hits.data();
    shoal::send(shoal::cores() - 1, [p, h] {
      shoal::spawn([p, h] {
        shoal::on_all_cores([h] { h[shoal::mycore()].value.fetch_add(1); });
        p.set_value(1);
      });
    });
    returned = f.get() == 1;
  });
  EXPECT_TRUE(returned);
  for (const auto& h : hits) EXPECT_EQ(h.value.load(), 1);
}

SHOAL_TEST_CORES(nested_parallelism);

}  // namespace
