// collective_rate: large collectives, bulk range transfer, and the latency
// of the small synchronisations every phase ends with.
//
// Run: mpirun --oversubscribe -np 2 build/bin/bench-distributed-collectives --cores 2
//      build/bin/bench-distributed-collectives --cores 2            (one process)
//
//   allgather   every core contributes 1 MiB (--mib); time until every core
//               has the job's cores() MiB.
//   allreduce   element-wise sum of --doubles doubles (1M) on every core.
//   broadcast   --doubles doubles from the last core to every core.
//   read_range  core 0 reads --doubles doubles of a block-cyclic array
//               spanning every core (blocking).
//   write_range core 0 writes them back (blocking).
//   barrier, arrival_barrier, allreduce 4 words: 2000 calls back to back
//               on every core, per call (the fixed cost of a phase end).
//
// Each timing runs on every core between two barriers (the collectives) or
// on core 0 alone (the range transfers); one warm-up, then --repetitions
// timed runs; medians on rank 0, with MB/s of the payload. Results are
// checked (a wrong sum or element exits with status 1).
#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "bench_args.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 != 0 ? v[h] : (v[h - 1] + v[h]) / 2;
}

struct options {
  std::int64_t mib = 1;
  std::int64_t doubles = 1 << 20;
  int repetitions = 5;
};
options g_opt;

shoal::per_core<std::vector<double>> g_times;  // core 0's, per repetition
std::atomic<int> g_bad{0};
constexpr int sync_calls = 2000;  // per timed run of bench_sync

