// mpi_stress: the distributed engine under load, driven by tests/CMakeLists.txt
// under mpirun (see run_expect.cmake). Every rank checks what it can see; a
// wrong value exits non-zero.
//
//   mpi_stress --flood N [--max-rss-mb M]
//       Every rank's cores send N small (16-byte) closure messages in all to
//       cores of rank 0, while rank 0's cores send N in all to the other
//       ranks: all ranks flood at once and rank 0 is the hot spot. Exact
//       counts per (sender rank, receiver rank) are checked on every rank,
//       and each rank's peak resident memory must stay under M MiB (flow
//       control: core buffer pools, network window, receive limit).
//   mpi_stress --cascade RUNS
//       RUNS runs; in each, every core seeds messages whose handlers send
//       further messages to pseudo-random cores, to a pseudo-random depth.
//       run() must return only when the whole cascade has run: after each
//       run the handled counts, gathered from every core by delegate in the
//       next run, must equal a sequential count of the same cascade, and no
//       handler may run after its run() returned (a second check after a
//       pause finds nothing new).
//   mpi_stress --steal T
//       Three runs; in each the root spawns T tasks of 200 us with
//       spawn<anywhere> on core 0. Every task must run exactly once, and
//       with several ranks some must have run on another process (stolen
//       by a steal request between processes).
//   mpi_stress --deadlock --watchdog-s S
//       The root waits forever; the watchdog must end the job with its report.
//   mpi_stress --deadlock-collective | --deadlock-barrier --watchdog-s S
//       Only core 0 calls allreduce_sum / only the root calls barrier(): the
//       watchdog must end the job naming the wait.
//   mpi_stress --misuse-local-on-rank K
//       A handler on rank K's first core calls local() on an element of rank
//       0: the job must end at once naming rank K, the element's core and rank.
//   mpi_stress --misuse-outside-run-on-rank K
//       Rank K's main thread sends before run(); the others run normally: the
//       job must end at once naming rank K and the call.
//   mpi_stress --kill-during-run K
//       Rank K dies by SIGKILL in the middle of a run; mpirun must exit
//       non-zero promptly.
//   mpi_stress --throw-on-rank K
//       A task on rank K's first core throws; the job must end non-zero with
//       the exception's message, rank and core on stderr.
//   mpi_stress --leave-on-rank K | --exit-on-rank K
//       Rank K leaves before the first run, by shoal::leave_job (status 2,
//       with a reason) or by returning 0 from main; the other ranks run: the
//       job must end within seconds naming rank K (and its reason), not hang.
//   mpi_stress --exit-in-run-on-rank K
//       A task on rank K calls std::exit(0) in the middle of a run: likewise.
#include "shoal/shoal.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace {

long long flag_value(int argc, char** argv, const char* name, long long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
  return fallback;
}

bool has_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "stress: FAILED on rank %d: %s\n", shoal::myrank(), what.c_str());
  return 1;
}

// "RssAnon: ... kB" style fields of /proc/self/status, in MiB (-1 if absent).
long status_mb(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kb = -1;
  const std::size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::atol(line + n + 1);
  std::fclose(f);
  return kb < 0 ? -1 : kb / 1024;
}

long peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // KiB on Linux
}

// ---------------------------------------------------------------- flood

// received[c][s]: messages core c (local index) received from rank s.
std::vector<std::vector<std::uint64_t>> g_received;

// Messages rank `from` sends to rank `to` in the flood of n per rank.
std::uint64_t flood_count(int from, int to, int ranks, std::uint64_t n) {
  if (from == to) return 0;
  if (from != 0) return to == 0 ? n : 0;
  // Rank 0 spreads its n over ranks 1..P-1, round robin.
  const auto others = static_cast<std::uint64_t>(ranks - 1);
  const auto j = static_cast<std::uint64_t>(to - 1);
  return n / others + (j < n % others ? 1 : 0);
}

