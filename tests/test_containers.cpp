// Distributed containers on one process: misuse that must end the job with
// a message naming the container, and the busy-part rule (operations that
// arrive while a for_all runs wait for it). The full behaviour at 1 x 2,
// 2 x 2 and 3 x 2 is tests/mpi/dist_containers.cpp.
#include "shoal/containers/array.hpp"
#include "shoal/containers/counting_set.hpp"
#include "shoal/containers/detail/flat_table.hpp"
#include "shoal/containers/detail/short_bytes.hpp"
#include "shoal/containers/detail/string_hash.hpp"
#include "shoal/containers/detail/string_table.hpp"
#include "shoal/containers/map.hpp"
#include "shoal/containers/set.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal_test::make_config;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

class containersDeathTest : public ::testing::Test {
 protected:
  void SetUp() override {  // NOLINT(readability-identifier-naming): gtest
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(containersDeathTest, UseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto m = shoal::map<int, int>::create();
                             const auto copy = m;
                             m.destroy();
                             copy.async_insert(1, 2);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::map #[0-9a-f]+: used after destroy\\(\\)");
}

TEST_F(containersDeathTest, CountingSetUseAfterDestroyIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto c = shoal::counting_set<std::uint64_t>::create();
                             const auto copy = c;
                             c.destroy();
                             copy.async_insert(7);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::counting_set #[0-9a-f]+: used after destroy\\(\\)");
}

TEST_F(containersDeathTest, DefaultHandleIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(1),
                           [] {
                             shoal::set<std::string> s;
                             s.async_insert("x");
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::set #0: used through a default-constructed handle");
}

TEST_F(containersDeathTest, GatherToACoreOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto m = shoal::map<int, int>::create();
                             shoal::on_all_cores([m] { (void)m.gather(5); });
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::map #[0-9a-f]+: gather: core 5 is not a core of the job \\(0 .. 1\\)");
}

TEST_F(containersDeathTest, ArrayIndexOutsideIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto a = shoal::array<int>::create(10);
                             a.async_put(10, 1);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::array #[0-9a-f]+: shoal::array::async_put: index 10 is outside the "
              "array's 10 elements");
}

namespace {
/// A user distribution that sends the last target to core 5, outside a
/// job of 2 cores.
struct off_the_end {
  std::uint64_t n = 0;
  shoal::target_location locate(std::uint64_t t) const noexcept {
    return {t + 1 == n ? 5 : static_cast<int>(t % 2), t / 2};
  }
};
}  // namespace

TEST_F(containersDeathTest, ArrayDistributionOutsideTheJobIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto a = shoal::array<int, off_the_end>::create(9, off_the_end{9});
                             a.async_put(0, 1);
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::array::create: target 8 of a user-defined distribution maps to core 5, "
              "outside the job's 2 cores");
}

TEST_F(containersDeathTest, ArrayDistributionRangeShorterThanTheArrayIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             (void)shoal::array<int>::create(
                                 12, shoal::block_distribution(10, shoal::cores()));
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::array::create: target 11 of block_distribution\\(10 targets, 2 cores\\) "
              "is out of range \\[0, 10\\)");
}

TEST_F(containersDeathTest, ArrayRangeOutsideIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto a = shoal::array<int>::create(10);
                             std::vector<int> out(4);
                             a.get_range(8, std::span<int>(out));
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::array #[0-9a-f]+: get_range: range \\[8, 12\\) is outside the array's "
              "10 elements");
}

/// A value whose construction fails as if the heap were exhausted.
struct no_memory {
  no_memory() { throw std::bad_alloc(); }
};

}  // namespace

template <>
struct shoal::serializer<no_memory> {
  static std::size_t size(const no_memory&) { return 0; }
  static void write(byte_writer&, const no_memory&) {}
  static no_memory read(byte_reader&) { return no_memory{}; }
};

