// per_core<T>: one slot per core, reached by name from tasks and handlers.
#include <cstdint>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal_test::cores_test;

struct tally {
  std::int64_t tasks = 0;
  std::int64_t handled = 0;
  std::vector<int> seen_on;  // cores whose code touched this slot
};

shoal::per_core<tally> tallies;

class per_core_slots : public cores_test {};

// Slots are read back by the root task, after the work on them has been
// waited for (the runtime's globals are gone once run_checked finalizes).
TEST_P(per_core_slots, EachCoreReachesItsOwnSlotFromTasksAndHandlers) {
  constexpr int per_core = 1000;
  std::vector<tally> seen;
  int slots = 0;
  run([&] {
    shoal::on_all_cores([] {
      for (int i = 0; i < per_core; ++i) ++tallies.local().tasks;
      tallies.local().seen_on.push_back(shoal::mycore());
      for (int c = 0; c < shoal::cores(); ++c)
        shoal::delegate::post(
            c, [] { ++tallies.local().handled; }, shoal::default_gce());
    });
    shoal::default_gce().wait();  // every message has run
    slots = tallies.size();
    for (int i = 0; i < slots; ++i) seen.push_back(tallies[i]);
    tallies.reset();
  });
  ASSERT_EQ(slots, GetParam());
  for (int i = 0; i < slots; ++i) {
    EXPECT_EQ(seen[i].tasks, per_core) << "core " << i;
    EXPECT_EQ(seen[i].handled, GetParam()) << "core " << i;
    EXPECT_EQ(seen[i].seen_on, std::vector<int>{i}) << "core " << i;
  }
}

TEST_P(per_core_slots, SlotsSitOnSeparateCacheLines) {
  std::vector<std::uintptr_t> at;
  run([&] {
    for (int i = 0; i < tallies.size(); ++i)
      at.push_back(reinterpret_cast<std::uintptr_t>(&tallies[i]));
    tallies.reset();
  });
  for (std::size_t i = 0; i < at.size(); ++i) {
    EXPECT_EQ(at[i] % 64, 0u);
    if (i > 0) {
      EXPECT_GE(at[i] - at[i - 1], 64u);
    }
  }
}

TEST_P(per_core_slots, ResetGivesFreshSlots) {
  std::int64_t before = -1;
  std::int64_t after = -1;
  run([&] {
    shoal::on_all_cores([] { tallies.local().tasks = 7; });
    before = tallies[0].tasks;
    tallies.reset();
    after = tallies[0].tasks;
    tallies.reset();
  });
  EXPECT_EQ(before, 7);
  EXPECT_EQ(after, 0);
}

SHOAL_TEST_CORES(per_core_slots);

// A job after finalize() may have more cores than the one before: each init()
// gives fresh slots for its own core count (without reset()).
TEST(per_core_jobs, EachInitGetsSlotsForItsOwnCoreCount) {
  shoal::per_core<std::int64_t> counter;
  std::vector<std::int64_t> first, second;
  for (const int cores : {1, 4}) {
    std::vector<std::int64_t>& seen = cores == 1 ? first : second;
    shoal_test::run_checked(shoal_test::make_config(cores), [&] {
      shoal::on_all_cores([&counter] { counter.local() += 10 + shoal::mycore(); });
      for (int i = 0; i < counter.size(); ++i) seen.push_back(counter[i]);
    });
  }
  EXPECT_EQ(first, (std::vector<std::int64_t>{10}));
  EXPECT_EQ(second, (std::vector<std::int64_t>{10, 11, 12, 13}));  // not 20 on core 0
}

}  // namespace
