// chase_lev_deque on its own, without the runtime: the owner pushes and pops
// at the bottom while thieves steal from the top. Every task must be taken
// exactly once, whole (all 64 closure bytes as written), by exactly one side.
#include "shoal/detail/chase_lev_deque.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal::detail::chase_lev_deque;
using shoal::detail::inline_task;

/// What the tasks of one test report to: how often each id ran, and how many
/// tasks arrived with a closure that was not the one written (a torn copy).
struct ledger {
  explicit ledger(std::size_t n) : runs(n) {}
  std::vector<std::atomic<std::uint32_t>> runs;
  std::atomic<std::uint64_t> torn{0};
  std::atomic<std::uint64_t> last{~std::uint64_t{0}};  // id of the task that ran last

  std::uint64_t total_runs() const {
    std::uint64_t sum = 0;
    for (const auto& r : runs) sum += r.load();
    return sum;
  }
  std::uint64_t ids_not_run_once() const {
    return static_cast<std::uint64_t>(
        std::count_if(runs.begin(), runs.end(), [](const auto& r) { return r.load() != 1; }));
  }
};

/// A task filling the whole 64-byte closure: the id, two words derived from
/// it and the ledger, so that a torn slot copy is detected when it runs.
inline_task make_task(ledger* l, std::uint64_t id) {
  const std::uint64_t a = id * 0x9e3779b97f4a7c15ULL;
  const std::uint64_t b = ~id;
  const std::uint64_t c = id ^ 0x5555555555555555ULL;
  const std::uint64_t d = id + 7;
  const std::uint64_t e = a ^ b;
  const std::uint64_t f = id * 3;
  return inline_task::make([l, id, a, b, c, d, e, f] {
    const bool whole = a == id * 0x9e3779b97f4a7c15ULL && b == ~id &&
                       c == (id ^ 0x5555555555555555ULL) && d == id + 7 && e == (a ^ b) &&
                       f == id * 3;
    if (!whole || id >= l->runs.size()) {
      l->torn.fetch_add(1);
      return;
    }
    l->runs[id].fetch_add(1);
    l->last.store(id);
  });
}

/// Runs t (one of l's tasks) and returns the id it was made with.
std::uint64_t run_for_id(inline_task t, ledger& l) {
  t();
  return l.last.load();
}

TEST(chase_lev_deque, EmptyDequeGivesNothingToOwnerOrThief) {
  chase_lev_deque d(8);
  inline_task t;
  EXPECT_FALSE(d.pop(t));
  EXPECT_FALSE(d.steal(t));
  EXPECT_EQ(d.size(), 0);
  // Emptied after use: pop on an empty deque must leave it consistent.
  ledger l(1);
  ASSERT_TRUE(d.push(make_task(&l, 0)));
  ASSERT_TRUE(d.pop(t));
  EXPECT_FALSE(d.pop(t));
  EXPECT_FALSE(d.steal(t));
  EXPECT_EQ(d.size(), 0);
  ASSERT_TRUE(d.push(make_task(&l, 0)));
  EXPECT_EQ(d.size(), 1);
}

