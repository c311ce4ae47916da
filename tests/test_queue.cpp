// UPC queues (include/shoal/containers/queue.hpp) on one process of two
// cores: coalescing on and off seen from the receiver while the sender
// cannot flush by any other means (it spins without yielding, with
// --flush-us at 10 s), the bucket size, and misuse that must end the job
// naming the queue. The behaviour across processes is tests/mpi/dist_queue.cpp.
#include "shoal/containers/queue.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "test_support.hpp"

namespace {

using namespace std::chrono_literals;
using shoal_test::make_config;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

/// Two cores; a staged item leaves only when its batch is full, on flush(),
/// or when its core goes idle (--flush-us far beyond any test's length).
shoal::config held_config() {
  shoal::config c = make_config(2);
  c.flush_us = 10'000'000;
  return c;
}

std::atomic<int> g_step{0};
std::atomic<int> g_sent{0};

/// On the calling core, without yielding (so this core neither polls nor
/// goes idle): waits until g_step reaches `step`, at most 10 s.
bool spin_until_step(int step) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (g_step.load() < step)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

struct outcome {
  int before_flush = -1;  ///< items core 0 had while core 1 held them
  int after_flush = -1;   ///< items core 0 had in all, after core 1's flush()
  bool sender_released = false;
};

/// Core 1 enqueues `n` ints to core 0 and spins; once they are enqueued,
/// core 0 dequeues until it has `expected` (at most 10 s), then 200 ms more
/// to catch any beyond (a loaded machine can only hide a surplus here, never
/// invent a shortfall), then lets core 1 flush and dequeues the rest.
outcome send_and_hold(const shoal::queue_options& options, int n, int expected) {
  g_step = 0;
  g_sent = 0;
  outcome out;
  shoal::init(held_config());
  shoal::run([&out, options, n, expected] {
    auto q = shoal::queue<std::int32_t>::create(options);
    shoal::on_all_cores([q, n, expected, &out] {
      if (shoal::mycore() == 1) {
        for (std::int32_t i = 0; i < n; ++i) q.enqueue(0, i);
        g_sent = 1;
        out.sender_released = spin_until_step(1);
        q.flush();
        return;
      }
      int got = 0;
      bool in_order = true;
      const auto take = [&] {
        if (auto v = q.try_dequeue()) {
          in_order &= *v == got++;
        } else {
          shoal::yield();
        }
      };
      const auto sent_by = std::chrono::steady_clock::now() + 10s;
      while (g_sent.load() == 0 && std::chrono::steady_clock::now() < sent_by) shoal::yield();
      const auto enough_by = std::chrono::steady_clock::now() + 10s;
      while (got < expected && std::chrono::steady_clock::now() < enough_by) take();
      const auto surplus_by = std::chrono::steady_clock::now() + 200ms;
      while (std::chrono::steady_clock::now() < surplus_by) take();
      out.before_flush = got;
      g_step = 1;
      while (got < n) {
        const auto v = q.dequeue(10s);
        if (!v) break;
        in_order &= *v == got++;
      }
      out.after_flush = in_order ? got : -1;
    });
    q.destroy();
  });
  shoal::finalize();
  return out;
}

TEST(queue, WithoutCoalescingEachItemLeavesAtOnce) {
  const outcome o = send_and_hold({.coalesce = false}, 5, 5);
  EXPECT_TRUE(o.sender_released);
  EXPECT_EQ(o.before_flush, 5);
  EXPECT_EQ(o.after_flush, 5);
}

TEST(queue, WithCoalescingItemsWaitForFlush) {
  const outcome o = send_and_hold({.coalesce = true}, 5, 0);
  EXPECT_TRUE(o.sender_released);
  EXPECT_EQ(o.before_flush, 0);
  EXPECT_EQ(o.after_flush, 5);
}

// A 64-byte bucket holds eight 8-byte records (4-byte length, 4-byte int):
// of 20 items, the first 16 leave in two full buckets, the last 4 on flush().
TEST(queue, FullBucketsLeaveWithoutFlush) {
  const outcome o = send_and_hold({.coalesce = true, .bucket_bytes = 64}, 20, 16);
  EXPECT_TRUE(o.sender_released);
  EXPECT_EQ(o.before_flush, 16);
  EXPECT_EQ(o.after_flush, 20);
}

class queueDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {  // NOLINT(readability-identifier-naming): gtest
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(queueDeathTest, UseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto q = shoal::queue<int>::create();
                             const auto copy = q;
                             q.destroy();
                             copy.enqueue(1, 2);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::queue #[0-9a-f]+: used after destroy\\(\\)");
}

TEST_F(queueDeathTest, DequeueAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto q = shoal::queue<int>::create();
                             const auto copy = q;
                             q.destroy();
                             (void)copy.try_dequeue();
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::queue #[0-9a-f]+: used after destroy\\(\\)");
}

TEST_F(queueDeathTest, DefaultHandleIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(1),
                           [] {
                             shoal::queue<int> q;
                             q.flush();
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::queue #0: used through a default-constructed handle");
}

TEST_F(queueDeathTest, EnqueueToACoreOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto q = shoal::queue<int>::create();
                             q.enqueue(5, 1);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::queue #[0-9a-f]+: enqueue: core 5 is not a core of the job \\(0 .. 1\\)");
}

TEST_F(queueDeathTest, BlockingDequeueInAHandlerIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto q = shoal::queue<int>::create();
                             shoal::send(1, [q] { (void)q.dequeue(1s); });
                             shoal::drain_messages();
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::queue #[0-9a-f]+: dequeue\\(timeout\\) would wait in a message handler");
}

TEST_F(queueDeathTest, BucketLargerThanABufferIsNamed) {
  EXPECT_EXIT(
      run_to_death(
          make_config(2),
          [] { (void)shoal::queue<int>::create({.coalesce = true, .bucket_bytes = 1U << 20}); }),
      ExitedWithCode(shoal::exit_status::fatal),
      "shoal::queue::create: bucket_bytes 1048576 is larger than an aggregation "
      "buffer \\([0-9]+ bytes\\)");
}

TEST_F(queueDeathTest, ItemLargerThanABufferIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto q = shoal::queue<std::string>::create();
                             q.enqueue(1, std::string(20000, 'x'));
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::queue::enqueue \\(channel [0-9]+\\): a record of 20008 bytes");
}

}  // namespace
