// The hot paths allocate nothing (STYLE 7): this file replaces every
// replaceable global operator new/delete with counting versions, runs each
// workload once to warm the pools up, then runs it again and expects the
// counter not to move. Measurement happens inside the root task, around the
// workload and all of its waits.
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "test_support.hpp"

namespace {

std::atomic<std::int64_t> g_allocations{0};

void* counted_alloc(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);  // a tally, no ordering needed
  return std::malloc(n == 0 ? 1 : n);
}

void* counted_aligned_alloc(std::size_t n, std::align_val_t al) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);  // a tally, no ordering needed
  const auto a = static_cast<std::size_t>(al);
  const std::size_t size = (n + a - 1) / a * a;
  return std::aligned_alloc(a, size == 0 ? a : size);
}

// Out of line so that GCC does not see free() paired with operator new.
[[gnu::noinline]] void release(void* p) noexcept { std::free(p); }

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t al) {
  if (void* p = counted_aligned_alloc(n, al)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) {
  if (void* p = counted_aligned_alloc(n, al)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return counted_aligned_alloc(n, al);
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  return counted_aligned_alloc(n, al);
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }

namespace {

using shoal_test::cores_test;
constexpr auto relaxed = std::memory_order_relaxed;

std::int64_t allocations() { return g_allocations.load(relaxed); }

/// Does each core's one-time lazy set-up (its first workers, its staging
/// rows) on every core. Without it, a core that happens to steal its first
/// task only during the measured run would allocate there.
void prime_every_core() {
  shoal::on_all_cores([] {
    for (int c = 0; c < shoal::cores(); ++c) shoal::send(c, [] {});
    shoal::completion_event e(2);
    shoal::completion_event* p = &e;
    for (int k = 0; k < 2; ++k) {
      shoal::spawn([p] {
        shoal::yield();
        p->complete();
      });
    }
    e.wait();
  });
}

/// Primes every core, runs `phase` once to warm up, then again; returns the
/// allocations made during the second run.
template <class P>
std::int64_t allocations_in_second_run(P&& phase) {
  prime_every_core();
  phase();
  const std::int64_t before = allocations();
  phase();
  return allocations() - before;
}

class no_alloc : public cores_test {};

// Keeps the compiler from eliding a new/delete pair.
void* volatile g_sink = nullptr;

TEST(NoAllocCounter, CountsEveryForm) {
  struct alignas(128) wide {
    char c;
  };
  const std::int64_t before = allocations();
  int* a = new int(1);
  g_sink = a;
  delete a;
  int* b = new int[3];
  g_sink = b;
  delete[] b;
  wide* c = new wide;
  g_sink = c;
  delete c;
  wide* d = new wide[2];
  g_sink = d;
  delete[] d;
  void* e = ::operator new(8, std::nothrow);
  g_sink = e;
  ::operator delete(e, std::nothrow);
  EXPECT_EQ(allocations() - before, 5);
}

TEST_P(no_alloc, ClosureSendsBetweenCoresAndToSelf) {
  constexpr std::int64_t n = 100'000;
  std::int64_t during = -1;
  bool complete = true;
  run([&] {
    std::atomic<std::int64_t> handled{0};
    std::atomic<std::int64_t>* h = &handled;
    std::int64_t target = 0;
    during = allocations_in_second_run([&] {
      for (std::int64_t i = 0; i < n; ++i) {
        shoal::send(static_cast<int>(i % shoal::cores()),
                    [h, i] { h->fetch_add(i & 1 ? 2 : 1, relaxed); });
        target += i & 1 ? 2 : 1;
      }
      complete &= shoal_test::yield_until([&] { return handled.load() == target; });
    });
  });
  EXPECT_TRUE(complete);
  EXPECT_EQ(during, 0) << "allocations during 100,000 closure sends";
}

TEST_P(no_alloc, ChannelSends) {
  constexpr std::int64_t n = 100'000;
  std::int64_t during = -1;
  bool complete = true;
  run([&] {
    std::atomic<std::int64_t> sum{0};
    std::atomic<std::int64_t>* s = &sum;
    auto ch =
        shoal::make_channel<std::int64_t>([s](const std::int64_t& v) { s->fetch_add(v, relaxed); });
    std::int64_t target = 0;
    during = allocations_in_second_run([&] {
      for (std::int64_t i = 0; i < n; ++i) {
        ch.send(static_cast<int>(i % shoal::cores()), i);
        target += i;
      }
      complete &= shoal_test::yield_until([&] { return sum.load() == target; });
    });
    ch.close();
  });
  EXPECT_TRUE(complete);
  EXPECT_EQ(during, 0) << "allocations during 100,000 channel sends";
}

TEST_P(no_alloc, SpawnsAndRuns) {
  // 100 bursts of 500 local and 500 stealable tasks. Bursts keep the queues'
  // high-water mark independent of how fast other cores steal (a single
  // burst of 100,000 overflows the 4096-slot public deque into the private
  // FIFO by an amount that depends on steal timing, so the warm-up may not
  // reach the measured run's peak).
  constexpr std::int64_t bursts = 100;
  constexpr std::int64_t per_burst = 1000;
  std::int64_t during = -1;
  std::int64_t ran = 0;
  run([&] {
    during = allocations_in_second_run([&] {
      for (std::int64_t b = 0; b < bursts; ++b) {
        shoal::completion_event done(per_burst);
        shoal::completion_event* d = &done;
        std::int64_t* r = &ran;
        for (std::int64_t i = 0; i < per_burst / 2; ++i) {
          shoal::spawn([d, r] {
            ++*r;
            d->complete();
          });
          shoal::spawn<shoal::stealable>([d] { d->complete(); });
        }
        done.wait();
      }
    });
  });
  EXPECT_EQ(ran, bursts * per_burst);  // half of each run, twice
  EXPECT_EQ(during, 0) << "allocations during 100,000 spawns";
}

TEST_P(no_alloc, YieldsBetweenTwoWorkers) {
  constexpr int yields_each = 50'000;
  std::int64_t during = -1;
  std::int64_t total_yields = 0;
  run([&] {
    during = allocations_in_second_run([&] {
      // Both tasks are workers in the ready queue, so each yield switches
      // to the other.
      std::int64_t* t = &total_yields;
      shoal_test::run_gated_workers(2, [t](int) {
        for (int i = 0; i < yields_each; ++i) {
          shoal::yield();
          ++*t;
        }
      });
    });
  });
  EXPECT_EQ(total_yields, 4 * yields_each);
  EXPECT_EQ(during, 0) << "allocations during 100,000 yields";
}

TEST_P(no_alloc, BlockingDelegateRoundTrips) {
  constexpr int n = 10'000;
  std::int64_t during = -1;
  std::int64_t sum = 0;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(8 * shoal::cores());
    for (int c = 0; c < shoal::cores(); ++c) shoal::delegate::write(a + 8 * c, std::int64_t{0});
    during = allocations_in_second_run([&] {
      for (int i = 0; i < n; ++i) {
        const int c = (i + 1) % shoal::cores();  // mostly remote
        sum += shoal::delegate::fetch_add(a + 8 * c, std::int64_t{1});
      }
    });
    shoal::global_free(a);
  });
  // Two runs of n increments spread over the cores' counters.
  EXPECT_GT(sum, 0);
  EXPECT_EQ(during, 0) << "allocations during 10,000 blocking delegates";
}

TEST_P(no_alloc, FutureReturningAsyncDelegates) {
  constexpr int n = 10'000;
  constexpr int batch = 100;
  std::int64_t during = -1;
  std::int64_t got = 0;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(8 * shoal::cores());
    for (int c = 0; c < shoal::cores(); ++c) shoal::delegate::write(a + 8 * c, std::int64_t{0});
    std::array<shoal::future<std::int64_t>, batch> fs;
    during = allocations_in_second_run([&] {
      for (int i = 0; i < n; i += batch) {
        for (int k = 0; k < batch; ++k) {
          const int c = (i + k) % shoal::cores();
          fs[static_cast<std::size_t>(k)] =
              shoal::delegate::async_fetch_add(a + 8 * c, std::int64_t{1});
        }
        for (auto& f : fs) got += f.get() >= 0 ? 1 : 0;
      }
    });
    shoal::global_free(a);
  });
  EXPECT_EQ(got, 2 * n);
  EXPECT_EQ(during, 0) << "allocations during 10,000 async delegates with futures";
}

SHOAL_TEST_CORES(no_alloc);

}  // namespace