TEST(chase_lev_deque, OwnerPopsNewestFirstThiefStealsOldestFirst) {
  constexpr std::size_t n = 6;
  chase_lev_deque d(8);
  ledger l(n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_TRUE(d.push(make_task(&l, i)));
  inline_task t;
  ASSERT_TRUE(d.steal(t));
  EXPECT_EQ(run_for_id(t, l), 0u);
  ASSERT_TRUE(d.pop(t));
  EXPECT_EQ(run_for_id(t, l), 5u);
  ASSERT_TRUE(d.steal(t));
  EXPECT_EQ(run_for_id(t, l), 1u);
  ASSERT_TRUE(d.pop(t));
  EXPECT_EQ(run_for_id(t, l), 4u);
  EXPECT_EQ(d.size(), 2);
}

TEST(chase_lev_deque, PushFailsWhenFullAndSucceedsOnceASlotIsFree) {
  constexpr std::size_t capacity = 16;
  chase_lev_deque d(capacity);
  ledger l(capacity + 2);
  for (std::uint64_t i = 0; i < capacity; ++i) ASSERT_TRUE(d.push(make_task(&l, i))) << i;
  EXPECT_FALSE(d.push(make_task(&l, capacity)));
  EXPECT_EQ(d.size(), static_cast<std::int64_t>(capacity));
  inline_task t;
  ASSERT_TRUE(d.steal(t));  // frees the top slot: the bottom wraps onto it
  EXPECT_TRUE(d.push(make_task(&l, capacity)));
  EXPECT_FALSE(d.push(make_task(&l, capacity + 1)));
  ASSERT_TRUE(d.pop(t));
  EXPECT_EQ(run_for_id(t, l), capacity);
}

// Top and bottom run many laps past the capacity; the slot index wraps.
TEST(chase_lev_deque, IndicesWrapAroundManyLapsInOrder) {
  constexpr std::size_t capacity = 4;
  constexpr std::uint64_t n = 10'000;
  chase_lev_deque d(capacity);
  ledger l(n);
  std::uint64_t next_push = 0;
  std::uint64_t next_steal = 0;
  inline_task t;
  while (next_steal < n) {
    while (next_push < n && d.push(make_task(&l, next_push))) ++next_push;
    ASSERT_TRUE(d.steal(t));
    ASSERT_EQ(run_for_id(t, l), next_steal);
    ++next_steal;
  }
  EXPECT_FALSE(d.steal(t));
  EXPECT_EQ(l.ids_not_run_once(), 0u);
  EXPECT_EQ(l.torn.load(), 0u);
}

/// Runs `thieves` threads stealing from `d` (and running what they get) until
/// `stop` is set and the deque is empty; returns how many each stole.
class thief_pool {
 public:
  /// Returns once every thief is running.
  thief_pool(chase_lev_deque& d, int thieves) {
    for (int i = 0; i < thieves; ++i) threads_.emplace_back([this, &d] { steal_loop(d); });
    while (running_.load() < thieves) std::this_thread::yield();
  }
  std::uint64_t join() {
    stop_.store(true);
    for (auto& th : threads_) th.join();
    return stolen_.load();
  }

 private:
  void steal_loop(chase_lev_deque& d) {
    inline_task t;
    std::uint64_t mine = 0;
    running_.fetch_add(1);
    while (!stop_.load() || d.size() > 0) {
      if (d.steal(t)) {
        t();
        ++mine;
      }
    }
    stolen_.fetch_add(mine);
  }

  std::atomic<int> running_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> stolen_{0};
  std::vector<std::thread> threads_;
};

// The owner pushes a stream of tasks into a small deque (so it fills and
// wraps) and pops some back, while three thieves steal: each task runs once.
TEST(chase_lev_deque, OwnerAndThievesTakeEveryTaskExactlyOnce) {
  constexpr std::uint64_t n = 300'000;
  shoal_test::watchdog dog(std::chrono::seconds(60));
  chase_lev_deque d(64);
  ledger l(n);
  thief_pool thieves(d, 3);
  std::uint64_t popped = 0;
  inline_task t;
  for (std::uint64_t i = 0; i < n; ++i) {
    while (!d.push(make_task(&l, i))) {
      if (d.pop(t)) {  // full: the owner works off its own newest task
        t();
        ++popped;
      }
    }
    if (i % 3 == 0 && d.pop(t)) {
      t();
      ++popped;
    }
  }
  while (d.pop(t)) {
    t();
    ++popped;
  }
  const std::uint64_t stolen = thieves.join();
  EXPECT_EQ(l.torn.load(), 0u);
  EXPECT_EQ(l.ids_not_run_once(), 0u);
  EXPECT_EQ(l.total_runs(), n);
  EXPECT_EQ(popped + stolen, n);
  EXPECT_EQ(d.size(), 0);
}

// The hardest case of the protocol: the owner pushes one task and pops it
// after a short, varying delay, racing the thieves for the last element.
TEST(chase_lev_deque, LastElementRaceHasExactlyOneWinner) {
  constexpr std::uint64_t n = 200'000;
  shoal_test::watchdog dog(std::chrono::seconds(60));
  chase_lev_deque d(8);
  ledger l(n);
  thief_pool thieves(d, 3);
  std::uint64_t popped = 0;
  inline_task t;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!d.push(make_task(&l, i))) {
      ADD_FAILURE() << "push " << i << " into a deque of at most one task failed";
      break;
    }
    shoal_test::spin_for_ns(static_cast<std::int64_t>(i % 16) * 50);
    if (d.pop(t)) {
      t();
      ++popped;
    }
  }
  const std::uint64_t stolen = thieves.join();
  EXPECT_EQ(l.torn.load(), 0u);
  EXPECT_EQ(l.ids_not_run_once(), 0u);
  EXPECT_EQ(popped + stolen, n);
  EXPECT_EQ(d.size(), 0);
}

}  // namespace