/// Times `op` on every core between barriers; core 0 records seconds.
template <class Op>
void time_spmd(const Op& op) {
  for (int r = 0; r <= g_opt.repetitions; ++r) {
    shoal::barrier();
    const auto t0 = clock_type::now();
    op();
    shoal::barrier();
    if (shoal::mycore() == 0 && r > 0)
      g_times.local().push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
}

void bench_allgather() {
  const auto n = static_cast<std::size_t>(g_opt.mib << 20);
  std::vector<std::uint8_t> mine(n, static_cast<std::uint8_t>(shoal::mycore()));
  time_spmd([&] {
    const std::vector<std::uint8_t> all = shoal::allgather(std::span<const std::uint8_t>(mine));
    for (int c = 0; c < shoal::cores(); ++c)
      if (all.size() != n * static_cast<std::size_t>(shoal::cores()) ||
          all[static_cast<std::size_t>(c) * n + n - 1] != static_cast<std::uint8_t>(c))
        g_bad.fetch_add(1);
  });
}

void bench_allreduce() {
  std::vector<double> v(static_cast<std::size_t>(g_opt.doubles));
  time_spmd([&] {
    std::fill(v.begin(), v.end(), 1.0);
    shoal::allreduce_sum(std::span<double>(v));
    if (v.back() != static_cast<double>(shoal::cores())) g_bad.fetch_add(1);
  });
}

void bench_broadcast() {
  std::vector<double> v(static_cast<std::size_t>(g_opt.doubles));
  const int root = shoal::cores() - 1;
  time_spmd([&] {
    std::fill(v.begin(), v.end(), static_cast<double>(shoal::mycore()));
    shoal::broadcast(std::span<double>(v), root);
    if (v.front() != root || v.back() != root) g_bad.fetch_add(1);
  });
}

/// The fixed cost of a phase end: `calls` back-to-back barrier(),
/// arrival_barrier() or 4-word allreduce_sum() calls on every core, per
/// call (core 0's time over the run of calls, median over repetitions).
enum class sync_kind { barrier, arrival, allreduce4 };
void bench_sync(sync_kind kind, int calls) {
  time_spmd([kind, calls] {
    for (int i = 0; i < calls; ++i) {
      if (kind == sync_kind::barrier) {
        shoal::barrier();
      } else if (kind == sync_kind::arrival) {
        shoal::arrival_barrier();
      } else {
        std::array<std::uint64_t, 4> v = {1, 2, 3, 4};
        shoal::allreduce_sum(std::span<std::uint64_t>(v));
        if (v[3] != 4 * static_cast<std::uint64_t>(shoal::cores())) g_bad.fetch_add(1);
      }
    }
  });
}

/// Core 0 alone: read then write `n` doubles of a block-cyclic array.
void bench_ranges(std::vector<double>& reads, std::vector<double>& writes) {
  const std::int64_t n = g_opt.doubles;
  const auto a = shoal::global_alloc<double>(n + 8);
  shoal::forall(a, n + 8, [](std::int64_t i, double& x) { x = static_cast<double>(i); });
  std::vector<double> buf(static_cast<std::size_t>(n));
  for (int r = 0; r <= g_opt.repetitions; ++r) {
    auto t0 = clock_type::now();
    shoal::read_range(a + 3, std::span<double>(buf));
    if (r > 0) reads.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    if (buf.back() != static_cast<double>(n + 2)) g_bad.fetch_add(1);
    t0 = clock_type::now();
    shoal::write_range(a + 3, std::span<const double>(buf));
    if (r > 0) writes.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  shoal::global_free(a);
}

void report(const char* what, const std::vector<double>& t, double bytes) {
  const double s = median(t);
  std::printf("%-12s %10.3f ms  %9.1f MB/s  (payload %.1f MB)\n", what, s * 1e3, bytes / s / 1e6,
              bytes / 1e6);
}

/// Core 0's collected times for the last SPMD benchmark.
std::vector<double> take_times() {
  std::vector<double> t = g_times[0];
  g_times[0].clear();
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  bench_args::read_flags("bench-distributed-collectives", argc, argv,
                         {"--mib", "--doubles", "--repetitions"}, [](const bench_args::value& v) {
                           if (v.flag == "--mib")
                             g_opt.mib = static_cast<std::int64_t>(v.whole(1, 1024));
                           else if (v.flag == "--doubles")
                             g_opt.doubles =
                                 static_cast<std::int64_t>(v.whole(1, std::uint64_t{1} << 28));
                           else
                             g_opt.repetitions = static_cast<int>(v.whole(1, 1000));
                         });
  const double cores = shoal::cores();
  const double dbytes = static_cast<double>(g_opt.doubles) * 8;
  std::vector<double> t_gather, t_reduce, t_bcast, t_read, t_write;
  std::vector<std::vector<double>> t_sync;  // by sync_kind
  shoal::run([&] {
    shoal::on_all_cores([] { bench_allgather(); });
    t_gather = take_times();
    shoal::on_all_cores([] { bench_allreduce(); });
    t_reduce = take_times();
    shoal::on_all_cores([] { bench_broadcast(); });
    t_bcast = take_times();
    bench_ranges(t_read, t_write);
    for (const sync_kind k : {sync_kind::barrier, sync_kind::arrival, sync_kind::allreduce4}) {
      shoal::on_all_cores([k] { bench_sync(k, sync_calls); });
      t_sync.push_back(take_times());
    }
  });
  if (shoal::myrank() == 0) {
    std::printf("collectives: %d ranks x %d cores, %d repetitions (medians)\n", shoal::ranks(),
                shoal::local_cores(), g_opt.repetitions);
    report("allgather", t_gather, static_cast<double>(g_opt.mib << 20) * cores);
    report("allreduce", t_reduce, dbytes);
    report("broadcast", t_bcast, dbytes);
    report("read_range", t_read, dbytes);
    report("write_range", t_write, dbytes);
    const char* names[] = {"barrier", "arrival_barrier", "allreduce 4 words"};
    for (std::size_t k = 0; k < t_sync.size(); ++k)
      std::printf("%-17s %7.3f us a call (%d calls back to back on every core)\n", names[k],
                  median(t_sync[k]) / sync_calls * 1e6, sync_calls);
  }
  const int bad = g_bad.load();
  shoal::finalize();
  if (bad != 0) {
    std::fprintf(stderr, "collective_rate: %d wrong results\n", bad);
    return 1;
  }
  return 0;
}
