// dist_completion: job-wide completion (global_completion_event,
// default_gce(), finish) on 1-3 processes x 2 cores.
//
// Results are checked on rank 0 after run(): values written by delegates are
// read back with delegate::read; counts kept per process (g_nodes, g_bad) are
// summed over ranks with one delegate::call to core 0 of each rank.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "finish_tree.hpp"
#include "mpi/dist_support.hpp"

namespace {

using shoal_dist::rank0;
using shoal_dist::run_job;
namespace delegate = shoal::delegate;
using i64 = std::int64_t;

using finish_tree::g_nodes;
std::atomic<i64> g_bad{0};     // mismatches found on this process
std::atomic<i64> g_result{0};  // a value a task of this process reports

i64 job_sum_nodes() {
  i64 sum = 0;
  for (int r = 0; r < shoal::ranks(); ++r)
    sum += delegate::call(r * shoal::local_cores(), [] { return g_nodes.load(); });
  return sum;
}

i64 job_sum_bad() {
  i64 sum = 0;
  for (int r = 0; r < shoal::ranks(); ++r)
    sum += delegate::call(r * shoal::local_cores(), [] { return g_bad.load(); });
  return sum;
}

void reset_counts() {
  for (int r = 0; r < shoal::ranks(); ++r)
    delegate::call(r * shoal::local_cores(), [] {
      g_nodes.store(0);
      g_bad.store(0);
      g_result.store(0);
    });
}

i64 value_of(i64 i) { return 3 * i + 1; }

// Elements of `a` that do not hold value_of(i).
i64 count_wrong(shoal::global_ptr<i64> a, i64 n) {
  i64 wrong = 0;
  for (i64 i = 0; i < n; ++i)
    if (delegate::read(a + i) != value_of(i)) ++wrong;
  return wrong;
}

void zero(shoal::global_ptr<i64> a, i64 n) {
  shoal::forall(a, n, [](i64, i64& x) { x = 0; });
}

int last_core() { return shoal::cores() - 1; }

// ---- the repro: default_gce() enrolled on rank 1, waited on rank 0

// The delegates run on core 1 (on rank 0, next to the root) and take about
// 20 us each, so a wait() that returns early is seen: the root reads the
// count straight from its own process. Fail on the base commit at 2 and 3
// processes (rank 1's default_gce() was its own object; the root's wait()
// returned at once, with about 0 of 2,000 delegates run).
void slow_count() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  while (std::chrono::steady_clock::now() < until) {
  }
  g_nodes.fetch_add(1);
}

int root_neighbour() { return shoal::local_cores() > 1 ? 1 : 0; }

TEST(dist_completion, DefaultGceEnrolledOnAnotherRankIsWaitedByTheRoot) {
  static constexpr i64 n = 2000;
  i64 seen = -1;
  run_job([&] {
    g_nodes.store(0);
    // A handler on the last core (the last rank) issues the delegates: the
    // call returns once they are enrolled there.
    delegate::call(last_core(), [] {
      for (i64 i = 0; i < n; ++i) delegate::post(root_neighbour(), [] { slow_count(); }, shoal::default_gce());
    });
    shoal::default_gce().wait();
    seen = g_nodes.load();
  });
  if (rank0()) {
    EXPECT_EQ(seen, n);
  }
}

TEST(dist_completion, DefaultGceEnrolledByATaskOnAnotherRank) {
  static constexpr i64 n = 2000;
  i64 seen = -1;
  i64 wrong = -1;
  run_job([&] {
    g_nodes.store(0);
    const auto a = shoal::global_alloc<i64>(n);
    zero(a, n);
    shoal::completion_event enrolled(1);
    shoal::completion_event* e = &enrolled;
    const int home = shoal::mycore();
    shoal::send(last_core(), [a, e, home] {
      shoal::spawn([a, e, home] {
        for (i64 i = 0; i < n; ++i) {
          const auto at = a + i;
          delegate::post(root_neighbour(), [at, i] {
            slow_count();
            delegate::async_write(at, value_of(i));
          }, shoal::default_gce());
          if (i % 100 == 0) shoal::yield();
        }
        shoal::completion_event::complete_at(home, e);
      });
    });
    enrolled.wait();  // the task has enrolled every delegate
    shoal::default_gce().wait();
    seen = g_nodes.load();
    wrong = count_wrong(a, n);
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(seen, n);
    EXPECT_EQ(wrong, 0);
  }
}

// ---- README "A first program", verbatim but for the check

TEST(dist_completion, ReadmeFirstProgram) {
  std::vector<long> counts_seen;
  run_job([&] {
    auto counts = shoal::global_alloc<long>(1024);
    shoal::forall(counts, 1024, [](std::int64_t, long& c) { c = 0; });
    shoal::parallel_for(0, 1'000'000, 4096, [counts](std::int64_t i) {
      shoal::delegate::async_add(counts + i % 1024, 1L);
    });
    shoal::default_gce().wait();
    for (i64 i = 0; i < 1024; ++i) counts_seen.push_back(shoal::delegate::read(counts + i));
    shoal::global_free(counts);
  });
  if (!rank0()) return;
  ASSERT_EQ(counts_seen.size(), 1024u);
  for (i64 i = 0; i < 1024; ++i)
    EXPECT_EQ(counts_seen[static_cast<std::size_t>(i)], 1'000'000 / 1024 + (i < 1'000'000 % 1024))
        << "counts[" << i << "]";
}

// ---- user events

TEST(dist_completion, EventOfRank0UsedByEveryCoreOfEveryRank) {
  static constexpr i64 n = 4096;
  static constexpr i64 per_core = 5000;
  i64 total = -1;
  i64 expected = -1;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(n);
    zero(a, n);
    shoal::global_completion_event gce;
    const shoal::completion_ref ref = gce;
    shoal::on_all_cores([a, ref] {
      const auto me = static_cast<std::uint64_t>(shoal::mycore());
      for (i64 i = 0; i < per_core; ++i) {
        const auto k = static_cast<i64>((me * 2654435761u + static_cast<std::uint64_t>(i) * 40503u) %
                                        static_cast<std::uint64_t>(n));
        delegate::async_add(a + k, i64{1}, ref);
      }
    });
    gce.wait();
    total = 0;
    for (i64 i = 0; i < n; ++i) total += delegate::read(a + i);
    expected = per_core * shoal::cores();
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(total, expected);
  }
}

