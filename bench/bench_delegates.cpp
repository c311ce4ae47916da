// Delegate operations between two cores (cores=2).
//
// delegates/blocking_read/workers:W  W workers on core 0 each loop on
//   delegate::read of an element of a global array owned by core 1 (one
//   round trip each, the worker suspended meanwhile). W=1: latency,
//   ns_per_round_trip = elapsed / reads. W=100: the round trips overlap;
//   round_trips_per_s is the throughput and ns_per_round_trip its inverse.
// delegates/async_add  every core issues delegate::async_add(+1) to random
//   elements of a global array of 2^20 int64 (8 MiB, block-cyclic over both
//   cores, so about half the updates are local), then default_gce().wait().
//   updates_per_s counts all cores' updates.
// delegates/async_fetch_add  every core issues delegate::async_fetch_add to
//   random elements in windows of 256 futures and then get()s them.
// Both async benchmarks check afterwards (outside the timed region) that the
// array sums to the number of updates; async_fetch_add also that the values
// fetched add up to sum(x*(x-1)/2), i.e. each element handed out 0, 1, 2, ...
#include <array>

#include "shoal_bench.hpp"

namespace {

using namespace shoal_bench;

constexpr std::int64_t table_elements = std::int64_t{1} << 20;
constexpr std::int64_t reads_per_iteration_single = 20'000;
constexpr std::int64_t reads_per_iteration_concurrent = 1'000'000;
constexpr std::int64_t adds_per_core = 4'000'000;
constexpr std::int64_t fetch_adds_per_core = 1'000'000;
constexpr int future_window = 256;

struct alignas(64) per_core_sum {
  std::int64_t value = 0;
};
per_core_sum g_sum[2];
per_core_sum g_pairs[2];
per_core_sum g_fetched[2];

shoal::config two_cores() {
  shoal::config cfg;
  cfg.cores = 2;
  return cfg;
}

// Calls f(element) for every element of table[0, n) owned by the calling
// core. (Not shoal::forall over the global_ptr: with several cores it also
// visits elements of other cores, see the report.)
template <class F>
void for_each_mine(shoal::global_ptr<std::int64_t> table, std::int64_t n, const F& f) {
  const int me = shoal::mycore();
  for (std::int64_t i = 0; i < n; ++i)
    if ((table + i).core() == me) f(*(table + i).local());
}

// Sum of a global array and sum of x*(x-1)/2 over its elements (each core
// sums its own elements).
struct table_sums {
  std::int64_t values = 0;
  std::int64_t pairs = 0;  // what fetch_adds of +1 from 0 must have fetched in all
};

table_sums global_sums(shoal::global_ptr<std::int64_t> table, std::int64_t n) {
  shoal::on_all_cores([table, n] {
    table_sums s;
    for_each_mine(table, n, [&s](std::int64_t x) {
      s.values += x;
      s.pairs += x * (x - 1) / 2;
    });
    g_sum[shoal::mycore()].value = s.values;
    g_pairs[shoal::mycore()].value = s.pairs;
  });
  return {g_sum[0].value + g_sum[1].value, g_pairs[0].value + g_pairs[1].value};
}

void zero(shoal::global_ptr<std::int64_t> table, std::int64_t n) {
  shoal::on_all_cores([table, n] { for_each_mine(table, n, [](std::int64_t& x) { x = 0; }); });
}

// ---- blocking round trips ----

struct read_result {
  double secs = 0;
  std::int64_t reads = 0;
};

// `workers` tasks on core 0 each make up to `per_worker` blocking reads of an
// element owned by core 1. A worker stops early past `max_secs` (so that a
// pathologically slow round trip cannot stall the whole binary); the reads
// actually made are counted.
read_result blocking_reads(int workers, std::int64_t per_worker, double max_secs) {
  auto table = shoal::global_alloc<std::int64_t>(16);
  zero(table, 16);
  const auto remote = table + 8;  // block 1 of 64 bytes: core 1
  SHOAL_CHECK(remote.core() == 1, "expected element 8 on core 1, got core {}", remote.core());
  struct shared {
    shoal::completion_event done;
    clock::time_point deadline;
    std::int64_t reads = 0;  // all workers are on core 0: no atomics needed
    explicit shared(int w) : done(w) {}
  } sh(workers);
  auto* shp = &sh;
  const auto t0 = clock::now();
  sh.deadline =
      t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(max_secs));
  for (int w = 0; w < workers; ++w) {
    shoal::spawn([remote, per_worker, shp] {
      std::int64_t sink = 0;
      std::int64_t i = 0;
      while (i < per_worker) {
        const std::int64_t stop = std::min<std::int64_t>(per_worker, i + 256);
        for (; i < stop; ++i) sink += shoal::delegate::read(remote);
        if (clock::now() > shp->deadline) break;
      }
      benchmark::DoNotOptimize(sink);
      shp->reads += i;
      shp->done.complete();
    });
  }
  sh.done.wait();
  const double secs = seconds_since(t0);
  shoal::global_free(table);
  return {secs, sh.reads};
}

