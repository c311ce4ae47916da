// mpsc_ring on its own, without the runtime: several producer threads push
// while one consumer pops. Every pointer must arrive exactly once, and the
// pointers of one producer in the order it pushed them.
#include "shoal/detail/mpsc_ring.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal::detail::mpsc_ring;

struct item {
  std::uint32_t producer;
  std::uint32_t seq;
};

TEST(mpsc_ring, CapacityIsAPowerOfTwoOfAtLeastTwo) {
  EXPECT_EQ(mpsc_ring<item>(0).capacity(), 2u);
  EXPECT_EQ(mpsc_ring<item>(1).capacity(), 2u);
  EXPECT_EQ(mpsc_ring<item>(2).capacity(), 2u);
  EXPECT_EQ(mpsc_ring<item>(5).capacity(), 8u);
  EXPECT_EQ(mpsc_ring<item>(64).capacity(), 64u);
  EXPECT_EQ(mpsc_ring<item>(65).capacity(), 128u);
}

TEST(mpsc_ring, EmptyRingPopsNullAndIsNotReady) {
  mpsc_ring<item> r(4);
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.try_pop(), nullptr);
  item x{0, 0};
  ASSERT_TRUE(r.try_push(&x));
  EXPECT_TRUE(r.ready());
  EXPECT_EQ(r.try_pop(), &x);
  // Emptied after use: still empty, not a stale value.
  EXPECT_FALSE(r.ready());
  EXPECT_EQ(r.try_pop(), nullptr);
}

TEST(mpsc_ring, PushFailsWhenFullAndSucceedsOnceACellIsFree) {
  mpsc_ring<item> r(8);
  std::vector<item> items(10);
  for (std::size_t i = 0; i < 8; ++i) ASSERT_TRUE(r.try_push(&items[i])) << i;
  EXPECT_FALSE(r.try_push(&items[8]));
  EXPECT_EQ(r.try_pop(), &items[0]);
  EXPECT_TRUE(r.try_push(&items[8]));
  EXPECT_FALSE(r.try_push(&items[9]));
  for (std::size_t i = 1; i <= 8; ++i) EXPECT_EQ(r.try_pop(), &items[i]) << i;
  EXPECT_EQ(r.try_pop(), nullptr);
}

// Head and tail run many laps past the capacity; each cell is reused.
TEST(mpsc_ring, WrapsAroundManyLapsInOrder) {
  constexpr std::size_t n = 10'000;
  mpsc_ring<item> r(4);
  std::vector<item> items(n);
  std::size_t pushed = 0;
  std::size_t popped = 0;
  while (popped < n) {
    while (pushed < n && r.try_push(&items[pushed])) ++pushed;
    ASSERT_EQ(r.try_pop(), &items[popped]) << popped;
    ++popped;
  }
  EXPECT_EQ(r.try_pop(), nullptr);
}

/// `producers` threads each push `per_producer` items through a ring of
/// `capacity`, retrying when full, while this thread pops them all. Checks
/// that each item arrives once and each producer's items arrive in order.
void exchange(int producers, std::uint32_t per_producer, std::size_t capacity) {
  shoal_test::watchdog dog(std::chrono::seconds(60));
  mpsc_ring<item> r(capacity);
  std::vector<item> items(static_cast<std::size_t>(producers) * per_producer);
  std::atomic<bool> go{false};
  std::atomic<int> done_pushing{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      while (!go.load()) std::this_thread::yield();
      for (std::uint32_t s = 0; s < per_producer; ++s) {
        item& it = items[static_cast<std::size_t>(p) * per_producer + s];
        it = item{static_cast<std::uint32_t>(p), s};
        while (!r.try_push(&it)) std::this_thread::yield();
      }
      done_pushing.fetch_add(1);
    });
  }
  go.store(true);
  std::vector<std::uint32_t> next(static_cast<std::size_t>(producers), 0);
  std::uint64_t received = 0;
  std::uint64_t sum = 0;
  std::uint64_t out_of_order = 0;
  while (received < items.size()) {
    const bool all_pushed = done_pushing.load() == producers;
    const item* it = r.try_pop();
    if (it == nullptr) {
      if (all_pushed) break;      // every push succeeded, yet the ring is empty: items lost
      std::this_thread::yield();  // on a loaded machine the producers need this CPU
      continue;
    }
    out_of_order += it->seq != next[it->producer] ? 1 : 0;
    next[it->producer] = it->seq + 1;
    sum += it->seq;
    ++received;
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(received, items.size());
  EXPECT_EQ(r.try_pop(), nullptr);
  EXPECT_EQ(out_of_order, 0u);
  for (int p = 0; p < producers; ++p) EXPECT_EQ(next[static_cast<std::size_t>(p)], per_producer);
  const std::uint64_t per_sum = std::uint64_t{per_producer} * (per_producer - 1) / 2;
  EXPECT_EQ(sum, per_sum * static_cast<std::uint64_t>(producers));
}

TEST(mpsc_ring, FourProducersOneConsumerEveryItemOnceInProducerOrder) {
  exchange(4, 200'000, 1024);
}

// A ring of two cells: producers are refused most of the time and every
// cell is reused every other item, the tightest case for the sequence numbers.
TEST(mpsc_ring, ThreeProducersThroughATwoCellRing) { exchange(3, 20'000, 2); }

}  // namespace
