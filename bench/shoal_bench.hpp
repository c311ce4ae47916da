// Shared scaffolding of shoal's microbenchmarks (bench/bench_*.cpp).
//
// Google Benchmark drives iterations from the main thread, but shoal work
// runs on shoal's cores. So every benchmark here:
//   - holds a runtime for the duration of one benchmark call (runtime_scope:
//     init(config) ... finalize()), since each benchmark may need its own
//     configuration (cores, stacks);
//   - runs one shoal::run() per benchmark iteration, whose root task times
//     only the measured part with std::chrono and hands back the seconds,
//     reported with state.SetIterationTime() (benchmarks use UseManualTime());
//   - publishes its figure of merit as a plain counter (ns_per_switch,
//     msgs_per_s_per_core, ...), computed over all iterations of the call.
//
// main(): run_benchmarks() wraps the default display reporter (so
// --benchmark_format still works) to collect each benchmark's median and, at
// the end, prints one summary line per registered target on stderr:
//   summary: context_switch/yield/workers:2/manual_time ns_per_switch = 18.49 (median;
//   target <= 20): met
// (a single run reports "value" instead of "median").
#pragma once

#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

namespace shoal_bench {

using clock = std::chrono::steady_clock;

inline double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

/// shoal::init(cfg) for the lifetime of the object, shoal::finalize() after.
class runtime_scope {
 public:
  explicit runtime_scope(const shoal::config& cfg) { shoal::init(cfg); }
  ~runtime_scope() { shoal::finalize(); }
  runtime_scope(const runtime_scope&) = delete;
  runtime_scope& operator=(const runtime_scope&) = delete;
};

/// Runs `body` as the root task (core 0) of one shoal::run(); body returns
/// the seconds it measured. Returns them.
template <class F>
double run_timed(F&& body) {
  double secs = 0;
  shoal::run([&] { secs = body(); });
  return secs;
}

/// Runtime counters summed over this process's cores, read between runs.
struct stats_snapshot {
  std::uint64_t messages = 0;
  std::uint64_t packets = 0;

  static stats_snapshot take() {
    const shoal::core_stats t = shoal::stats_total();
    return {t.messages_sent, t.packets_sent};
  }
  /// Sets counters["msgs_per_packet"] (average aggregation) since `before`.
  void report_since(const stats_snapshot& before, benchmark::State& state) const {
    const auto p = static_cast<double>(packets - before.packets);
    if (p > 0)
      state.counters["msgs_per_packet"] = static_cast<double>(messages - before.messages) / p;
  }
};

/// Runs `body` as the root task of one shoal::run() and returns its result.
template <class F>
auto run_timed_result(F&& body) {
  decltype(body()) result{};
  shoal::run([&] { result = body(); });
  return result;
}

/// Small fast PRNG (splitmix64) for random targets inside timed loops.
struct splitmix {
  std::uint64_t s;
  std::uint64_t next() noexcept {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

/// A figure a benchmark should reach: `counter` of every benchmark whose name
/// contains `name_part`, compared with `op` ("<=" or ">=") to `bound`; op
/// "info" only reports the value (baselines).
struct target {
  std::string name_part;
  std::string counter;
  std::string op;
  double bound;
};

/// Forwards everything to the default display reporter and remembers, per
/// benchmark, the median (or the single value) of each target counter.
class summary_reporter : public benchmark::BenchmarkReporter {
 public:
  // `inner` is not owned (CreateDefaultDisplayReporter() returns a static).
  summary_reporter(benchmark::BenchmarkReporter* inner, std::vector<target> targets)
      : inner_(inner), targets_(std::move(targets)) {}

  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const std::string name = r.run_name.str();
      for (const target& t : targets_) {
        if (name.find(t.name_part) == std::string::npos) continue;
        auto it = r.counters.find(t.counter);
        if (it == r.counters.end()) continue;
        entry& e = seen_[{name, t.counter}];
        if (e.order == 0) e.order = ++order_;
        if (r.run_type == Run::RT_Aggregate) {
          if (r.aggregate_name == "median") e.median = it->second.value, e.has_median = true;
        } else {
          e.values.push_back(it->second.value);
        }
      }
    }
    inner_->ReportRuns(runs);
  }

  void Finalize() override {
    inner_->Finalize();
    std::vector<std::pair<int, std::string>> lines;
    for (const auto& [key, e] : seen_) {
      double v = e.median;
      if (!e.has_median) {
        if (e.values.empty()) continue;
        std::vector<double> s = e.values;
        std::sort(s.begin(), s.end());
        v = s.size() % 2 != 0 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
      }
      for (const target& t : targets_) {
        if (key.first.find(t.name_part) == std::string::npos || t.counter != key.second) continue;
        char buf[512];
        const char* how = e.has_median ? "median" : "value";
        if (t.op == "info") {
          std::snprintf(buf, sizeof buf, "summary: %s %s = %.4g (%s; no target)", key.first.c_str(),
                        key.second.c_str(), v, how);
        } else {
          const bool met = t.op == "<=" ? v <= t.bound : v >= t.bound;
          std::snprintf(buf, sizeof buf, "summary: %s %s = %.4g (%s; target %s %.4g): %s",
                        key.first.c_str(), key.second.c_str(), v, how, t.op.c_str(), t.bound,
                        met ? "met" : "MISSED");
        }
        lines.emplace_back(e.order, buf);
      }
    }
    std::sort(lines.begin(), lines.end());
    std::fflush(stdout);
    for (const auto& l : lines) std::fprintf(stderr, "%s\n", l.second.c_str());
  }

 private:
  struct entry {
    int order = 0;
    bool has_median = false;
    double median = 0;
    std::vector<double> values;
  };
  benchmark::BenchmarkReporter* inner_;
  std::vector<target> targets_;
  std::map<std::pair<std::string, std::string>, entry> seen_;
  int order_ = 0;
};

/// The body of every bench main(): Google Benchmark's flags, the benchmarks,
/// then the summary of `targets` on stderr.
inline int run_benchmarks(int argc, char** argv, std::vector<target> targets) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  summary_reporter reporter(benchmark::CreateDefaultDisplayReporter(), std::move(targets));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace shoal_bench
