// Distributed containers (include/shoal/containers/): operation rates.
//
//   bench-containers [--ops-per-core N] [--key-bits B] [--reps R] [--only NAME] [shoal flags]
//   mpirun -np 2 bench-containers --cores 1 ...      (2 processes x 1 core)
//
// Kernels, each run R times, interleaved (kernel A rep 1, kernel B rep 1,
// A rep 2, ...), one shoal::run per rep, the container made and destroyed
// outside the timed part:
//   counting_set_u64   every core async_inserts N random 8-byte keys drawn
//                      from 2^B values (so counts accumulate), then
//                      shoal::barrier(): the clock covers every insert applied;
//   array_visit_increment  every core async_visits N random elements of an
//                      array<uint64_t> of 2^B elements, adding 1;
//   map_u64_reduce     every core async_reduces N random 8-byte keys (2^B
//                      values) with +1 on a map<uint64_t, uint64_t>;
//   map_string16_reduce  every core async_reduces N random 16-byte string keys
//                      (2^B values) with +1 on a map<std::string, uint64_t>.
// The containers pace a sending task themselves (a yield every 64 remote
// operations), so the loops here are bare.
// --only NAME runs that kernel alone (for profiles: callgrind per kernel).
// --only keys_only (not in the default set) runs the loops' own work with
// no container: each core makes the same N keys and sums them, so that a
// profile can subtract the benchmark's share from an operation's
// instructions (bench/containers_callgrind.sh); --only string_keys_only
// makes the map kernel's 16-character keys from them too; --only
// table_only counts each core's keys into a table of its own, through the
// owner's batch loop, with no messages (the receiving side's share).
// Printed on rank 0 per kernel: the median rate in M operations/s over the
// job (N * cores / time), min and max, and the average aggregated packet
// (bytes and messages) on rank 0's process during the kernel, and the
// median CPU share of rank 0's cores over the timed part (their threads'
// CPU time / (time x cores): under 100% the cores slept or the machine's
// other load had the CPUs; MPI's own threads are not counted).
//
// Not a Google Benchmark program: `make bench` runs every bench-* with
// --benchmark_* flags, which this one reads (--benchmark_repetitions=R sets
// R) or ignores, so the same binary also runs under mpirun.
#include <shoal/containers/array.hpp>
#include <shoal/containers/counting_set.hpp>
#include <shoal/containers/detail/flat_table.hpp>
#include <shoal/containers/map.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace {

std::uint64_t g_ops_per_core = 2000000;
int g_key_bits = 20;
int g_reps = 5;
std::string g_only;

std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// Key i of core c: a random value of g_key_bits bits, spread over 64.
std::uint64_t key_of(int core, std::uint64_t i) {
  const std::uint64_t r = mix64((static_cast<std::uint64_t>(core) << 40) + i + 1);
  return mix64(r & ((std::uint64_t{1} << g_key_bits) - 1));
}

/// Eight lowercase hexadecimal digits of the 32-bit x, most significant
/// first, as the bytes of a little-endian word (a digit per byte by bit
/// spreading, no loop: a digit at a time cost ~110 of the map kernel's
/// instructions per operation, more than the map's receiving side).
std::uint64_t hex8(std::uint64_t x) {
  x = ((x & 0xffff0000ULL) >> 16) | ((x & 0xffffULL) << 32);  // halves, high half first
  x = ((x & 0x0000ff000000ff00ULL) >> 8) | ((x & 0x000000ff000000ffULL) << 16);
  x = ((x & 0x00f000f000f000f0ULL) >> 4) | ((x & 0x000f000f000f000fULL) << 8);
  const std::uint64_t letters = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
  return x + 0x3030303030303030ULL + letters * ('a' - '0' - 10);
}

/// The 16-byte string key for a random value: 16 hexadecimal digits.
void string_key(std::uint64_t v, std::string& out) {
  out.resize(16);
  const std::uint64_t hi = hex8(v >> 32);
  const std::uint64_t lo = hex8(v & 0xffffffffULL);
  std::memcpy(out.data(), &hi, 8);
  std::memcpy(out.data() + 8, &lo, 8);
}

struct sample {
  double seconds = 0;
  double packet_bytes = 0;
  double packet_messages = 0;
  double cpu_share = 0;  // rank 0's cores' thread CPU time over (seconds x its cores)
};

double g_seconds = 0;  // set by the root task
/// CPU time of this process's cores' threads in the timed part (ns).
std::atomic<std::int64_t> g_cpu_ns{0};

/// CPU time of the calling thread, ns.
std::int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