int flood(std::uint64_t n, long max_rss_mb) {
  const int ranks = shoal::ranks();
  if (ranks < 2) return fail("--flood needs at least 2 ranks");
  const int lc = shoal::local_cores();
  g_received.assign(static_cast<std::size_t>(lc),
                    std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), 0));
  const auto start = std::chrono::steady_clock::now();
  shoal::run([n] {
    shoal::on_all_cores([n] {
      const int me = shoal::myrank();
      const int P = shoal::ranks();
      const int c = shoal::local_cores();
      const auto k = static_cast<std::uint64_t>(shoal::mycore() % c);
      // This core's share of its rank's n messages.
      const std::uint64_t lo = n * k / static_cast<std::uint64_t>(c);
      const std::uint64_t hi = n * (k + 1) / static_cast<std::uint64_t>(c);
      for (std::uint64_t i = lo; i < hi; ++i) {
        const int to = me != 0 ? 0 : 1 + static_cast<int>(i % static_cast<std::uint64_t>(P - 1));
        const int core = to * c + static_cast<int>(i % static_cast<std::uint64_t>(c));
        const std::uint64_t payload = i;
        shoal::send(core, [me, payload] {
          (void)payload;
          ++g_received[static_cast<std::size_t>(shoal::mycore() % shoal::local_cores())]
                      [static_cast<std::size_t>(me)];
        });
      }
    });
  });
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int me = shoal::myrank();
  for (int s = 0; s < ranks; ++s) {
    std::uint64_t got = 0;
    for (const auto& per_core : g_received) got += per_core[static_cast<std::size_t>(s)];
    const std::uint64_t want = flood_count(s, me, ranks, n);
    if (got != want)
      return fail("rank " + std::to_string(me) + " received " + std::to_string(got) +
                  " messages from rank " + std::to_string(s) + ", expected " +
                  std::to_string(want));
  }
  const long rss = peak_rss_mb();
  std::fprintf(stderr,
               "stress: rank %d: flood of %llu messages per rank in %.2f s, peak RSS %ld MiB "
               "(now: anonymous %ld MiB, shared %ld MiB)\n",
               me, static_cast<unsigned long long>(n), secs, rss, status_mb("RssAnon"),
               status_mb("RssShmem"));
  if (rss > max_rss_mb)
    return fail("peak resident memory " + std::to_string(rss) + " MiB exceeds the bound of " +
                std::to_string(max_rss_mb) + " MiB");
  if (me == 0)
    std::printf("flood: %d ranks, %llu messages per rank, exact counts, memory bounded: PASSED\n",
                ranks, static_cast<unsigned long long>(n));
  return 0;
}

// ---------------------------------------------------------------- cascade

constexpr int max_depth = 10;
constexpr int seeds_per_core = 1000;

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A message's children: 0..3 of them (mean 1.5) above its depth limit.
int children_of(std::uint64_t key, int depth) {
  const int limit = static_cast<int>(key % (max_depth + 1));
  return depth >= limit ? 0 : static_cast<int>((key >> 8) % 4);
}

std::uint64_t child_key(std::uint64_t key, int i) {
  return mix(key * 31 + static_cast<std::uint64_t>(i) + 1);
}

std::uint64_t seed_key(int run, int core, int s) {
  return mix((static_cast<std::uint64_t>(run) << 40) ^ (static_cast<std::uint64_t>(core) << 20) ^
             static_cast<std::uint64_t>(s));
}

// Sequential reference: handlers the cascade from `key` runs.
std::uint64_t cascade_size(std::uint64_t key, int depth) {
  std::uint64_t total = 1;
  const int n = children_of(key, depth);
  for (int i = 0; i < n; ++i) total += cascade_size(child_key(key, i), depth + 1);
  return total;
}

std::atomic<std::uint64_t> g_handled_here{0};  // handlers run on this process

void cascade_step(std::uint64_t key, int depth) {
  g_handled_here.fetch_add(1, std::memory_order_relaxed);
  const int n = children_of(key, depth);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t k = child_key(key, i);
    shoal::send(static_cast<int>(k % static_cast<std::uint64_t>(shoal::cores())),
                [k, depth] { cascade_step(k, depth + 1); });
  }
}

// Sum of g_handled_here over every rank, read by delegate from the root.
std::uint64_t handled_everywhere() {
  std::uint64_t sum = 0;
  for (int r = 0; r < shoal::ranks(); ++r)
    sum += shoal::delegate::call(r * shoal::local_cores(),
                                 [] { return g_handled_here.load(std::memory_order_relaxed); });
  return sum;
}