// Every core makes its own event (ids from rank 0 for cores of other
// ranks), writes its own slice of `a` all over the job, waits, and checks.
TEST(dist_completion, EventsMadeOnEveryRankWaitedWhereMade) {
  static constexpr i64 slice = 512;
  i64 bad = -1;
  run_job([&] {
    reset_counts();
    const i64 n = slice * shoal::cores();
    const auto a = shoal::global_alloc<i64>(n);
    zero(a, n);
    shoal::on_all_cores([a] {
      shoal::global_completion_event mine;
      const i64 first = slice * shoal::mycore();
      // Strided, so the slice's elements land on every core.
      for (i64 j = 0; j < slice; ++j) {
        const i64 i = (first + j * 9) % (slice * shoal::cores());
        delegate::async_write(a + i, value_of(i), mine);
      }
      mine.wait();
      i64 wrong = 0;
      for (i64 j = 0; j < slice; ++j) {
        const i64 i = (first + j * 9) % (slice * shoal::cores());
        if (delegate::read(a + i) != value_of(i)) ++wrong;
      }
      g_bad.fetch_add(wrong);
    });
    bad = job_sum_bad();
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(bad, 0);
  }
}

TEST(dist_completion, ManyEventsAliveAtOnce) {
  static constexpr int events = 1500;
  static constexpr i64 n = events;
  i64 wrong = -1;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(n);
    zero(a, n);
    std::vector<std::unique_ptr<shoal::global_completion_event>> all;
    for (int k = 0; k < events; ++k) all.push_back(std::make_unique<shoal::global_completion_event>());
    std::vector<std::uint32_t> ids;
    for (auto& e : all) ids.push_back(e->id());
    std::sort(ids.begin(), ids.end());
    if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) g_bad.fetch_add(1000);
    // Event k counts a call that, from core k % cores, writes a[k].
    for (int k = 0; k < events; ++k) {
      const shoal::completion_ref ref = *all[static_cast<std::size_t>(k)];
      const auto at = a + k;
      const i64 v = value_of(k);
      delegate::post(
          k % shoal::cores(), [at, v, ref] { delegate::async_write(at, v, ref); }, ref);
    }
    for (int k = events - 1; k >= 0; --k) all[static_cast<std::size_t>(k)]->wait();
    wrong = count_wrong(a, n) + g_bad.exchange(0);
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(wrong, 0);
  }
}

// More events than the table holds, made and destroyed in turn on rank 0
// and by a task on the last rank: ids go back to rank 0 and are reused.
TEST(dist_completion, IdsAreReused) {
  static constexpr int rounds = static_cast<int>(shoal::detail::max_events) + 100;
  i64 made_far = -1;
  i64 wrong = -1;
  run_job([&] {
    reset_counts();
    const auto cell = shoal::global_alloc<i64>(1);
    for (int k = 0; k < 2 * rounds; ++k) {
      shoal::global_completion_event e;
      if (k % 512 == 0) {
        delegate::async_write(cell, value_of(k), e);
        e.wait();
        if (delegate::read(cell) != value_of(k)) g_bad.fetch_add(1);
      }
    }
    shoal::finish([] {
      shoal::send(last_core(), [] {
        shoal::spawn([] {
          for (int k = 0; k < rounds; ++k) {
            shoal::global_completion_event e;
            g_result.fetch_add(1);
          }
        });
      });
    });
    made_far = delegate::call(last_core(), [] { return g_result.load(); });
    wrong = job_sum_bad();
    shoal::global_free(cell);
  });
  if (rank0()) {
    EXPECT_EQ(made_far, rounds);
    EXPECT_EQ(wrong, 0);
  }
}