namespace {

TEST_F(containersDeathTest, ExhaustedHeapWhileApplyingIsNamed) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto m = shoal::map<int, no_memory>::create();
                             // Visiting a missing key default-constructs its value.
                             for (int k = 0; k < 4; ++k)
                               m.async_visit(k, [](const int&, no_memory&) {});
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::map #[0-9a-f]+: out of memory on core [01] while applying an operation "
              "to its [0-9]+ local elements");
}

TEST_F(containersDeathTest, OversizedKeyIsRefusedNamingTheContainer) {
  EXPECT_EXIT(run_to_death(make_config(2),
                           [] {
                             auto s = shoal::set<std::string>::create();
                             for (int i = 0; i < 8; ++i)
                               s.async_insert(std::string(20000 + i, 'k'));
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::set::async_insert \\(channel [0-9]+\\): a record of [0-9]+ bytes");
}

// Operations that arrive while this core iterates its part (the for_all
// body suspends) are applied after the iteration, not during it.
// Containers hold channels until destroy(): leaking them runs out of channel
// ids, named with the way out, not a crash.
TEST_F(containersDeathTest, TooManyLiveContainersAreNamed) {
  EXPECT_EXIT(run_to_death(make_config(1),
                           [] {
                             for (int i = 0; i < 300; ++i) (void)shoal::map<int, int>::create();
                           }),
              ExitedWithCode(shoal::exit_status::fatal),
              "too many typed channels open at once \\(at most 254\\).*each distributed "
              "container holds one or two until its destroy\\(\\)");
}

TEST(containers, OperationsArrivingDuringForAllWaitForIt) {
  static std::int64_t seen_during = -1;  // iterations that saw the part change
  static std::size_t size_after = 0;
  shoal_test::run_checked(make_config(2), [] {
    auto m = shoal::map<int, int>::create();
    shoal::on_all_cores([m] {
      const int me = shoal::mycore();
      for (int k = 0; k < 64; ++k)
        if (m.owner(k) == me) m.async_insert(k, 0);
      shoal::barrier();
      if (me == 0) {
        const std::size_t before = m.local_size();
        std::int64_t changed = 0;
        m.for_all([&](const int&, int&) {
          changed += m.local_size() != before ? 1 : 0;
          // Core 1's inserts arrive while this body yields, and must wait.
          const auto t0 = std::chrono::steady_clock::now();
          while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(20))
            shoal::yield();
          changed += m.local_size() != before ? 1 : 0;
        });
        seen_during = changed;
      } else {
        for (int k = 1000; k < 1400; ++k) m.async_insert(k, 1);
        shoal::flush();
      }
      shoal::barrier();
      const std::size_t total = m.size();
      if (me == 0) size_after = total;
    });
    m.destroy();
  });
  EXPECT_EQ(seen_during, 0);  // the part did not change under the iteration
  EXPECT_EQ(size_after, 64U + 400U);
}

// A part past 2^15 elements: the core's own operations go through its own
// buffer, and runs of reduce records arrive while its for_all holds the
// part (its own, made from the body, and core 1's): all are queued, none
// changes a value under the iteration, and each is applied once after it.
TEST(containers, LargePartQueuesOwnAndRemoteRunsDuringForAll) {
  struct plus {
    std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
  };
  static std::atomic<int> stage{0};  // 1: core 0 is inside; 2: core 1 has sent
  static std::int64_t changed = -1;
  static std::uint64_t deferred = 0;
  static std::int64_t wrong_after = -1;
  static std::size_t local = 0;
  stage = 0;
  shoal_test::run_checked(make_config(2), [] {
    using map_t = shoal::map<std::uint64_t, std::int64_t>;
    auto m = map_t::create();
    shoal::on_all_cores([m] {
      const int me = shoal::mycore();
      constexpr std::uint64_t n = 80000;
      if (me == 0)
        for (std::uint64_t k = 0; k < n; ++k)
          if (m.owner(k) == 0) m.async_insert(k, 0);
      shoal::barrier();
      if (me == 0) {
        std::int64_t seen = 0;
        bool first = true;
        m.for_all([&](const std::uint64_t&, std::int64_t& v) {
          seen += v != 0 ? 1 : 0;
          if (!first) return;
          first = false;
          stage = 1;
          for (std::uint64_t k = 0; k < n; ++k)
            if (m.owner(k) == 0) m.async_reduce(k, 1, plus{});
          shoal::flush();
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
          while (stage != 2 && std::chrono::steady_clock::now() < deadline) shoal::yield();
          for (int i = 0; i < 100; ++i) shoal::yield();  // core 1's last batches arrive
        });
        changed = seen;
        deferred = m.my_part().deferred_records;
        local = m.local_size();
      } else {
        while (stage != 1) shoal::yield();
        for (std::uint64_t k = 0; k < n; ++k)
          if (m.owner(k) == 0) m.async_reduce(k, 1, plus{});
        shoal::flush();
        stage = 2;
      }
      shoal::barrier();
      if (me == 0) {
        std::int64_t wrong = 0;
        m.for_all([&](const std::uint64_t&, std::int64_t& v) { wrong += v != 2 ? 1 : 0; });
        wrong_after = wrong;
      }
      shoal::barrier();
    });
    m.destroy();
  });
  EXPECT_GT(local, std::size_t{1} << 15);  // large: own operations were batched
  EXPECT_EQ(changed, 0);                   // nothing changed under the iteration
  EXPECT_GT(deferred, 0U);                 // they took the deferral path
  EXPECT_EQ(wrong_after, 0);               // each applied once, afterwards
}

// The array's batch loop applies runs of same-kind records in one call;
// batches that arrive while a for_all holds the part are queued record by
// record and applied, in order, when it ends. Core 1 sends only once core
// 0 is inside its for_all (a put to core 1's element 32 says so); core 0's
// body waits (yielding, at most 2 s) until all 144 records were deferred:
// deferred_records() proves they took the deferral path, not the fast one.
TEST(containers, ArrayRunsArrivingDuringForAllWaitForIt) {
  static std::int64_t changed = -1;
  static std::uint64_t deferred_before = 1;
  static std::uint64_t deferred = 0;
  static std::vector<std::int64_t> after;
  constexpr std::uint64_t records = 32 + 3 * 32 + 16;  // puts, visits, reduces
  shoal_test::run_checked(make_config(2), [] {
    auto a = shoal::array<std::int64_t>::create(64);  // core 0 holds [0, 32)
    shoal::on_all_cores([a] {
      const int me = shoal::mycore();
      shoal::barrier();
      if (me == 0) {
        deferred_before = a.deferred_records();
        std::int64_t seen = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        a.for_all([&](std::uint64_t i, std::int64_t& v) {
          const std::int64_t before = v;
          if (i == 0) {
            a.async_put(32, 1);  // core 1's: go
            shoal::flush();
          }
          shoal::yield();
          while (a.deferred_records() - deferred_before < records &&
                 std::chrono::steady_clock::now() < deadline)
            shoal::yield();
          seen += v != before ? 1 : 0;
        });
        changed = seen;
        deferred = a.deferred_records() - deferred_before;
      } else {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        std::int64_t told = 0;
        while (told == 0 && std::chrono::steady_clock::now() < deadline) {
          shoal::yield();
          a.for_all([&](std::uint64_t j, std::int64_t& v) { told += j == 32 ? v : 0; });
        }
        // Per element of core 0: a put, then 3 visits adding the index,
        // then a reduce by max with 1000: runs of each kind, in order.
        for (std::uint64_t i = 0; i < 32; ++i) a.async_put(i, 7);
        for (int r = 0; r < 3; ++r)
          for (std::uint64_t i = 0; i < 32; ++i)
            a.async_visit(
                i,
                [](std::uint64_t j, std::int64_t& v, std::int64_t k) {
                  v += k * static_cast<std::int64_t>(j);
                },
                std::int64_t{1});
        for (std::uint64_t i = 0; i < 32; i += 2)
          a.async_reduce(i, 1000, [](std::int64_t x, std::int64_t y) { return std::max(x, y); });
        shoal::flush();
      }
      const auto all = a.gather_all();
      if (me == 0) after = all;
    });
    a.destroy();
  });
  EXPECT_EQ(deferred_before, 0U);  // a new array's part has deferred nothing
  EXPECT_GT(deferred, 0U);         // the records took the deferral path ...
  EXPECT_EQ(deferred, records);    // ... every one of them (core 0 waited for them)
  EXPECT_EQ(changed, 0);           // nothing changed under the iteration
  ASSERT_EQ(after.size(), 64U);
  for (std::uint64_t i = 0; i < 32; ++i)
    EXPECT_EQ(after[i], i % 2 == 0 ? 1000 : 7 + 3 * static_cast<std::int64_t>(i)) << i;
  for (std::uint64_t i = 32; i < 64; ++i) EXPECT_EQ(after[i], i == 32 ? 1 : 0) << i;
}

}  // namespace

namespace {

// Containers made in successive runs of one job get distinct ids (the ids
// once restarted with each run's core threads, and a map made in the
// second run was taken for the first run's destroyed one).
TEST(containers, ContainersOfSuccessiveRunsOfOneJobAreDistinct) {
  static std::size_t sizes[3] = {};
  shoal::init(make_config(2));
  for (int run = 0; run < 3; ++run) {
    shoal::run([run] {
      auto m = shoal::map<int, int>::create();
      shoal::on_all_cores([m, run] {
        m.async_insert(shoal::mycore() + 10 * run, run);
        const std::size_t n = m.size();
        if (shoal::mycore() == 0) sizes[run] = n;
      });
      m.destroy();
    });
  }
  shoal::finalize();
  for (const std::size_t n : sizes) EXPECT_EQ(n, 2U);
}

}  // namespace

namespace {

// The open-addressing table against std::unordered_map: random inserts,
// assignments, erases (backward shifts across wrapped probe runs) and
// lookups over a small key space, then iteration.
TEST(containers, FlatTableAgreesWithUnorderedMap) {
  shoal::containers_detail::flat_table<std::uint64_t, std::int64_t, std::hash<std::uint64_t>,
                                       std::equal_to<std::uint64_t>>
      flat;
  std::unordered_map<std::uint64_t, std::int64_t> ref;
  std::uint64_t x = 12345;
  for (int step = 0; step < 200000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint64_t k = (x >> 33) % 3000;
    switch ((x >> 20) % 4) {
      case 0:
        flat.insert_or_assign(k, step);
        ref.insert_or_assign(k, step);
        break;
      case 1:
        ASSERT_EQ(flat.erase(k), ref.erase(k)) << "step " << step;
        break;
      case 2:
        ++flat[k];
        ++ref[k];
        break;
      default: {
        const auto it = flat.find(k);
        const auto rt = ref.find(k);
        ASSERT_EQ(it == flat.end(), rt == ref.end()) << "step " << step;
        if (rt != ref.end()) {
          ASSERT_EQ(it->second, rt->second) << "step " << step;
        }
      }
    }
    ASSERT_EQ(flat.size(), ref.size()) << "step " << step;
  }
  std::size_t seen = 0;
  for (const auto& [k, v] : flat) {
    ++seen;
    ASSERT_EQ(ref.at(k), v);
  }
  EXPECT_EQ(seen, ref.size());
}

// flat_table's batch loop (update_each: counting_set's bare keys) against
// std::unordered_map: batches of 0 to 3000 keys (duplicates inside a
// batch, batches that cross a growth from the empty table up to 2^16
// slots), erases between batches (backward shifts the batch's probes then
// walk), and the keys' values seen in order by f.
TEST(containers, FlatTableBatchUpdatesAgreeWithUnorderedMap) {
  shoal::containers_detail::flat_table<std::uint64_t, std::uint64_t, std::hash<std::uint64_t>,
                                       std::equal_to<std::uint64_t>>
      flat;
  std::unordered_map<std::uint64_t, std::uint64_t> ref;
  std::uint64_t x = 777;
  std::vector<std::uint64_t> batch;
  for (int round = 0; round < 60; ++round) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    batch.resize(round == 0 ? 0 : (x >> 40) % 3001);
    for (std::uint64_t& k : batch) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      k = (x >> 33) % 40000;
    }
    std::vector<std::uint64_t> seen;
    flat.update_each([&](std::uint32_t i) { return batch[i]; },
                     static_cast<std::uint32_t>(batch.size()),
                     [&](std::uint64_t& c) {
                       ++c;
                       seen.push_back(c);
                     });
    std::vector<std::uint64_t> expected;
    for (const std::uint64_t k : batch) expected.push_back(++ref[k]);
    ASSERT_EQ(seen, expected) << "round " << round;
    ASSERT_EQ(flat.size(), ref.size()) << "round " << round;
    for (int e = 0; e < 200; ++e) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::uint64_t k = (x >> 33) % 40000;
      ASSERT_EQ(flat.erase(k), ref.erase(k)) << "round " << round;
    }
  }
  std::size_t n = 0;
  for (const auto& [k, v] : flat) {
    ++n;
    ASSERT_EQ(ref.at(k), v);
  }
  EXPECT_EQ(n, ref.size());
}