int cascade(int runs) {
  const int me = shoal::myrank();
  std::uint64_t expected_total = 0;
  bool ok = true;
  std::string error;
  for (int run = 0; run < runs; ++run) {
    std::uint64_t expected = 0;
    for (int c = 0; c < shoal::cores(); ++c)
      for (int s = 0; s < seeds_per_core; ++s) expected += cascade_size(seed_key(run, c, s), 0);
    expected_total += expected;
    shoal::run([run] {
      shoal::on_all_cores([run] {
        for (int s = 0; s < seeds_per_core; ++s) {
          const std::uint64_t k = seed_key(run, shoal::mycore(), s);
          shoal::send(static_cast<int>(k % static_cast<std::uint64_t>(shoal::cores())),
                      [k] { cascade_step(k, 0); });
        }
      });
    });
    // run() returned on this rank: its cores are stopped. A handler run
    // after this point would show up as a change below.
    const std::uint64_t here = g_handled_here.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (g_handled_here.load() != here) {
      ok = false;
      error = "a handler ran after run() returned (run " + std::to_string(run) + ")";
    }
    // Never early: the job-wide count, gathered in a fresh run, is exact.
    std::uint64_t seen = 0;
    shoal::run([&seen] { seen = handled_everywhere(); });
    if (me == 0 && seen != expected_total) {
      ok = false;
      error = "after run " + std::to_string(run) + " the cascades ran " + std::to_string(seen) +
              " handlers, the sequential count is " + std::to_string(expected_total);
    }
    if (!ok) break;
  }
  if (!ok) return fail(error);
  if (me == 0)
    std::printf("cascade: %d runs, %llu handlers, termination detected exactly: PASSED\n", runs,
                static_cast<unsigned long long>(expected_total));
  return 0;
}

// ---------------------------------------------------------------- steal

// Tasks run, by rank; only core 0 (rank 0) touches it, by message.
std::vector<std::uint64_t> g_ran_on;