void bm_blocking_read(benchmark::State& state) {
  const auto workers = static_cast<int>(state.range(0));
  const std::int64_t per_worker =
      (workers == 1 ? reads_per_iteration_single : reads_per_iteration_concurrent) / workers;
  runtime_scope rt(two_cores());
  const stats_snapshot before = stats_snapshot::take();
  double total_secs = 0;
  double total_reads = 0;
  for (auto _ : state) {
    const read_result r =
        run_timed_result([&] { return blocking_reads(workers, per_worker, 2.0); });
    state.SetIterationTime(r.secs);
    total_secs += r.secs;
    total_reads += static_cast<double>(r.reads);
  }
  if (total_reads <= 0) return;
  state.counters["ns_per_round_trip"] = total_secs * 1e9 / total_reads;
  state.counters["round_trips_per_s"] = total_reads / total_secs;
  stats_snapshot::take().report_since(before, state);
}

// ---- asynchronous delegates ----

template <class Body>
double timed_on_all_cores(shoal::global_ptr<std::int64_t> table, const Body& body) {
  zero(table, table_elements);
  const auto t0 = clock::now();
  shoal::on_all_cores(body);
  return seconds_since(t0);
}

void async_adds(shoal::global_ptr<std::int64_t> table, std::int64_t n) {
  splitmix rng{0x1234567ULL * static_cast<std::uint64_t>(shoal::mycore() + 1)};
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k =
        static_cast<std::int64_t>(rng.next() & static_cast<std::uint64_t>(table_elements - 1));
    shoal::delegate::async_add(table + k, std::int64_t{1});
  }
  shoal::default_gce().wait();
}

void async_fetch_adds(shoal::global_ptr<std::int64_t> table, std::int64_t n) {
  splitmix rng{0x7654321ULL * static_cast<std::uint64_t>(shoal::mycore() + 1)};
  std::array<shoal::future<std::int64_t>, future_window> window;
  std::int64_t fetched = 0;
  for (std::int64_t i = 0; i < n; i += future_window) {
    const std::int64_t m = std::min<std::int64_t>(future_window, n - i);
    for (std::int64_t j = 0; j < m; ++j) {
      const auto k =
          static_cast<std::int64_t>(rng.next() & static_cast<std::uint64_t>(table_elements - 1));
      window[static_cast<std::size_t>(j)] =
          shoal::delegate::async_fetch_add(table + k, std::int64_t{1});
    }
    for (std::int64_t j = 0; j < m; ++j) fetched += window[static_cast<std::size_t>(j)].get();
  }
  g_fetched[shoal::mycore()].value = fetched;
}

enum class async_op { add, fetch_add };

template <async_op Op>
void bm_async(benchmark::State& state) {
  constexpr std::int64_t per_core = Op == async_op::add ? adds_per_core : fetch_adds_per_core;
  runtime_scope rt(two_cores());
  const std::int64_t total = per_core * shoal::cores();
  const stats_snapshot before = stats_snapshot::take();
  double total_secs = 0;
  double total_updates = 0;
  for (auto _ : state) {
    table_sums sums;
    g_fetched[0] = {};
    g_fetched[1] = {};
    const double secs = run_timed([&] {
      auto table = shoal::global_alloc<std::int64_t>(table_elements);
      double s = 0;
      if constexpr (Op == async_op::add) {
        s = timed_on_all_cores(table, [table] { async_adds(table, per_core); });
      } else {
        s = timed_on_all_cores(table, [table] { async_fetch_adds(table, per_core); });
      }
      sums = global_sums(table, table_elements);
      shoal::global_free(table);
      return s;
    });
    if (sums.values != total) {
      state.SkipWithError("the table does not sum to the number of updates");
      break;
    }
    if (Op == async_op::fetch_add && g_fetched[0].value + g_fetched[1].value != sums.pairs) {
      state.SkipWithError("the fetched values are not 0, 1, ... per element");
      break;
    }
    state.SetIterationTime(secs);
    total_secs += secs;
    total_updates += static_cast<double>(total);
  }
  if (total_secs <= 0) return;
  state.counters["updates_per_s"] = total_updates / total_secs;
  state.counters["updates_per_s_per_core"] = total_updates / total_secs / shoal::cores();
  stats_snapshot::take().report_since(before, state);
}

BENCHMARK(bm_blocking_read)
    ->Name("delegates/blocking_read")
    ->ArgName("workers")
    ->Arg(1)
    ->Arg(100)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_TEMPLATE(bm_async, async_op::add)
    ->Name("delegates/async_add")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_TEMPLATE(bm_async, async_op::fetch_add)
    ->Name("delegates/async_fetch_add")
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return shoal_bench::run_benchmarks(argc, argv,
                                     {{"delegates/blocking_read/", "ns_per_round_trip", "info", 0},
                                      {"delegates/blocking_read/", "round_trips_per_s", "info", 0},
                                      {"delegates/async_", "updates_per_s", "info", 0}});
}
