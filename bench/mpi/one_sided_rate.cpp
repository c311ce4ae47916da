// Latency and throughput of the one-sided operations (one_sided.hpp) for the
// backend --one-sided selects, and of a delegate round trip, from core 0 to
// an element of the job's last core (1 x 2: the other core of this process;
// 2 x 1: the other process). bench/one_sided.sh runs it for every backend at
// both shapes, interleaved, and writes bench/results/one_sided.txt.
//
//   [mpirun -np R] one-sided-rate --cores C --one-sided B [--ops N] [--tasks T]
//
// Per operation, one line on rank 0:
//   one_sided backend=B shape=RxC op=R latency_ns=... ops_per_s=...
// latency: one task doing N blocking operations back to back (ns each).
// ops_per_s: T tasks on core 0 each doing N/T blocking operations at once
// (their waits overlap where the backend suspends or yields: rma, am).
// Ops: R = rget of a u64, W = rput of a u64 then rflush (remote
// completion), W_local = rput alone (local completion), CAS =
// compare_and_swap, FAO = fetch_add; delegate = delegate::call returning the
// u64 (the am path's primitive, here for every backend); Qpush / Qpop =
// bcl::fast_queue push and pop of one u64 (queue on the last core); Cpush /
// Cpop and Kpush / Kpop = the same on a bcl::circular_queue and a
// bcl::checksum_queue (pushes, then as many pops); the queues take the path
// SHOAL_BCL_PATH gives (bcl/path.hpp: bench/bcl_costs.py runs both);
// R_busy / FAO_busy = one rget / fetch_add issued while the target core
// spins 100 ms in a handler (attentiveness: only shm needs nothing of it).
#include <shoal/bcl/checksum_queue.hpp>
#include <shoal/bcl/circular_queue.hpp>
#include <shoal/bcl/fast_queue.hpp>
#include <shoal/one_sided.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_args.hpp"