// flat_table past 2 MiB of slots (2^17 and more: its arrays then come
// 2 MiB-aligned, with huge pages asked for): 150000 distinct keys through
// the batch loop and growths from 16 slots to 2^18, counts twice, erases a
// third, and every key found, counted and iterated as expected.
TEST(containers, FlatTableKeepsEveryElementPastTwoMebibytes) {
  shoal::containers_detail::flat_table<std::uint64_t, std::uint64_t, std::hash<std::uint64_t>,
                                       std::equal_to<std::uint64_t>>
      flat;
  constexpr std::uint64_t n = 150000;
  auto key = [](std::uint64_t i) { return i * 0x9e3779b97f4a7c15ULL; };
  std::vector<std::uint64_t> batch;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint64_t i = 0; i < n;) {
      batch.clear();
      for (; i < n && batch.size() < 1300; ++i) batch.push_back(key(i));
      flat.update_each([&](std::uint32_t j) { return batch[j]; },
                       static_cast<std::uint32_t>(batch.size()), [](std::uint64_t& c) { ++c; });
    }
  }
  ASSERT_EQ(flat.size(), n);
  for (std::uint64_t i = 0; i < n; i += 3) ASSERT_EQ(flat.erase(key(i)), 1U) << i;
  std::uint64_t left = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto it = flat.find(key(i));
    if (i % 3 == 0) {
      ASSERT_TRUE(it == flat.end()) << i;
    } else {
      ASSERT_TRUE(it != flat.end()) << i;
      ASSERT_EQ(it->second, 2U) << i;
      ++left;
    }
  }
  std::uint64_t seen = 0;
  for (const auto& [k, c] : flat) {
    ++seen;
    ASSERT_EQ(c, 2U);
  }
  EXPECT_EQ(seen, left);
  EXPECT_EQ(flat.size(), left);
}