/// One rep of a kernel: `body` runs on every core between two barriers.
template <class Make, class Body>
sample run_rep(Make make, Body body) {
  const shoal::core_stats before = shoal::stats_total();
  shoal::run([&] {
    auto c = make();
    shoal::on_all_cores([] { shoal::barrier(); });
    const auto t0 = std::chrono::steady_clock::now();
    g_cpu_ns = 0;
    shoal::on_all_cores([c, body] {
      const std::int64_t cpu0 = thread_cpu_ns();
      body(c);
      shoal::barrier();
      g_cpu_ns += thread_cpu_ns() - cpu0;
    });
    g_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    c.destroy();
  });
  shoal::core_stats d = shoal::stats_total();
  d -= before;
  sample s;
  s.seconds = g_seconds;
  s.cpu_share =
      static_cast<double>(g_cpu_ns.load()) * 1e-9 / (g_seconds * (shoal::cores() / shoal::ranks()));
  if (d.packets_sent != 0) {
    s.packet_bytes = static_cast<double>(d.bytes_sent) / static_cast<double>(d.packets_sent);
    s.packet_messages = static_cast<double>(d.messages_sent) / static_cast<double>(d.packets_sent);
  }
  return s;
}

sample counting_set_rep() {
  return run_rep([] { return shoal::counting_set<std::uint64_t>::create(); },
                 [](const shoal::counting_set<std::uint64_t>& c) {
                   const int me = shoal::mycore();
                   for (std::uint64_t i = 0; i < g_ops_per_core; ++i) {
                     c.async_insert(key_of(me, i));
                   }
                 });
}

struct plus {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a + b; }
};

/// map_u64_reduce: every core async_reduces N random 8-byte keys with +1
/// on a map<uint64_t, uint64_t> (counting_set_u64's work through map's
/// operation records).
sample map_u64_rep() {
  using map_t = shoal::map<std::uint64_t, std::uint64_t>;
  return run_rep([] { return map_t::create(); },
                 [](const map_t& m) {
                   const int me = shoal::mycore();
                   for (std::uint64_t i = 0; i < g_ops_per_core; ++i) {
                     m.async_reduce(key_of(me, i), 1, plus{});
                   }
                 });
}

sample map_string_rep() {
  using map_t = shoal::map<std::string, std::uint64_t>;
  return run_rep([] { return map_t::create(); },
                 [](const map_t& m) {
                   const int me = shoal::mycore();
                   std::string k;
                   for (std::uint64_t i = 0; i < g_ops_per_core; ++i) {
                     string_key(key_of(me, i), k);
                     m.async_reduce(k, 1, plus{});
                   }
                 });
}

/// array_visit_increment: every core async_visits N random elements of an
/// array of 2^B 8-byte counters (cores * 2^B / cores per core), adding 1.
sample array_rep() {
  using array_t = shoal::array<std::uint64_t>;
  return run_rep([] { return array_t::create(std::uint64_t{1} << g_key_bits); },
                 [](const array_t& a) {
                   const int me = shoal::mycore();
                   const std::uint64_t mask = (std::uint64_t{1} << g_key_bits) - 1;
                   for (std::uint64_t i = 0; i < g_ops_per_core; ++i) {
                     a.async_visit(key_of(me, i) & mask,
                                   [](std::uint64_t, std::uint64_t& v) { ++v; });
                   }
                 });
}

/// What the kernels without a container make and destroy in run_rep.
struct no_container {
  void destroy() {}
};

/// keys_only: the kernels' key generation alone (no container); the sum
/// keeps the compiler from dropping it.
std::uint64_t g_key_sum = 0;
sample keys_only_rep() {
  return run_rep([] { return no_container{}; },
                 [](const no_container&) {
                   const int me = shoal::mycore();
                   std::uint64_t sum = 0;
                   for (std::uint64_t i = 0; i < g_ops_per_core; ++i) sum += key_of(me, i);
                   __atomic_fetch_add(&g_key_sum, sum, __ATOMIC_RELAXED);
                 });
}

/// table_only: every core counts its N keys into a table of its own
/// (counting_set's per-core table, flat_table), 1300 at a time through the
/// batch loop an owner runs on a received packet (flat_table::update_each):
/// the receiving side of counting_set_u64 without messages.
sample table_only_rep() {
  return run_rep(
      [] { return no_container{}; },
      [](const no_container&) {
        const int me = shoal::mycore();
        shoal::containers_detail::flat_table<std::uint64_t, std::uint64_t, std::hash<std::uint64_t>,
                                             std::equal_to<std::uint64_t>>
            table;
        constexpr std::uint32_t batch = 1300;  // a packet's keys (containers.md)
        std::uint64_t keys[batch];
        for (std::uint64_t i = 0; i < g_ops_per_core; i += batch) {
          const auto n =
              static_cast<std::uint32_t>(std::min<std::uint64_t>(batch, g_ops_per_core - i));
          for (std::uint32_t j = 0; j < n; ++j) keys[j] = key_of(me, i + j);
          table.update_each([&keys](std::uint32_t j) { return keys[j]; }, n,
                            [](std::uint64_t& c) { ++c; });
        }
        __atomic_fetch_add(&g_key_sum, table.size(), __ATOMIC_RELAXED);
      });
}

