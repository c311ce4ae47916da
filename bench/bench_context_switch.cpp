// Context switches: shoal::yield() round-robin on one core, against the same
// ping-pong between two OS threads through a std::condition_variable.
//
// context_switch/yield/workers:W  one core (cores=1); W workers each call
//   shoal::yield() K times, so the core makes W*K switches in round-robin
//   order. Workers are started and parked on an event before the clock
//   starts, so stack creation and first dispatch are not timed.
//   ns_per_switch = elapsed / (W*K). Targets: <= 20 ns (2 workers), <= 25 ns
//   (1000), <= 60 ns (100,000 workers: 16 KiB stacks, the working set is
//   mostly out of cache).
// context_switch/condvar_threads  two std::threads take turns through one
//   mutex and condition_variable; ns_per_switch = round trip / 2.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "shoal_bench.hpp"

namespace {

using namespace shoal_bench;

// Total yields per iteration, whatever the number of workers.
constexpr std::int64_t switches_per_iteration = 4'000'000;

// Spawns `workers` tasks that each yield `k` times; returns the seconds from
// releasing them (all started and parked) to the last one finishing.
double yield_round(int workers, std::int64_t k) {
  shoal::completion_event started(workers);
  shoal::completion_event gate(1);
  shoal::completion_event finished(workers);
  auto* s = &started;
  auto* g = &gate;
  auto* f = &finished;
  for (int i = 0; i < workers; ++i) {
    shoal::spawn([s, g, f, k] {
      s->complete();
      g->wait();
      for (std::int64_t j = 0; j < k; ++j) shoal::yield();
      f->complete();
    });
  }
  // The ready queue beats new tasks, so the root must be suspended (not
  // yielding) for the spawned tasks to start.
  started.wait();
  const auto t0 = clock::now();
  gate.complete();  // wakes every worker; the root is parked in finished.wait()
  finished.wait();
  return seconds_since(t0);
}

void bm_yield(benchmark::State& state) {
  const auto workers = static_cast<int>(state.range(0));
  const std::int64_t k = std::max<std::int64_t>(1, switches_per_iteration / workers);
  shoal::config cfg;
  cfg.cores = 1;
  if (workers > 10'000) {
    cfg.max_workers_per_core = workers + 64;
    cfg.stack_kb = 32;
  }
  runtime_scope rt(cfg);
  double total_secs = 0;
  double total_switches = 0;
  for (auto _ : state) {
    const double secs = run_timed([&] { return yield_round(workers, k); });
    state.SetIterationTime(secs);
    total_secs += secs;
    total_switches += static_cast<double>(workers) * static_cast<double>(k);
  }
  if (total_switches <= 0) return;
  state.counters["ns_per_switch"] = total_secs * 1e9 / total_switches;
  state.counters["switches_per_iter"] = static_cast<double>(workers) * static_cast<double>(k);
  const char* label = workers <= 2      ? "target <= 20 ns/switch"
                      : workers <= 1000 ? "target <= 25 ns/switch"
                                        : "target <= 60 ns/switch";
  state.SetLabel(label);
}

// Two OS threads hand a turn back and forth `rounds` times.
void bm_condvar_threads(benchmark::State& state) {
  const std::int64_t rounds = state.range(0);
  double total_secs = 0;
  double total_round_trips = 0;
  for (auto _ : state) {
    std::mutex m;
    std::condition_variable cv;
    int turn = 0;
    std::thread other([&] {
      for (std::int64_t i = 0; i < rounds; ++i) {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return turn == 1; });
        turn = 0;
        cv.notify_one();
      }
    });
    const auto t0 = clock::now();
    for (std::int64_t i = 0; i < rounds; ++i) {
      std::unique_lock<std::mutex> l(m);
      turn = 1;
      cv.notify_one();
      cv.wait(l, [&] { return turn == 0; });
    }
    const double secs = seconds_since(t0);
    other.join();
    state.SetIterationTime(secs);
    total_secs += secs;
    total_round_trips += static_cast<double>(rounds);
  }
  if (total_round_trips <= 0) return;
  state.counters["ns_per_switch"] = total_secs * 1e9 / (2 * total_round_trips);
  state.SetLabel("baseline: 2 OS threads, condition_variable");
}

BENCHMARK(bm_yield)
    ->Name("context_switch/yield")
    ->ArgName("workers")
    ->Arg(2)
    ->Arg(1000)
    ->Arg(100'000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK(bm_condvar_threads)
    ->Name("context_switch/condvar_threads")
    ->ArgName("round_trips")
    ->Arg(20'000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  return shoal_bench::run_benchmarks(
      argc, argv,
      {{"context_switch/yield/workers:2/", "ns_per_switch", "<=", 20},
       {"context_switch/yield/workers:1000/", "ns_per_switch", "<=", 25},
       {"context_switch/yield/workers:100000/", "ns_per_switch", "<=", 60},
       {"context_switch/condvar_threads/", "ns_per_switch", "info", 0}});
}
