// Shared helpers for shoal's unit tests.
//
// - run_checked(cfg, body): init(cfg), run(body), check the teardown report
//   (no live worker, no queued task, no aggregation buffer out), finalize().
// - cores_test: a fixture parameterised over the core count; instantiate it
//   with SHOAL_TEST_CORES(suite) for cores {1, 2, 4}.
// - watchdog: ends the process with a message when a run hangs, so a
//   livelock fails within seconds instead of at ctest's 300 s timeout.
// - yield_until(pred, limit): a bounded `while (!pred()) yield();` for use in
//   tasks.
// - rss_bytes(): resident set size of this process, from /proc/self/statm.
//
// Assertions on results belong after run() returns (on the test's thread);
// gtest EXPECT_* from a shoal core is allowed but kept to a minimum.
#pragma once

#include "shoal/shoal.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include <unistd.h>

#include <gtest/gtest.h>

namespace shoal_test {

/// Whether this is an AddressSanitizer build (memory bounds are looser there).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool sanitized_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool sanitized_build = true;
#else
inline constexpr bool sanitized_build = false;
#endif
#else
inline constexpr bool sanitized_build = false;
#endif

/// A configuration with `cores` cores and every other field at its default.
inline shoal::config make_config(int cores) {
  shoal::config c;
  c.cores = cores;
  return c;
}

/// How much longer than in a Release build a test may take here: 4 under a
/// sanitizer (a Debug ASan build runs 3-10x slower; the same factor as
/// SHOAL_TEST_TIME_SCALE in cmake/shoal_options.cmake), else 1.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int test_time_scale = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr int test_time_scale = 4;
#else
inline constexpr int test_time_scale = 1;
#endif
#else
inline constexpr int test_time_scale = 1;
#endif

/// Ends the whole process (exit status 3) when not disarmed within `limit`
/// (times test_time_scale). Costs one sleeping thread; allocates only when
/// created.
class watchdog {
 public:
  explicit watchdog(std::chrono::seconds limit, std::string what = current_test_name())
      : what_(std::move(what)),
        thread_([this, scaled = limit * test_time_scale] { watch(scaled); }) {}
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;
  ~watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      disarmed_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  static std::string current_test_name() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info == nullptr) return "<no test>";
    return std::string(info->test_suite_name()) + "." + info->name();
  }

 private:
  void watch(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, limit, [this] { return disarmed_; })) return;
    std::fprintf(stderr, "watchdog: %s did not finish within %lld s (hang or livelock)\n",
                 what_.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(3);
  }

  std::string what_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;
};

/// Default limit of one run() in the tests.
inline constexpr std::chrono::seconds default_run_limit{90};

/// Asserts that the last run() left nothing behind.
inline void expect_clean_teardown() {
  const auto r = shoal::detail::last_teardown();
  EXPECT_EQ(r.live_workers, 0u) << "workers still suspended after run()";
  EXPECT_EQ(r.queued_tasks, 0u) << "tasks never run after run()";
  EXPECT_EQ(r.buffers_out, 0u) << "aggregation buffers not back in their pools after run()";
}

/// shoal::run(body) under a watchdog, then the teardown check. The runtime
/// must be initialised. Rethrows what run() throws.
template <class F>
void run_once(F&& body, std::chrono::seconds limit = default_run_limit) {
  watchdog dog(limit);
  shoal::run(body);
  expect_clean_teardown();
}

/// init(cfg), run(body) with the teardown check, finalize(). Rethrows what
/// run() throws (after finalize()).
template <class F>
void run_checked(const shoal::config& cfg, F&& body,
                 std::chrono::seconds limit = default_run_limit) {
  shoal::init(cfg);
  try {
    run_once(body, limit);
  } catch (...) {
    shoal::finalize();
    throw;
  }
  shoal::finalize();
}

