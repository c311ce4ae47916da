// How a core should split NPB IS keys between itself and other cores before
// it counts or sends them (apps/intsort/rank_spmd.cpp): per-key costs of
// the stagings intsort has used, on 2^24 bell-shaped keys (the sum of four
// uniform draws, as NPB's) in [0, 2^21), the first of `cores` equal ranges
// counted here into 8-bit counters, the others' keys copied out as sends
// would. Each benchmark reports ns per key (the time per iteration / keys).
//   per_destination  a stage of 120 keys per core, its fill count in memory
//   per_stream       the same per run of 8 NPB buckets (cache-sized counts)
//   register_split   two cores: every key stored to both lists, both counts
//                    in registers (what intsort runs on two cores)
//   count_all        one core: every key counted, nothing staged
// Results: bench/results/recheck_amd.md.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

namespace {

constexpr int log_keys = 24;
constexpr int log_max = 21;
constexpr int shift = 11;  // 1024 NPB buckets
constexpr int stage = 120;

struct problem {
  std::vector<std::int32_t> keys;
  std::vector<int> owner;  // bucket -> core
  std::int32_t lo = 0, hi = 0;
  std::vector<std::uint8_t> count;
  std::vector<std::int32_t> out;
  explicit problem(int cores) : keys(std::size_t{1} << log_keys), owner(1024) {
    std::mt19937 g(1);
    std::uniform_int_distribution<std::int32_t> u(0, (1 << log_max) / 4 - 1);
    for (std::int32_t& k : keys) k = u(g) + u(g) + u(g) + u(g);
    std::vector<std::int64_t> size(1024);
    for (const std::int32_t k : keys) ++size[static_cast<std::size_t>(k >> shift)];
    std::int64_t before = 0;
    const auto n = static_cast<std::int64_t>(keys.size());
    for (int b = 0; b < 1024; ++b) {
      owner[static_cast<std::size_t>(b)] =
          static_cast<int>(std::min<std::int64_t>(cores - 1, before * cores / n));
      before += size[static_cast<std::size_t>(b)];
    }
    const auto last = static_cast<int>(
        std::find_if(owner.begin(), owner.end(), [](int o) { return o != 0; }) - owner.begin());
    hi = last << shift;
    count.assign(static_cast<std::size_t>(hi - lo), 0);
    out.resize(keys.size());
  }
};

template <class F>
void run(benchmark::State& state, int cores, F&& f) {
  problem p(cores);
  for (auto _ : state) {
    std::fill(p.count.begin(), p.count.end(), 0);
    benchmark::DoNotOptimize(f(p));
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_key"] = benchmark::Counter(
      static_cast<double>(p.keys.size()) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Stages keys per group (group_of[bucket]); a full stage of group 0's keys
// is counted, another's copied out.
std::size_t staged(problem& p, const std::vector<int>& group_of, const std::vector<int>& core_of) {
  const std::size_t groups = core_of.size();
  std::vector<std::int32_t> buf(groups * stage);
  std::vector<int> fill(groups, 0);
  std::size_t sent = 0;
  std::uint8_t* count = p.count.data();
  for (const std::int32_t k : p.keys) {
    const int g = group_of[static_cast<std::size_t>(k >> shift)];
    std::int32_t* run = buf.data() + static_cast<std::ptrdiff_t>(g) * stage;
    const int n = fill[static_cast<std::size_t>(g)];
    run[n] = k - p.lo;
    fill[static_cast<std::size_t>(g)] = n + 1;
    if (n + 1 < stage) continue;
    fill[static_cast<std::size_t>(g)] = 0;
    if (core_of[static_cast<std::size_t>(g)] == 0) {
      for (int j = 0; j < stage; ++j) ++count[run[j]];
    } else {
      std::memcpy(p.out.data() + sent, run, stage * sizeof(std::int32_t));
      sent += stage;
    }
  }
  return sent;
}

void per_destination(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  run(state, cores, [cores](problem& p) {
    std::vector<int> core_of(static_cast<std::size_t>(cores));
    for (int c = 0; c < cores; ++c) core_of[static_cast<std::size_t>(c)] = c;
    return staged(p, p.owner, core_of);
  });
}

void per_stream(benchmark::State& state) {
  const int cores = static_cast<int>(state.range(0));
  run(state, cores, [](problem& p) {
    std::vector<int> group_of(1024), core_of;
    for (int b = 0; b < 1024; ++b) {
      if (b == 0 ||
          p.owner[static_cast<std::size_t>(b)] != p.owner[static_cast<std::size_t>(b) - 1] ||
          b % 8 == 0)
        core_of.push_back(p.owner[static_cast<std::size_t>(b)]);
      group_of[static_cast<std::size_t>(b)] = static_cast<int>(core_of.size()) - 1;
    }
    return staged(p, group_of, core_of);
  });
}

void register_split(benchmark::State& state) {
  run(state, 2, [](problem& p) {
    constexpr std::size_t chunk = 2048;
    std::vector<std::int32_t> mine(chunk), theirs(chunk);
    const auto width = static_cast<std::uint32_t>(p.hi - p.lo);
    std::uint8_t* count = p.count.data();
    std::size_t sent = 0;
    for (std::size_t at = 0; at < p.keys.size(); at += chunk) {
      std::size_t own = 0, other = 0;
      for (std::size_t j = 0; j < chunk; ++j) {
        const std::int32_t k = p.keys[at + j];
        const bool is_mine = static_cast<std::uint32_t>(k - p.lo) < width;
        mine[own] = k - p.lo;
        theirs[other] = k;
        own += static_cast<std::size_t>(is_mine);
        other += static_cast<std::size_t>(!is_mine);
      }
      std::memcpy(p.out.data() + sent, theirs.data(), other * sizeof(std::int32_t));
      sent += other;
      for (std::size_t j = 0; j < own; ++j) ++count[mine[j]];
    }
    return sent;
  });
}

void count_all(benchmark::State& state) {
  run(state, 1, [](problem& p) {
    std::uint8_t* count = p.count.data();
    for (const std::int32_t k : p.keys) ++count[k];
    return p.keys.size();
  });
}

BENCHMARK(per_destination)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(per_stream)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(register_split)->Unit(benchmark::kMillisecond);
BENCHMARK(count_all)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