namespace {

using u64 = std::uint64_t;
using clock_type = std::chrono::steady_clock;

// Keeps a read value alive without storing it.
inline void benchmark_sink(u64 v) { asm volatile("" : : "r"(v)); }

template <class F>
double time_ops(std::int64_t ops, int tasks, const F& op) {
  const auto t0 = clock_type::now();
  if (tasks <= 1) {
    for (std::int64_t i = 0; i < ops; ++i) op(i);
  } else {
    shoal::completion_event done(tasks);
    shoal::completion_event* d = &done;
    const std::int64_t each = ops / tasks;
    for (int t = 0; t < tasks; ++t)
      shoal::spawn([d, each, t, f = &op] {
        for (std::int64_t i = 0; i < each; ++i) (*f)(t * each + i);
        d->complete();
      });
    done.wait();
  }
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  std::int64_t ops = 20000;
  int tasks = 64;
  bench_args::read_flags("one-sided-rate", argc, argv, {"--ops", "--tasks"},
                         [&](const bench_args::value& v) {
                           if (v.flag == "--ops")
                             ops = static_cast<std::int64_t>(v.whole(1, std::uint64_t{1} << 32));
                           else
                             tasks = static_cast<int>(v.whole(1, 4096));
                         });
  const std::string backend = shoal::one_sided_backend_name();
  const std::string shape =
      std::to_string(shoal::ranks()) + "x" + std::to_string(shoal::cores() / shoal::ranks());
  shoal::run([&] {
    const int n = shoal::cores();
    const auto words = shoal::global_alloc<u64>(8 * n);
    const auto target = words + 8 * (n - 1);  // the last core's first block
    const int home = target.core();
    const auto report = [&](const char* name, std::int64_t count, double one, double many) {
      std::printf("one_sided backend=%s shape=%s op=%s latency_ns=%.0f ops_per_s=%.0f\n",
                  backend.c_str(), shape.c_str(), name, one / static_cast<double>(count) * 1e9,
                  static_cast<double>(count) / many);
      std::fflush(stdout);
    };
    const auto measure = [&](const char* name, std::int64_t count, const auto& op) {
      time_ops(count / 10, 1, op);  // warm up
      const double one = time_ops(count, 1, op);
      const double many = time_ops(count, tasks, op);
      report(name, count, one, many);
    };
    measure("R", ops, [target](std::int64_t) { benchmark_sink(shoal::rget(target)); });
    measure("W", ops, [target](std::int64_t i) {
      shoal::rput(target + 1, static_cast<u64>(i));
      shoal::rflush();
    });
    measure("W_local", ops,
            [target](std::int64_t i) { shoal::rput(target + 2, static_cast<u64>(i)); });
    measure("CAS", ops, [target](std::int64_t i) {
      shoal::compare_and_swap(target + 3, static_cast<u64>(i), static_cast<u64>(i + 1));
    });
    measure("FAO", ops, [target](std::int64_t) { shoal::fetch_add(target + 4, u64{1}); });
    measure("delegate", ops, [target, home](std::int64_t) {
      benchmark_sink(shoal::delegate::call(home, [target] { return *(target + 5).local(); }));
    });
    // Attentiveness (BCL chapter 8): one operation issued while the target
    // core computes for 100 ms without yielding (a handler that spins, so
    // the core neither runs handlers nor polls MPI). Median of 3 tries.
    const auto while_busy = [&](const char* name, const auto& op) {
      double t[3];
      for (double& x : t) {
        shoal::delegate::post(home, [] {
          const auto until = clock_type::now() + std::chrono::milliseconds(100);
          while (clock_type::now() < until) {
          }
        });
        // Let the spinning handler start at the target before timing.
        const auto settle = clock_type::now() + std::chrono::milliseconds(10);
        while (clock_type::now() < settle) shoal::yield();
        const auto t0 = clock_type::now();
        op();
        x = std::chrono::duration<double>(clock_type::now() - t0).count();
        const auto rest = clock_type::now() + std::chrono::milliseconds(120);
        while (clock_type::now() < rest) shoal::yield();
      }
      std::sort(t, t + 3);
      std::printf("one_sided backend=%s shape=%s op=%s latency_ns=%.0f ops_per_s=0\n",
                  backend.c_str(), shape.c_str(), name, t[1] * 1e9);
      std::fflush(stdout);
    };
    while_busy("R_busy", [target] { benchmark_sink(shoal::rget(target)); });
    while_busy("FAO_busy", [target] { shoal::fetch_add(target + 4, u64{1}); });
    shoal::default_gce().wait();

    // BCL's fast_queue on the same backend (predicted A + W_local per push,
    // A + R per pop: bcl/fast_queue.hpp): one queue on the last core, a push
    // phase (warm-up, one task, many tasks), rflush, then as many pops.
    auto q = shoal::bcl::fast_queue<u64>::make(home, static_cast<u64>(ops) * 3);
    measure("Qpush", ops, [&q](std::int64_t i) { q.push(static_cast<u64>(i)); });
    shoal::rflush();
    measure("Qpop", ops, [&q](std::int64_t) {
      u64 v = 0;
      q.pop(v);
      benchmark_sink(v);
    });
    q.destroy();
    const auto push_then_pop = [&](auto other, const char* push, const char* pop) {
      measure(push, ops, [&other](std::int64_t i) { other.push(static_cast<u64>(i)); });
      measure(pop, ops, [&other](std::int64_t) {
        u64 v = 0;
        other.pop(v);
        benchmark_sink(v);
      });
      other.destroy();
    };
    push_then_pop(shoal::bcl::circular_queue<u64>::make(home, static_cast<u64>(ops) * 3), "Cpush",
                  "Cpop");
    push_then_pop(shoal::bcl::checksum_queue<u64>::make(home, static_cast<u64>(ops) * 3), "Kpush",
                  "Kpop");
    shoal::global_free(words);
  });
  shoal::finalize();
  return 0;
}