void spin_for_us(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

int steal(int tasks) {
  g_ran_on.assign(static_cast<std::size_t>(shoal::ranks()), 0);
  for (int round = 0; round < 3; ++round) {
    shoal::run([tasks] {
      // Every task starts on core 0; only stealing can move it elsewhere.
      for (int i = 0; i < tasks; ++i)
        shoal::spawn<shoal::anywhere>([] {
          spin_for_us(200);
          const int r = shoal::myrank();
          shoal::send(0, [r] { ++g_ran_on[static_cast<std::size_t>(r)]; });
        });
    });
  }
  if (shoal::myrank() != 0) return 0;
  std::uint64_t total = 0;
  std::uint64_t elsewhere = 0;
  std::string by_rank;
  for (int r = 0; r < shoal::ranks(); ++r) {
    total += g_ran_on[static_cast<std::size_t>(r)];
    if (r != 0) elsewhere += g_ran_on[static_cast<std::size_t>(r)];
    by_rank += ' ';  // (" " + to_string(...) trips GCC 12's -Wrestrict false positive)
    by_rank += std::to_string(g_ran_on[static_cast<std::size_t>(r)]);
  }
  const auto want = static_cast<std::uint64_t>(tasks) * 3;
  if (total != want)
    return fail(std::to_string(total) + " tasks ran, expected " + std::to_string(want));
  if (shoal::ranks() > 1 && elsewhere == 0)
    return fail("no task was stolen by another process (tasks by rank:" + by_rank + ")");
  std::printf("steal: %llu tasks, by rank:%s: PASSED\n", static_cast<unsigned long long>(total),
              by_rank.c_str());
  return 0;
}

// ---------------------------------------------------------------- deadlock / kill

// The root waits for a promise nobody keeps: with --watchdog-s the job must
// end with the watchdog's report instead of hanging.
int deadlock() {
  shoal::run([] {
    auto pair = shoal::make_promise_pair<int>();
    pair.second.get();
  });
  return fail("the root returned from a wait nobody could end");
}

// Only core 0 joins a collective: every other core has finished its part.
int deadlock_collective() {
  shoal::run([] {
    shoal::on_all_cores([] {
      if (shoal::mycore() == 0) (void)shoal::allreduce_sum(1);
    });
  });
  return fail("a collective only core 0 called returned");
}

// barrier() from the root only, not from a task on every core (no SPMD).
int deadlock_barrier() {
  shoal::run([] { shoal::barrier(); });
  return fail("a barrier only the root called returned");
}

// ---------------------------------------------------------------- misuse

int misuse_local_on_rank(int k) {
  shoal::run([k] {
    const auto a = shoal::global_alloc<std::int64_t>(shoal::cores() * 8);  // a: core 0's
    shoal::send(k * shoal::local_cores(), [a] { *a.local() = 1; });
    shoal::completion_event never(1);
    never.wait();
  });
  return fail("local() on another process's element went unnoticed");
}

int misuse_outside_run_on_rank(int k) {
  if (shoal::myrank() == k) shoal::send(0, [] {});
  shoal::run([] {
    shoal::completion_event never(1);
    never.wait();
  });
  return fail("a send outside run() went unnoticed");
}

// Rank K's first core kills its own process by SIGKILL in the middle of a
// flood; mpirun must exit non-zero.
int kill_during_run(int k) {
  shoal::run([k] {
    shoal::on_all_cores([k] {
      for (int i = 0; i < 1'000'000; ++i) {
        if (i == 100'000 && shoal::myrank() == k && shoal::mycore() % shoal::local_cores() == 0)
          std::raise(SIGKILL);
        shoal::send((shoal::mycore() + 1) % shoal::cores(), [] {});
        if (i % 1000 == 0) shoal::yield();
      }
    });
  });
  return fail("the job went on after rank " + std::to_string(k) + " was killed");
}

// ---------------------------------------------------------------- throw

int throw_on_rank(int k) {
  shoal::run([k] {
    shoal::on_all_cores([k] {
      if (shoal::myrank() == k && shoal::mycore() % shoal::local_cores() == 0)
        throw std::runtime_error("stress: exception requested by --throw-on-rank");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    });
  });
  return fail("the job went on after a task threw on rank " + std::to_string(k));
}

// ---------------------------------------------------------------- leave early

int leave_on_rank(int k, bool plain_exit) {
  if (shoal::myrank() == k) {
    if (plain_exit) return 0;  // main returns: the exit hook leaves
    shoal::leave_job("stress: rank asked to leave by --leave-on-rank", 2);
  }
  shoal::run([] { std::this_thread::sleep_for(std::chrono::seconds(60)); });
  return fail("the job went on after rank " + std::to_string(k) + " left");
}

int exit_in_run_on_rank(int k) {
  shoal::run([k] {
    shoal::on_all_cores([k] {
      if (shoal::myrank() == k && shoal::mycore() % shoal::local_cores() == 0) std::exit(0);
      std::this_thread::sleep_for(std::chrono::seconds(60));
    });
  });
  return fail("the job went on after rank " + std::to_string(k) + " exited in a run");
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  int status = 0;
  if (has_flag(argc, argv, "--flood")) {
    status = flood(static_cast<std::uint64_t>(flag_value(argc, argv, "--flood", 1000)),
                   static_cast<long>(flag_value(argc, argv, "--max-rss-mb", 256)));
  } else if (has_flag(argc, argv, "--cascade")) {
    status = cascade(static_cast<int>(flag_value(argc, argv, "--cascade", 5)));
  } else if (has_flag(argc, argv, "--steal")) {
    status = steal(static_cast<int>(flag_value(argc, argv, "--steal", 1000)));
  } else if (has_flag(argc, argv, "--deadlock")) {
    status = deadlock();
  } else if (has_flag(argc, argv, "--deadlock-collective")) {
    status = deadlock_collective();
  } else if (has_flag(argc, argv, "--deadlock-barrier")) {
    status = deadlock_barrier();
  } else if (has_flag(argc, argv, "--misuse-local-on-rank")) {
    status =
        misuse_local_on_rank(static_cast<int>(flag_value(argc, argv, "--misuse-local-on-rank", 1)));
  } else if (has_flag(argc, argv, "--misuse-outside-run-on-rank")) {
    status = misuse_outside_run_on_rank(
        static_cast<int>(flag_value(argc, argv, "--misuse-outside-run-on-rank", 1)));
  } else if (has_flag(argc, argv, "--kill-during-run")) {
    status = kill_during_run(static_cast<int>(flag_value(argc, argv, "--kill-during-run", 1)));
  } else if (has_flag(argc, argv, "--throw-on-rank")) {
    status = throw_on_rank(static_cast<int>(flag_value(argc, argv, "--throw-on-rank", 1)));
  } else if (has_flag(argc, argv, "--leave-on-rank")) {
    status = leave_on_rank(static_cast<int>(flag_value(argc, argv, "--leave-on-rank", 1)), false);
  } else if (has_flag(argc, argv, "--exit-in-run-on-rank")) {
    status =
        exit_in_run_on_rank(static_cast<int>(flag_value(argc, argv, "--exit-in-run-on-rank", 1)));
  } else if (has_flag(argc, argv, "--exit-on-rank")) {
    status = leave_on_rank(static_cast<int>(flag_value(argc, argv, "--exit-on-rank", 1)), true);
  } else {
    std::fputs(
        "usage: mpi_stress --flood N [--max-rss-mb M] | --cascade RUNS | --steal T | "
        "--deadlock | --deadlock-collective | --deadlock-barrier | --throw-on-rank K | "
        "--misuse-local-on-rank K | --misuse-outside-run-on-rank K | --leave-on-rank K | "
        "--exit-on-rank K\n",
        stderr);
    status = 2;
  }
  shoal::finalize();
  return status;
}