// The string table against std::unordered_map<std::string, V>: keys of
// every length class (empty, under 8, 8-16 and 17-24 bytes compared by
// words, inline up to 20 bytes, on the heap past that), random inserts,
// assignments, erases (backward shifts) and lookups, iteration, and a
// move-assignment that frees the old keys. V = std::string takes the
// table's constructed-slot path (calloc'd slots for trivial V).
template <class V>
void string_table_agrees(V (*value_of)(int)) {
  using table = shoal::containers_detail::string_table<V>;
  using shoal::containers_detail::hashed_key;
  using shoal::containers_detail::string_hash;
  table t;
  std::unordered_map<std::string, V> ref;
  std::uint64_t x = 987654321;
  auto key_for = [](std::uint64_t r) {
    static constexpr int lengths[] = {0, 1, 3, 7, 8, 12, 16, 17, 20, 21, 24, 25, 40};
    const int len = lengths[r % std::size(lengths)];
    std::string k(static_cast<std::size_t>(len), 'a');
    // Keys that differ only in the last, the first or a middle byte.
    if (len != 0) k[static_cast<std::size_t>((r >> 8) % static_cast<std::uint64_t>(len))] =
        static_cast<char>('a' + (r >> 4) % 7);
    return k;
  };
  for (int step = 0; step < 100000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::string k = key_for(x >> 33);
    const hashed_key hk{string_hash(k), k};
    switch ((x >> 20) % 4) {
      case 0:
        t.insert_or_assign(hk, value_of(step));
        ref.insert_or_assign(k, value_of(step));
        break;
      case 1:
        ASSERT_EQ(t.erase(hk), ref.erase(k)) << "step " << step << " key " << k;
        break;
      case 2: {
        const auto [s, fresh] = t.try_emplace(hk, value_of(-step));
        const auto [rt, rfresh] = ref.try_emplace(k, value_of(-step));
        ASSERT_EQ(fresh, rfresh) << "step " << step;
        ASSERT_EQ(s->second, rt->second) << "step " << step;
        ASSERT_EQ(s->key(), k) << "step " << step;
        break;
      }
      default: {
        const auto* s = t.find(hk);
        const auto rt = ref.find(k);
        ASSERT_EQ(s == nullptr, rt == ref.end()) << "step " << step << " key " << k;
        if (s != nullptr) {
          ASSERT_EQ(s->second, rt->second) << "step " << step;
        }
      }
    }
    ASSERT_EQ(t.size(), ref.size()) << "step " << step;
  }
  std::size_t seen = 0;
  t.for_each([&](std::string_view k, V& v) {
    ++seen;
    ASSERT_EQ(ref.at(std::string(k)), v) << k;
  });
  EXPECT_EQ(seen, ref.size());
  EXPECT_GT(seen, 50U);  // the key space is a few hundred strings
  table other;
  other.insert_or_assign(hashed_key{string_hash("a key longer than twenty bytes"),
                                    "a key longer than twenty bytes"},
                         value_of(1));
  t = std::move(other);  // frees t's keys (ASan: no leak), takes other's
  EXPECT_EQ(t.size(), 1U);
  EXPECT_EQ(other.size(), 0U);  // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST(containers, StringTableAgreesWithUnorderedMap) {
  string_table_agrees<std::int64_t>([](int i) { return std::int64_t{i}; });
  string_table_agrees<std::string>([](int i) { return std::to_string(i) + "-a-value-past-sso"; });
}