/// string_keys_only: keys_only plus the map kernel's 16-character keys
/// (the share of map_string16_reduce's profile that is the benchmark's).
sample string_keys_only_rep() {
  return run_rep([] { return no_container{}; },
                 [](const no_container&) {
                   const int me = shoal::mycore();
                   std::uint64_t sum = 0;
                   std::string k;
                   for (std::uint64_t i = 0; i < g_ops_per_core; ++i) {
                     string_key(key_of(me, i), k);
                     sum += static_cast<unsigned char>(k[i & 15]);
                   }
                   __atomic_fetch_add(&g_key_sum, sum, __ATOMIC_RELAXED);
                 });
}

struct kernel {
  const char* name;
  sample (*rep)();
  std::vector<sample> samples;
};

void print(const kernel& k) {
  std::vector<double> rates;
  double bytes = 0;
  double messages = 0;
  std::vector<double> cpu;
  const double ops = static_cast<double>(g_ops_per_core) * shoal::cores();
  for (const sample& s : k.samples) {
    rates.push_back(ops / s.seconds / 1e6);
    bytes += s.packet_bytes / static_cast<double>(k.samples.size());
    messages += s.packet_messages / static_cast<double>(k.samples.size());
    cpu.push_back(s.cpu_share);
  }
  std::sort(rates.begin(), rates.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf(
      "containers/%-20s %d x %d  N=%llu/core keys=2^%d  median %8.2f M ops/s  (min %.2f, max "
      "%.2f, %zu reps)  packet %.0f B, %.0f msgs  cpu %.0f%%\n",
      k.name, shoal::ranks(), shoal::cores() / shoal::ranks(),
      static_cast<unsigned long long>(g_ops_per_core), g_key_bits, rates[rates.size() / 2],
      rates.front(), rates.back(), rates.size(), bytes, messages, 100 * cpu[cpu.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  // Our flags and Google Benchmark's (from make bench) out; the rest to shoal.
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> const char* {
      if (a == flag && i + 1 < argc) return argv[++i];
      if (a.starts_with(flag) && a.size() > flag.size() && a[flag.size()] == '=')
        return argv[i] + flag.size() + 1;
      return nullptr;
    };
    if (const char* v = value("--ops-per-core")) {
      g_ops_per_core = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--key-bits")) {
      g_key_bits = std::atoi(v);
    } else if (const char* v = value("--reps")) {
      g_reps = std::atoi(v);
    } else if (const char* v = value("--only")) {
      g_only = v;
    } else if (const char* v = value("--benchmark_repetitions")) {
      g_reps = std::atoi(v);
    } else if (a.starts_with("--benchmark_")) {
      continue;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (g_ops_per_core == 0 || g_key_bits < 1 || g_key_bits > 40 || g_reps < 1) {
    std::fprintf(stderr,
                 "bench-containers: --ops-per-core >= 1, --key-bits in [1, 40], --reps >= 1\n");
    return 2;
  }
  std::vector<kernel> kernels{{"counting_set_u64", counting_set_rep, {}},
                              {"array_visit_increment", array_rep, {}},
                              {"map_u64_reduce", map_u64_rep, {}},
                              {"map_string16_reduce", map_string_rep, {}}};
  if (g_only == "keys_only") kernels.push_back({"keys_only", keys_only_rep, {}});
  if (g_only == "string_keys_only")
    kernels.push_back({"string_keys_only", string_keys_only_rep, {}});
  if (g_only == "table_only") kernels.push_back({"table_only", table_only_rep, {}});
  if (!g_only.empty()) {
    std::erase_if(kernels, [](const kernel& k) { return g_only != k.name; });
    if (kernels.empty()) {
      std::fprintf(stderr,
                   "bench-containers: --only %s: no such kernel (counting_set_u64, "
                   "array_visit_increment, map_u64_reduce, map_string16_reduce, keys_only, "
                   "string_keys_only, "
                   "table_only)\n",
                   g_only.c_str());
      return 2;
    }
  }
  bool cores_given = false;
  for (int i = 1; i < argc; ++i) cores_given |= std::string_view(argv[i]).starts_with("--cores");
  static char cores_flag[] = "--cores=2";
  std::vector<char*> args(argv, argv + argc);
  if (!cores_given && std::getenv("SHOAL_CORES") == nullptr) args.push_back(cores_flag);  // 1 x 2
  args.push_back(nullptr);
  int n = static_cast<int>(args.size()) - 1;
  char** a = args.data();
  shoal::init(n, a);
  for (int r = 0; r < g_reps; ++r)
    for (kernel& k : kernels) k.samples.push_back(k.rep());
  if (shoal::myrank() == 0) {
    for (const kernel& k : kernels) print(k);
    std::fflush(stdout);
  }
  shoal::finalize();
  return 0;
}
