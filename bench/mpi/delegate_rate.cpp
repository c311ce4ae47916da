// delegate_rate: delegates between processes.
//
// Run: mpirun --oversubscribe -np 2 build/bin/bench-distributed-delegates --cores 1
//
//   latency     the root (core 0, rank 0) makes --calls blocking
//               delegate::fetch_add calls, one after the other, on a word
//               homed on the first core of the last rank: round-trip time per
//               call (two messages, each flushed when the sender goes idle).
//   throughput  every core of the job issues --updates async_add delegates
//               to words of a block-cyclic array, each on a core of another
//               rank, and waits on its global_completion_event: delegates
//               completed per second, job-wide. Validated: the array's sum
//               equals the number of updates.
//
// One warm-up, then --repetitions timed runs of each, interleaved; medians.
// Exit status 1 when a check fails, 2 on a bad command line.
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_args.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 != 0 ? v[h] : (v[h - 1] + v[h]) / 2;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::uint64_t mix(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  long calls = 20000;
  long updates = 2000000;
  int repetitions = 5;
  bench_args::read_flags("bench-distributed-delegates", argc, argv,
                         {"--calls", "--updates", "--repetitions"},
                         [&](const bench_args::value& v) {
                           if (v.flag == "--calls")
                             calls = static_cast<long>(v.whole(1, 1'000'000'000));
                           else if (v.flag == "--updates")
                             updates = static_cast<long>(v.whole(1, 1'000'000'000));
                           else
                             repetitions = static_cast<int>(v.whole(1, 1000));
                         });
  if (shoal::ranks() < 2) {
    std::fprintf(stderr,
                 "bench-distributed-delegates: needs at least 2 ranks (mpirun -np 2); skipped\n");
    shoal::finalize();
    return 0;
  }

  std::vector<double> latency_us;
  std::vector<double> rate;
  bool ok = true;
  for (int rep = 0; rep <= repetitions; ++rep) {
    const bool timed = rep > 0;
    shoal::run([&] {
      // Latency: blocking round trips to the last rank.
      const int far = (shoal::ranks() - 1) * shoal::local_cores();
      auto counter = shoal::global_alloc<std::uint64_t>(shoal::cores() * 8);
      // Element far*8 of a 64-byte-block array of 8-byte words lives on core `far`.
      const auto word = counter + static_cast<std::int64_t>(far) * 8;
      shoal::delegate::write(word, std::uint64_t{0});
      auto t = std::chrono::steady_clock::now();
      for (long i = 0; i < calls; ++i) shoal::delegate::fetch_add(word, std::uint64_t{1});
      const double lat = seconds_since(t) / static_cast<double>(calls) * 1e6;
      if (shoal::delegate::read(word) != static_cast<std::uint64_t>(calls)) ok = false;
      shoal::global_free(counter);

      // Throughput: async delegates to other ranks from every core.
      const std::int64_t n = static_cast<std::int64_t>(shoal::cores()) * 1024;
      auto table = shoal::global_alloc<std::uint64_t>(n);
      shoal::forall(table, n, [](std::int64_t, std::uint64_t& x) { x = 0; });
      const long per_core = updates / shoal::cores();
      t = std::chrono::steady_clock::now();
      shoal::on_all_cores([table, n, per_core] {
        shoal::global_completion_event done;
        const int me = shoal::mycore();
        for (long i = 0; i < per_core; ++i) {
          std::int64_t k = static_cast<std::int64_t>(
              mix(static_cast<std::uint64_t>(me) << 32 | static_cast<std::uint64_t>(i)) %
              static_cast<std::uint64_t>(n));
          // Move k to a core of another rank (same offset within the block).
          while (shoal::rank_of((table + k).core()) == shoal::myrank()) k = (k + 8) % n;
          shoal::delegate::async_add(table + k, std::uint64_t{1}, done);
        }
        done.wait();
      });
      const double secs = seconds_since(t);
      std::uint64_t sum = 0;
      for (std::int64_t i = 0; i < n; ++i) sum += shoal::delegate::read(table + i);
      if (sum != static_cast<std::uint64_t>(per_core) * static_cast<std::uint64_t>(shoal::cores()))
        ok = false;
      shoal::global_free(table);
      if (timed) {
        latency_us.push_back(lat);
        rate.push_back(static_cast<double>(per_core) * shoal::cores() / secs);
      }
    });
  }
  if (shoal::myrank() == 0) {
    std::printf("delegates between processes: %d ranks x %d cores, %d repetitions after 1 warm-up\n",
                shoal::ranks(), shoal::local_cores(), repetitions);
    std::printf("  blocking fetch_add round trip to rank %d: median %.2f us (%ld calls each)\n",
                shoal::ranks() - 1, median(latency_us), calls);
    std::printf("  async_add to other ranks, all cores: median %.2f M delegates/s (%ld each)\n",
                median(rate) / 1e6, updates);
    std::printf("  validation: %s\n", ok ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return ok ? 0 : 1;
}