// The string hash: equal characters hash equal wherever they lie, and the
// keys of the map benchmark's shape (16 bytes), every length up to 64 and
// single-byte changes all differ; the short-key copy and compare agree
// with memcpy and memcmp at every length.
TEST(containers, StringHashAndShortBytes) {
  using shoal::containers_detail::string_hash;
  std::set<std::uint64_t> hashes;
  std::string base(64, 'x');
  for (std::size_t n = 0; n <= 64; ++n) {
    const std::string k = base.substr(0, n);
    const std::string copy(k.data(), k.size());
    EXPECT_EQ(string_hash(k), string_hash(copy)) << n;
    hashes.insert(string_hash(k));
    for (std::size_t i = 0; i < n; ++i) {
      std::string d = k;
      d[i] = 'y';
      hashes.insert(string_hash(d));
    }
  }
  EXPECT_EQ(hashes.size(), 65U + 64U * 65U / 2U);
  for (std::uint64_t v = 0; v < 4096; ++v) hashes.insert(string_hash(fmt::format("{:016x}", v)));
  EXPECT_EQ(hashes.size(), 65U + 64U * 65U / 2U + 4096U);
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string from(n, 'q');
    for (std::size_t i = 0; i < n; ++i) from[i] = static_cast<char>('a' + i % 26);
    std::string to(n + 2, '#');
    shoal::containers_detail::copy_bytes(to.data() + 1, from.data(), n);
    EXPECT_EQ(to, "#" + from + "#") << n;
    EXPECT_TRUE(shoal::containers_detail::same_bytes(to.data() + 1, from.data(), n)) << n;
    for (std::size_t i = 0; i < n; ++i) {
      std::string other = from;
      other[i] = '!';
      EXPECT_FALSE(shoal::containers_detail::same_bytes(other.data(), from.data(), n)) << n << i;
    }
  }
}

}  // namespace
