// UPC queues (include/shoal/containers/queue.hpp) at 1 x 2, 2 x 2 and 3 x 2
// processes x cores, with coalescing on and off: many senders to one core
// (every item arrives once, each sender's in its order), every core to every
// core, the paper's ping-pong (core 0 sends each item back), variable-length
// items, enqueues from handlers, and the blocking dequeue's timeout. A failed
// check prints what it saw and counts in g_failures, asserted 0 on every rank.
#include "shoal/containers/queue.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "mpi/dist_support.hpp"

namespace {

std::atomic<int> g_failures{0};

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "check failed on core %d: %s\n", shoal::mycore(), what.c_str());
  g_failures.fetch_add(1);
}

using namespace std::chrono_literals;
using item = std::pair<std::int32_t, std::int32_t>;  // (sender, sequence number)

constexpr int per_core = 500;

shoal::queue<item> g_collective;  // set by core 0 in PingPongThroughCoreZero

/// Every core sends per_core items to core 0; core 0 dequeues them all and
/// checks that each sender's arrive once and in order.
void many_senders_to_core0(bool coalesce) {
  shoal_dist::run_job([coalesce] {
    auto q = shoal::queue<item>::create({.coalesce = coalesce});
    shoal::on_all_cores([q, coalesce] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      for (int i = 0; i < per_core; ++i) q.enqueue(0, item{me, i});
      q.flush();
      if (me != 0) return;
      std::vector<int> next(static_cast<std::size_t>(p), 0);
      int got = 0;
      bool in_order = true;
      while (got < p * per_core) {
        const auto v = q.dequeue(20s);
        if (!v) break;
        const auto [sender, seq] = *v;
        if (sender < 0 || sender >= p) {
          in_order = false;
          break;
        }
        in_order &= seq == next[static_cast<std::size_t>(sender)]++;
        ++got;
      }
      check(got == p * per_core, fmt::format("coalesce {}: core 0 dequeued {} of {} items",
                                             coalesce, got, p * per_core));
      check(in_order, fmt::format("coalesce {}: each sender's items in enqueue order", coalesce));
      check(!q.try_dequeue().has_value(), "nothing beyond what was sent");
    });
    check(!q.coalescing() == !coalesce, "coalescing() reports the option");
    q.destroy();
  });
}

TEST(dist_queue, ManySendersToOneCoreCoalescing) {
  g_failures = 0;
  many_senders_to_core0(true);
  EXPECT_EQ(g_failures.load(), 0);
}

TEST(dist_queue, ManySendersToOneCoreImmediate) {
  g_failures = 0;
  many_senders_to_core0(false);
  EXPECT_EQ(g_failures.load(), 0);
}

// Every core enqueues to every core (itself included) strings of varying
// length; after a barrier every item is in its queue: try_dequeue drains
// them without waiting, and each sender's are in order.
TEST(dist_queue, EveryCoreToEveryCoreVariableLengthItems) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto q = shoal::queue<std::string>::create();
    shoal::on_all_cores([q] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      for (int i = 0; i < 100; ++i)
        for (int d = 0; d < p; ++d)
          q.enqueue(d,
                    fmt::format("{}:{}:{}", me, i, std::string(static_cast<std::size_t>(i), 'x')));
      shoal::barrier();  // every enqueue above is in its queue
      check(q.local_size() == static_cast<std::size_t>(100 * p),
            fmt::format("local_size {} after the barrier", q.local_size()));
      std::vector<int> next(static_cast<std::size_t>(p), 0);
      bool ok = true;
      int got = 0;
      while (auto s = q.try_dequeue()) {
        int sender = -1;
        int seq = -1;
        ok &=
            std::sscanf(s->c_str(), "%d:%d:", &sender, &seq) == 2 && sender >= 0 && sender < p &&
            seq == next[static_cast<std::size_t>(sender)]++ &&
            s->size() == fmt::format("{}:{}:", sender, seq).size() + static_cast<std::size_t>(seq);
        ++got;
      }
      check(ok && got == 100 * p, fmt::format("got {} items of {}, ordered: {}", got, 100 * p, ok));
      check(q.local_size() == 0, "drained");
    });
    q.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// The paper's microbenchmark pattern: each core enqueues to core 0, which
// enqueues each item back to its sender; senders wait for their replies.
TEST(dist_queue, PingPongThroughCoreZero) {
  g_failures = 0;
  for (const bool coalesce : {false, true}) {
    shoal_dist::run_job([coalesce] {
      shoal::on_all_cores([coalesce] {
        // Created collectively: every core gets core 0's handle.
        const auto q = shoal::queue<item>::create_collective({.coalesce = coalesce});
        const int me = shoal::mycore();
        const int p = shoal::cores();
        constexpr int rounds = 50;
        if (me == 0) {
          for (int n = 0; n < (p - 1) * rounds; ++n) {
            const auto v = q.dequeue(20s);
            if (!v) {
              check(false, fmt::format("core 0 timed out after {} items", n));
              break;
            }
            q.enqueue(v->first, item{0, v->second + 1});
            q.flush();
          }
        } else {
          bool ok = true;
          for (int i = 0; i < rounds; ++i) {
            q.enqueue(0, item{me, 2 * i});
            q.flush();
            const auto r = q.dequeue(20s);
            ok &= r.has_value() && r->first == 0 && r->second == 2 * i + 1;
            if (!r) break;
          }
          check(ok, fmt::format("coalesce {}: core {}'s replies", coalesce, me));
        }
        shoal::barrier();
        check(q.local_size() == 0, "no stray replies");
        if (me == 0) g_collective = q;
      });
      g_collective.destroy();  // the root task runs on core 0's process
    });
  }
  EXPECT_EQ(g_failures.load(), 0);
}

// Enqueues made by message handlers (closures) land like any other.
TEST(dist_queue, EnqueueFromHandlers) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto q = shoal::queue<std::uint64_t>::create();
    shoal::on_all_cores([q] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      // Ask the next core to enqueue 10 values to this one.
      for (std::uint64_t v = 0; v < 10; ++v)
        shoal::send((me + 1) % p,
                    [q, me, v] { q.enqueue(me, 1000 * static_cast<std::uint64_t>(me) + v); });
      shoal::barrier();
      bool ok = q.local_size() == 10;
      std::uint64_t expect = 1000 * static_cast<std::uint64_t>(me);
      while (auto v = q.try_dequeue()) ok &= *v == expect++;
      check(ok, "items enqueued by handlers, in order");
    });
    q.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// A blocking dequeue on an empty queue returns nothing once its timeout has
// passed, not before; one with an item returns it at once.
TEST(dist_queue, DequeueTimesOut) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto q = shoal::queue<int>::create();
    shoal::on_all_cores([q] {
      const auto t0 = std::chrono::steady_clock::now();
      const auto v = q.dequeue(60ms);
      const auto waited = std::chrono::steady_clock::now() - t0;
      check(!v.has_value(), "an empty queue's dequeue returns nothing");
      check(waited >= 60ms,
            fmt::format("it waited {} us, at least the 60 ms timeout",
                        std::chrono::duration_cast<std::chrono::microseconds>(waited).count()));
      shoal::barrier();
      q.enqueue(shoal::mycore(), 7);
      const auto t1 = std::chrono::steady_clock::now();
      check(q.dequeue(10s) == 7, "an item is returned");
      check(std::chrono::steady_clock::now() - t1 < 1s, "at once");
    });
    q.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

}  // namespace

SHOAL_DIST_MAIN()