/// Fixture for death tests of programs with shoal's threads running.
class death_test : public ::testing::Test {
 protected:
  void SetUp() override {  // NOLINT(readability-identifier-naming): gtest
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

/// init(cfg); run(body); finalize(): for bodies expected to end the process.
template <class F>
void run_to_death(const shoal::config& cfg, F body) {
  shoal::init(cfg);
  shoal::run(body);
  shoal::finalize();
}

/// Fixture parameterised over the number of cores.
class cores_test : public ::testing::TestWithParam<int> {
 protected:
  int ncores() const { return GetParam(); }
  shoal::config config() const { return make_config(GetParam()); }

  template <class F>
  void run(F&& body, std::chrono::seconds limit = default_run_limit) {
    run_checked(config(), body, limit);
  }
  template <class F>
  void run(const shoal::config& cfg, F&& body, std::chrono::seconds limit = default_run_limit) {
    run_checked(cfg, body, limit);
  }

  void TearDown() override {  // NOLINT(readability-identifier-naming): gtest
    if (shoal::initialized()) shoal::finalize();
  }
};

/// A cores_test whose checks run once per one-sided backend of one process
/// (direct and am); each check returns the wrong values it saw.
class backends_test : public cores_test {
 protected:
  /// This test's configuration with one-sided backend k.
  shoal::config with(shoal::one_sided_kind k) const {
    shoal::config c = config();
    c.one_sided = k;
    return c;
  }
  /// Runs check() (or check(k), where it takes the backend) under each
  /// backend k; expects 0 wrong values from each.
  template <class F>
  void each_backend(F check) {
    for (auto k : {shoal::one_sided_kind::direct, shoal::one_sided_kind::am}) {
      std::uint64_t wrong = 1;
      run(with(k), [&] {
        if constexpr (std::is_invocable_v<F&, shoal::one_sided_kind>)
          wrong = check(k);
        else
          wrong = check();
      });
      EXPECT_EQ(wrong, 0u) << "backend " << static_cast<int>(k);
    }
  }
};

inline std::string cores_name(const ::testing::TestParamInfo<int>& info) {
  return "cores" + std::to_string(info.param);
}

/// Yields until pred() holds or `limit` has passed; returns pred(). Task only.
template <class P>
bool yield_until(P pred, std::chrono::milliseconds limit = std::chrono::milliseconds(20000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::uint32_t spins = 0;
  while (!pred()) {
    shoal::yield();
    // Reading the clock every time would dominate short waits.
    if ((++spins & 1023u) == 0 && std::chrono::steady_clock::now() > deadline) return pred();
  }
  return true;
}

/// Resident set size of this process in bytes.
inline std::int64_t rss_bytes() {
  long pages_total = 0;
  long pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  const int got = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  if (got != 2) return -1;
  return static_cast<std::int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

/// Busy-waits for about `ns` nanoseconds (never suspends).
inline void spin_for_ns(std::int64_t ns) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < end) {
  }
}

/// A deterministic 64-bit generator (splitmix64).
struct splitmix64 {
  std::uint64_t state;
  explicit splitmix64(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

/// A counter on its own cache line, for per-core tallies.
struct alignas(64) padded_counter {
  std::atomic<std::int64_t> value{0};
};

/// Spawns `workers` local tasks that each first suspend on a gate, so that
/// all of them are workers in the ready queue when released; each then runs
/// body(index). Returns when every body has finished. Call from a task.
template <class Body>
void run_gated_workers(int workers, const Body& body) {
  shoal::completion_event arrived(workers);
  shoal::completion_event gate(1);
  shoal::completion_event done(workers);
  auto* a = &arrived;
  auto* g = &gate;
  auto* d = &done;
  const Body* b = &body;
  for (int w = 0; w < workers; ++w) {
    shoal::spawn([a, g, d, b, w] {
      a->complete();
      g->wait();
      (*b)(w);
      d->complete();
    });
  }
  arrived.wait();
  gate.complete();
  done.wait();
}

}  // namespace shoal_test

/// Instantiates a cores_test-derived suite for cores 1, 2 and 4.
#define SHOAL_TEST_CORES(suite) \
  INSTANTIATE_TEST_SUITE_P(Cores, suite, ::testing::Values(1, 2, 4), ::shoal_test::cores_name)