// ---- completions seen before their enrolment

// A chain of hops, each on the next core (across processes): hop h enrolls
// the unit of hop h+1 on its core and completes its own unit, which was
// enrolled on the core before. A wave may read the completing process after
// the enrolling one; wait() must still not return before the last hop.
std::atomic<i64> g_hops{0};

void hop(shoal::completion_ref ref, i64 left) {
  g_hops.fetch_add(1);
  if (left > 0) {
    ref.enroll();
    const int next = (shoal::mycore() + 1 + static_cast<int>(left % 3)) % shoal::cores();
    if (left % 4 == 0) {
      shoal::send(next, [ref, left] { shoal::spawn([ref, left] { hop(ref, left - 1); }); });
    } else {
      shoal::send(next, [ref, left] { hop(ref, left - 1); });
    }
  }
  ref.complete();
}

TEST(dist_completion, CompletionsBeforeEnrolmentNeverEndWaitEarly) {
  static constexpr i64 chain = 3000;
  static constexpr int rounds = 5;
  std::vector<i64> seen;
  run_job([&] {
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < shoal::ranks(); ++k)
        delegate::call(k * shoal::local_cores(), [] { g_hops.store(0); });
      shoal::global_completion_event gce;
      const shoal::completion_ref ref = gce;
      ref.enroll();
      shoal::send(1 % shoal::cores(), [ref] { hop(ref, chain); });
      gce.wait();
      i64 hops = 0;
      for (int k = 0; k < shoal::ranks(); ++k)
        hops += delegate::call(k * shoal::local_cores(), [] { return g_hops.load(); });
      seen.push_back(hops);
    }
  });
  if (!rank0()) return;
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(rounds));
  for (i64 s : seen) EXPECT_EQ(s, chain + 1);
}

// Every core of the job waits on the root's event by its ref.
TEST(dist_completion, EveryCoreWaitsOnARef) {
  static constexpr i64 per_core = 2000;
  i64 bad = -1;
  run_job([&] {
    reset_counts();
    const i64 n = 64 * shoal::cores();
    const auto a = shoal::global_alloc<i64>(n);
    zero(a, n);
    shoal::global_completion_event gce;
    const shoal::completion_ref ref = gce;
    shoal::on_all_cores([a, n, ref] {
      for (i64 i = 0; i < per_core; ++i) delegate::async_add(a + (i * 7 + shoal::mycore()) % n, i64{1}, ref);
      shoal::barrier();  // every core has enrolled its part
      ref.wait();
      i64 sum = 0;
      for (i64 i = 0; i < n; ++i) sum += delegate::read(a + i);
      if (sum != per_core * shoal::cores()) g_bad.fetch_add(1);
    });
    bad = job_sum_bad();
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(bad, 0);
  }
}

// ---- finish

using finish_tree::node;
using finish_tree::tree_nodes;

TEST(dist_completion, FinishCountsATreeSpreadOverTheJob) {
  static constexpr int depth = 4;
  static constexpr int reps = 300;
  std::vector<i64> seen;
  run_job([&] {
    reset_counts();
    for (int r = 1; r <= reps; ++r) {
      shoal::finish([] { node(depth, true); });
      seen.push_back(job_sum_nodes() - (r - 1) * tree_nodes(depth));
    }
  });
  if (!rank0()) return;
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(reps));
  for (std::size_t r = 0; r < seen.size(); ++r)
    ASSERT_EQ(seen[r], tree_nodes(depth)) << "repetition " << r;
}

// A finish inside a finish, the inner one on another rank: the inner waits
// for its own tree, the outer for the task that ran the inner one.
TEST(dist_completion, NestedFinishOnAnotherRank) {
  static constexpr int depth = 4;
  i64 inner_seen = -1;
  i64 total = -1;
  run_job([&] {
    reset_counts();
    shoal::finish([] {
      shoal::send(last_core(), [] {
        shoal::spawn([] {
          shoal::finish([] { node(depth, true); });
          g_result.store(job_sum_nodes());
        });
      });
      node(1, true);  // the outer scope's own small tree
    });
    inner_seen = delegate::call(last_core(), [] { return g_result.load(); });
    total = job_sum_nodes();
  });
  if (!rank0()) return;
  // The inner finish saw at least its own tree (the outer's may overlap).
  EXPECT_GE(inner_seen, tree_nodes(depth));
  EXPECT_EQ(total, tree_nodes(depth) + tree_nodes(1));
}

}  // namespace

SHOAL_DIST_MAIN()
