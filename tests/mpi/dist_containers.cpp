// Distributed containers (include/shoal/containers/) at 1 x 2, 2 x 2 and
// 3 x 2 processes x cores: every operation, the collectives, and cascades
// (a visitor that sends further operations). Each check runs on the core
// that can make it; a failed check prints what it saw and counts in
// g_failures, which every rank asserts to be 0 after the run.
#include "shoal/containers/array.hpp"
#include "shoal/containers/bag.hpp"
#include "shoal/containers/counting_set.hpp"
#include "shoal/containers/disjoint_set.hpp"
#include "shoal/containers/map.hpp"
#include "shoal/containers/set.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
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

std::string key_of(int core, int i) { return fmt::format("k{}-{}", core, i); }

using string_map = shoal::map<std::string, std::int64_t>;
using int_map = shoal::map<std::uint64_t, std::int64_t>;

constexpr int per_core = 300;

TEST(dist_containers, MapInsertEraseReduceVisitAndCollectives) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto m = string_map::create();
    auto echo = int_map::create();
    shoal::on_all_cores([m, echo] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      for (int i = 0; i < per_core; ++i) m.async_insert(key_of(me, i), i);
      for (int j = 0; j < 50; ++j)
        m.async_reduce(fmt::format("shared-{}", j), 1,
                       [](std::int64_t a, std::int64_t b) { return a + b; });
      check(m.size() == static_cast<std::size_t>(p * per_core + 50),
            fmt::format("size {} after inserts", m.size()));

      // Visit core 0's keys from every core, adding the visitor's core + 1;
      // each visit also records the key's value in `echo` (a cascade).
      for (int i = 0; i < per_core; ++i)
        m.async_visit(
            key_of(0, i),
            [](const std::string& k, std::int64_t& v, std::int64_t add, int_map out) {
              v += add;
              out.async_reduce(std::hash<std::string>{}(k) % 1000, 1,
                               [](std::int64_t a, std::int64_t b) { return a + b; });
            },
            std::int64_t{me + 1}, echo);
      // insert_if_missing leaves present keys alone.
      m.async_insert_if_missing(key_of(me, 0), -7);
      m.async_insert_if_missing(fmt::format("new-{}", me), 42);
      // Visiting a missing key with _if_exists does nothing.
      m.async_visit_if_exists("absent", [](const std::string&, std::int64_t& v) { v = 99; });
      shoal::barrier();  // every visit and its cascade applied

      const std::int64_t visits = std::int64_t{p} * (p + 1) / 2;
      std::int64_t echoed = 0;
      echo.for_all([&](const std::uint64_t&, std::int64_t& n) { echoed += n; });
      check(shoal::allreduce_sum(echoed) == std::int64_t{p} * per_core,
            "every visit's cascade arrived");
      std::int64_t local_sum = 0;
      std::int64_t local_count = 0;
      m.for_all([&](const std::string&, std::int64_t& v) {
        local_sum += v;
        ++local_count;
      });
      check(static_cast<std::size_t>(local_count) == m.local_size(), "for_all covers the part");
      const std::int64_t per_core_sum = std::int64_t{per_core} * (per_core - 1) / 2;
      const std::int64_t expected = per_core_sum * p + visits * per_core + 50 * p + 42 * p;
      const std::int64_t total = shoal::allreduce_sum(local_sum);
      check(total == expected, fmt::format("sum {} expected {}", total, expected));

      // Gather: sorted by key, the same on every core, and on the root.
      const auto all = m.gather_all();
      check(all.size() == static_cast<std::size_t>(p * per_core + 50 + p),
            fmt::format("gather_all has {}", all.size()));
      bool sorted = true;
      for (std::size_t i = 1; i < all.size(); ++i) sorted &= all[i - 1].first < all[i].first;
      check(sorted, "gather_all sorted by key");
      for (const auto& [k, v] : all) {
        if (k.starts_with("shared-")) check(v == p, fmt::format("{} = {}", k, v));
        if (k == "k0-5") check(v == 5 + visits, fmt::format("k0-5 = {}", v));
        if (k.starts_with("new-")) check(v == 42, fmt::format("{} = {}", k, v));
      }
      const auto at_root = m.gather(p - 1);
      check(me == p - 1 ? at_root == all : at_root.empty(), "gather(root) only on the root");

      // Erase the even keys of this core's own range.
      for (int i = 0; i < per_core; i += 2) m.async_erase(key_of(me, i));
      check(m.size() == static_cast<std::size_t>(p * per_core / 2 + 50 + p), "size after erase");

      // clear() empties every part and leaves the map usable.
      m.clear();
      check(m.size() == 0, "size after clear");
      m.async_insert(key_of(me, 1), 1);
      check(m.size() == static_cast<std::size_t>(p), "usable after clear");
    });
    m.destroy();
    echo.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// std::string keys of every length class the string table treats apart
// (empty, under 8, 8-16 and 17-24 bytes compared by words, inline up to 20
// bytes, on the heap past that), made by every core, so most travel: the
// hash sent with each record finds them on the owner; visitors, for_all,
// erase and gather see the characters unchanged.
std::string length_key(int n) {
  std::string k(static_cast<std::size_t>(n), '.');
  for (int i = 0; i < n; ++i)
    k[static_cast<std::size_t>(i)] = static_cast<char>('A' + (n + i) % 26);
  return k;
}

TEST(dist_containers, MapStringKeysOfEveryLength) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto m = string_map::create();
    shoal::on_all_cores([m] {
      const int p = shoal::cores();
      constexpr int longest = 48;
      for (int n = 0; n <= longest; ++n)
        m.async_reduce(length_key(n), n, [](std::int64_t a, std::int64_t b) { return a + b; });
      shoal::barrier();
      for (int n = 0; n <= longest; ++n)
        m.async_visit_if_exists(
            length_key(n),
            [](const std::string& k, std::int64_t& v, int len, int cores) {
              if (k != length_key(len) || v % 1000 != std::int64_t{len} * cores % 1000)
                std::abort();
              v += 1000;
            },
            n, p);
      std::int64_t local = 0;
      m.for_all([&](const std::string& k, std::int64_t&) {
        local += static_cast<std::int64_t>(k.size());
        check(k == length_key(static_cast<int>(k.size())), "for_all key " + k);
      });
      check(shoal::allreduce_sum(local) == std::int64_t{longest} * (longest + 1) / 2,
            "for_all covers each key once");
      const auto all = m.gather_all();
      check(all.size() == longest + 1, fmt::format("gather_all has {}", all.size()));
      for (const auto& [k, v] : all) {
        const auto n = static_cast<std::int64_t>(k.size());
        check(k == length_key(static_cast<int>(n)) && v == n * p + 1000 * p,
              fmt::format("key of {} bytes = {}", n, v));
      }
      for (int n = 1; n <= longest; n += 2) m.async_erase(length_key(n));
      check(m.size() == longest / 2 + 1, fmt::format("size after erase {}", m.size()));
      m.async_insert_if_missing(length_key(longest), -1);  // present: unchanged
      m.async_insert(length_key(longest - 1), -1);         // erased: back
      const auto after = m.gather_all();
      auto value = [&after](int n) {
        for (const auto& [k, v] : after)
          if (k == length_key(n)) return v;
        return std::int64_t{-2};
      };
      check(after.size() == longest / 2 + 2 && value(longest) == longest * p + 1000 * p &&
                value(longest - 1) == -1,
            "insert_if_missing and insert after erase");
    });
    m.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

TEST(dist_containers, SetAndCountingSetTopK) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto s = shoal::set<std::string>::create();
    auto counts = shoal::counting_set<std::uint64_t>::create();
    auto words = shoal::counting_set<std::string>::create();
    shoal::on_all_cores([s, counts, words] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      // Every core inserts the same 100 names and its own 10: duplicates collapse.
      for (int i = 0; i < 100; ++i) s.async_insert(fmt::format("name{}", i));
      for (int i = 0; i < 10; ++i) s.async_insert(key_of(me, i));
      s.async_erase("name0");
      check(s.size() == static_cast<std::size_t>(99 + 10 * p) ||
                s.size() == static_cast<std::size_t>(100 + 10 * p),
            "set size");
      shoal::barrier();
      s.async_erase("name0");  // after the barrier every insert of it has been applied
      check(s.size() == static_cast<std::size_t>(99 + 10 * p), "set size after erase");
      s.async_visit(
          "name5",
          [](const std::string& k, int tag) {
            if (k != "name5" || tag != 3) std::abort();
          },
          3);
      const auto members = s.gather_all();
      check(members.size() == static_cast<std::size_t>(99 + 10 * p) && members.front() == "k0-0",
            "set gather_all sorted");

      // Key v is counted v times by each core for v in 1..40; 1000 + me once.
      for (std::uint64_t v = 1; v <= 40; ++v)
        for (std::uint64_t n = 0; n < v; ++n) counts.async_insert(v);
      counts.async_insert(1000 + static_cast<std::uint64_t>(me));
      const auto top = counts.top_k(5);
      check(top.size() == 5, "top_k size");
      for (std::size_t i = 0; i < top.size(); ++i)
        check(top[i].first == 40 - i && top[i].second == (40 - i) * static_cast<std::uint64_t>(p),
              fmt::format("top {} = ({}, {})", i, top[i].first, top[i].second));
      check(counts.top_k(0).empty(), "top_k(0) is empty");
      check(counts.top_k(1u << 30).size() == static_cast<std::size_t>(40 + p),
            "huge k returns every key");
      check(counts.size() == static_cast<std::size_t>(40 + p), "distinct keys");
      counts.async_visit(
          7,
          [](const std::uint64_t& k, std::uint64_t c, std::uint64_t want) {
            if (k != 7 || c != want) std::abort();
          },
          7 * static_cast<std::uint64_t>(p));

      // Strings go through the record path: ties broken by key.
      for (const char* w : {"b", "a", "c", "a", "b", "a"}) words.async_insert(w);
      const auto wtop = words.top_k(3);
      check(wtop.size() == 3 && wtop[0].first == "a" && wtop[1].first == "b" &&
                wtop[2].first == "c" && wtop[0].second == 3U * p,
            "string top_k");
      shoal::barrier();
    });
    s.destroy();
    counts.destroy();
    words.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// A counting_set whose cores hold more than 2^15 keys each: inserts of a
// core's own keys then travel through its own aggregation buffer (the
// batch loop prefetches), and every count must still be exact.
TEST(dist_containers, LargeCountingSetCountsEveryInsert) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto counts = shoal::counting_set<std::uint64_t>::create();
    shoal::on_all_cores([counts] {
      const auto me = static_cast<std::uint64_t>(shoal::mycore());
      const auto p = static_cast<std::uint64_t>(shoal::cores());
      const std::uint64_t n = 60000 * p;  // about 60000 keys per core
      // Key k once by core k mod p; multiples of 7 once more by every core.
      for (std::uint64_t k = me; k < n; k += p) counts.async_insert(k);
      for (std::uint64_t k = 0; k < n; k += 7) counts.async_insert(k);
      check(counts.size() == n, "every key counted");
      std::uint64_t wrong = 0;
      std::uint64_t local = 0;
      counts.for_all([&](const std::uint64_t& k, std::uint64_t c) {
        ++local;
        wrong += c != 1 + (k % 7 == 0 ? p : 0) ? 1 : 0;
      });
      check(wrong == 0, fmt::format("{} of {} local counts differ", wrong, local));
      check(local > (std::uint64_t{1} << 15), "the cores' tables are large");
      const auto top = counts.top_k(1);
      check(top.size() == 1 && top[0].first == 0 && top[0].second == 1 + p, "top_k of a large set");
      shoal::barrier();
    });
    counts.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// A key of two 32-bit halves: trivially copyable but not arithmetic (the
// built-in serializer: its packed records are read as bytes, as
// std::uint64_t keys are).
struct pair_key {
  std::uint32_t hi;
  std::uint32_t lo;
  bool operator==(const pair_key&) const = default;
};
struct pair_key_hash {
  std::size_t operator()(const pair_key& k) const noexcept {
    return (std::uint64_t{k.hi} << 32 | k.lo) * 0x9e3779b97f4a7c15ULL;
  }
};
// A key whose serializer writes sizeof bytes that are not its own (masked):
// its operations still pack, and the owner reads each one through the
// serializer (keyed.hpp's apply_chunk), never as bytes.
struct masked_key {
  std::uint64_t v;
  bool operator==(const masked_key&) const = default;
};
struct masked_key_hash {
  std::size_t operator()(const masked_key& k) const noexcept { return k.v * 0x9e3779b97f4a7c15ULL; }
};
constexpr std::uint64_t key_mask = 0x5a5a5a5a5a5a5a5aULL;
}  // namespace

template <>
struct shoal::serializer<masked_key> {
  static constexpr std::size_t size(const masked_key&) noexcept { return 8; }
  static void write(byte_writer& w, const masked_key& k) noexcept { w.put(k.v ^ key_mask); }
  static masked_key read(byte_reader& r) {
    return {r.get<std::uint64_t>("a masked key") ^ key_mask};
  }
};

namespace {
struct add_values {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};
struct times_values {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a * b; }
};

// Parts larger than 2^15 elements (a core's own operations then go through
// its own buffer, and the owners apply runs of same-kind records in one
// pass): each core makes seven kinds of operation on keys of its own (no
// order between cores is promised), with no barrier between them; each
// key's final value shows they were applied in the order made.
template <class Map, class KeyOf>
void check_large_map_order(KeyOf key_of_index) {
  auto m = Map::create();
  shoal::on_all_cores([m, key_of_index] {  // (no pointer: the closure travels to every process)
    using key_type = typename Map::key_type;
    const char* name = std::is_same_v<key_type, pair_key>     ? "map<pair_key>"
                       : std::is_same_v<key_type, masked_key> ? "map<masked_key>"
                                                              : "map<uint64_t>";
    const auto me = static_cast<std::uint64_t>(shoal::mycore());
    const auto p = static_cast<std::uint64_t>(shoal::cores());
    constexpr std::uint64_t n = 36000;  // keys made by each core
    auto key = [&](std::uint64_t i) { return key_of_index(i * p + me); };
    for (std::uint64_t i = 0; i < n; ++i) m.async_insert(key(i), 1);
    for (std::uint64_t i = 0; i < n; ++i) m.async_reduce(key(i), 10, add_values{});
    for (std::uint64_t i = 0; i < n; i += 3) m.async_erase(key(i));
    for (std::uint64_t i = 0; i < n; ++i) m.async_insert_if_missing(key(i), 100);
    for (std::uint64_t i = 0; i < n; ++i) m.async_reduce(key(i), 2, times_values{});
    for (std::uint64_t i = 0; i < n; i += 5) m.async_insert(key(i), 7);
    for (std::uint64_t i = 0; i < n; i += 2)
      m.async_visit(
          key(i), [](const auto&, std::int64_t& v, std::int64_t add) { v += add; },
          std::int64_t{3});
    check(m.size() == n * p, fmt::format("{}: size {}", name, m.size()));
    std::uint64_t wrong = 0;
    std::uint64_t local = 0;
    m.for_all([&](const auto& k, std::int64_t& v) {
      ++local;
      std::uint64_t j = 0;  // the key's index over every core (i * p + core)
      if constexpr (std::is_same_v<std::decay_t<decltype(k)>, pair_key>) {
        j = std::uint64_t{k.hi} << 32 | k.lo;
      } else if constexpr (std::is_same_v<std::decay_t<decltype(k)>, masked_key>) {
        j = k.v;
      } else {
        j = k;
      }
      const std::uint64_t i = j / p;
      std::int64_t want = i % 3 == 0 ? 200 : 22;
      if (i % 5 == 0) want = 7;
      if (i % 2 == 0) want += 3;
      wrong += v != want ? 1 : 0;
    });
    check(wrong == 0, fmt::format("{}: {} of {} local values out of order", name, wrong, local));
    check(local > (std::uint64_t{1} << 15), fmt::format("{}: the cores' parts are large", name));
    m.clear();
    m.async_reduce(key(0), 5, add_values{});  // usable after clear()
    check(m.size() == p, fmt::format("{}: size after clear", name));
  });
  m.destroy();
}

TEST(dist_containers, LargeMapsApplyEachCoresOperationsInOrder) {
  g_failures = 0;
  shoal_dist::run_job([] {
    check_large_map_order<shoal::map<std::uint64_t, std::int64_t>>(
        [](std::uint64_t j) { return j; });
    check_large_map_order<shoal::map<pair_key, std::int64_t, pair_key_hash>>([](std::uint64_t j) {
      return pair_key{static_cast<std::uint32_t>(j >> 32), static_cast<std::uint32_t>(j)};
    });
    check_large_map_order<shoal::map<masked_key, std::int64_t, masked_key_hash>>(
        [](std::uint64_t j) { return masked_key{j}; });
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// Packed records (containers/detail/ops.hpp): runs of reduce and insert
// operations of one value and of changing values, broken by each other, by
// visits and erases (records of their own) and by flushes (the open
// record's batch leaves mid-run), over keys of every core: each key's
// final value is that of its operations applied in the order made. Small parts (operations on the
// core's own keys applied at once) and, with `own_batched`, parts past 2^15 elements (every
// operation through the aggregation buffers).
template <class Map, class KeyOf>
void check_packed_runs_in_order(KeyOf key_of_index, bool own_batched) {
  auto m = Map::create();
  shoal::on_all_cores([m, key_of_index, own_batched] {
    const auto me = static_cast<std::uint64_t>(shoal::mycore());
    const auto p = static_cast<std::uint64_t>(shoal::cores());
    constexpr std::uint64_t n = 3000;
    const std::uint64_t base = own_batched ? (std::uint64_t{1} << 16) * p : 0;
    auto key = [&](std::uint64_t i) { return key_of_index(base + i * p + me); };
    if (own_batched)  // filler keys, so that every part is past 2^15 elements
      for (std::uint64_t j = me; j < base; j += p) m.async_insert(key_of_index(j), 0);
    auto visit_double = [](const auto&, std::int64_t& v) { v *= 2; };
    // One long run: records of one value, growing, until the value changes
    // (then records of pairs); in the last round below, values alternate.
    auto first_value = [](std::uint64_t i) { return static_cast<std::int64_t>(i < n / 2 ? 1 : 2); };
    auto step = [](std::uint64_t i, std::uint64_t r) {
      return static_cast<std::int64_t>(r == 2 ? 1 + (i & 1) : 1);
    };
    for (std::uint64_t i = 0; i < n; ++i) m.async_reduce(key(i), first_value(i), add_values{});
    for (std::uint64_t r = 0; r < 3; ++r) {
      for (std::uint64_t i = 0; i < n; ++i) {
        m.async_reduce(key(i), step(i, r), add_values{});
        if (i % 5 == r) m.async_insert(key(i), static_cast<std::int64_t>(100 * (r + 1)));
        if (i % 7 == r) {  // the reduce after the visit must not join the record before it
          m.async_visit(key(i), visit_double);
          m.async_reduce(key(i), std::int64_t{1}, add_values{});
        }
        if (i % 3 == r) m.async_reduce(key(i), std::int64_t{3}, times_values{});
        if (i % 11 == r) {  // nor the reduce after the erase
          m.async_erase(key(i));
          m.async_reduce(key(i), std::int64_t{5}, add_values{});
        }
        if (i % 211 == r) shoal::flush();
      }
    }
    shoal::barrier();
    for (std::uint64_t i = 0; i < n; ++i) {
      std::int64_t want = first_value(i);
      for (std::uint64_t r = 0; r < 3; ++r) {
        want += step(i, r);
        if (i % 5 == r) want = static_cast<std::int64_t>(100 * (r + 1));
        if (i % 7 == r) want = want * 2 + 1;
        if (i % 3 == r) want *= 3;
        if (i % 11 == r) want = 5;
      }
      m.async_visit(
          key(i),
          [](const auto&, std::int64_t& v, std::int64_t expect) {
            check(v == expect, fmt::format("packed runs: a value {}, not {}", v, expect));
          },
          want);
    }
    shoal::barrier();
  });
  m.destroy();
}

TEST(dist_containers, PackedRunsKeepEachKeysOrder) {
  g_failures = 0;
  shoal_dist::run_job([] {
    for (const bool own_batched : {false, true}) {
      check_packed_runs_in_order<shoal::map<std::uint64_t, std::int64_t>>(
          [](std::uint64_t j) { return j; }, own_batched);
      check_packed_runs_in_order<shoal::map<masked_key, std::int64_t, masked_key_hash>>(
          [](std::uint64_t j) { return masked_key{j}; }, own_batched);
    }
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// async_contains answers present or absent on the owner, sends the answer
// on (a cascade), and inserts nothing: set and map.
TEST(dist_containers, ContainsAnswersWithoutInserting) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto s = shoal::set<std::uint64_t>::create();
    auto m = int_map::create();
    auto answers = int_map::create();
    shoal::on_all_cores([s, m, answers] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      for (std::uint64_t k = 0; k < 100; ++k)
        if (static_cast<int>(k % static_cast<std::uint64_t>(p)) == me) {
          s.async_insert(k);
          m.async_insert(k, 1);
        }
      shoal::barrier();
      // Keys 0 .. 149: the first 100 present. Each answer adds 1 to
      // answers[present] (set) or answers[2 + present] (map).
      for (std::uint64_t k = 0; k < 150; ++k) {
        s.async_contains(
            k,
            [](const std::uint64_t&, bool present, int_map out) {
              out.async_reduce(present ? 1 : 0, 1,
                               [](std::int64_t a, std::int64_t b) { return a + b; });
            },
            answers);
        m.async_contains(
            k,
            [](const std::uint64_t&, bool present, int_map out) {
              out.async_reduce(present ? 3 : 2, 1,
                               [](std::int64_t a, std::int64_t b) { return a + b; });
            },
            answers);
      }
      shoal::barrier();  // every lookup and its answer applied
      const auto all = answers.gather_all();
      const std::vector<std::pair<std::uint64_t, std::int64_t>> want = {
          {0, 50 * p}, {1, 100 * p}, {2, 50 * p}, {3, 100 * p}};
      check(all == want, fmt::format("answers {} of 4 kinds", all.size()));
      check(s.size() == 100 && m.size() == 100, "lookups inserted nothing");
    });
    s.destroy();
    m.destroy();
    answers.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

TEST(dist_containers, ArrayVisitReducePutRangeGetRangeAndGather) {
  g_failures = 0;
  constexpr std::uint64_t n = 10007;  // not a multiple of the core count
  shoal_dist::run_job([] {
    auto a = shoal::array<std::int64_t>::create(n);
    shoal::on_all_cores([a] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      // Every core adds its core + 1 to every element.
      for (std::uint64_t i = 0; i < n; ++i)
        a.async_visit(
            i, [](std::uint64_t, std::int64_t& v, std::int64_t add) { v += add; },
            std::int64_t{me + 1});
      check(a.size() == n, "size is n");
      const std::int64_t all_cores = std::int64_t{p} * (p + 1) / 2;
      std::int64_t local = 0;
      std::int64_t bad = 0;
      const std::uint64_t first = a.local_range().first;
      const std::uint64_t last = a.local_range().second;
      a.for_all([&](std::uint64_t i, std::int64_t& v) {
        ++local;
        bad += (i < first || i >= last || v != all_cores) ? 1 : 0;
      });
      check(bad == 0 && local == static_cast<std::int64_t>(last - first), "for_all over the block");
      check(shoal::allreduce_sum(local) == static_cast<std::int64_t>(n), "blocks cover the array");
      shoal::barrier();

      // Core p-1 writes [100, 9100) with 2i (pieces across every block); the
      // others reduce the last element with max.
      if (me == p - 1) {
        std::vector<std::int64_t> values(9000);
        for (std::size_t k = 0; k < values.size(); ++k)
          values[k] = 2 * (100 + static_cast<std::int64_t>(k));
        a.async_put_range(100, std::span<const std::int64_t>(values));
      }
      a.async_reduce(n - 1, 1000 + me,
                     [](std::int64_t x, std::int64_t y) { return std::max(x, y); });
      a.async_erase(static_cast<std::uint64_t>(me));  // elements 0 .. p-1 back to 0
      shoal::barrier();

      // Every core reads the whole array back (blocking) and checks it.
      std::vector<std::int64_t> back(n, -1);
      a.get_range(0, std::span<std::int64_t>(back));
      std::int64_t wrong = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        std::int64_t want = all_cores;
        if (i < static_cast<std::uint64_t>(p))
          want = 0;
        else if (i >= 100 && i < 9100)
          want = 2 * static_cast<std::int64_t>(i);
        if (i == n - 1) want = 1000 + p - 1;
        wrong += back[i] != want ? 1 : 0;
      }
      check(wrong == 0, fmt::format("get_range: {} elements differ", wrong));
      const auto g = a.gather_all();
      check(g == back, "gather_all in index order equals get_range");
      a.clear();
      const auto zero = a.gather(0);
      check(me == 0 ? zero == std::vector<std::int64_t>(n, 0) : zero.empty(), "clear");
    });
    a.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// Operations from every other core (other processes' included) that arrive
// while core 0's for_all holds its block are deferred (deferred_records()
// counts them) and applied in order when it ends. Each other core sends
// once core 0, inside the for_all, has set its block's first element; core
// 0's body waits (yielding, at most 2 s) until all were deferred.
TEST(dist_containers, ArrayOperationsArrivingDuringForAllAreDeferred) {
  g_failures = 0;
  constexpr std::uint64_t block = 32;
  shoal_dist::run_job([] {
    const auto n = block * static_cast<std::uint64_t>(shoal::cores());
    auto a = shoal::array<std::int64_t>::create(n);  // core c holds [32c, 32c + 32)
    shoal::on_all_cores([a] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      const auto senders = static_cast<std::uint64_t>(p - 1);
      const std::uint64_t records = 3 * block * senders;  // 3 visits per element each
      shoal::barrier();
      if (me == 0) {
        const std::uint64_t before = a.deferred_records();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        std::int64_t changed = 0;
        a.for_all([&](std::uint64_t i, std::int64_t& v) {
          const std::int64_t was = v;
          if (i == 0) {
            for (int c = 1; c < p; ++c) a.async_put(block * static_cast<std::uint64_t>(c), 1);
            shoal::flush();
          }
          shoal::yield();
          while (a.deferred_records() - before < records &&
                 std::chrono::steady_clock::now() < deadline)
            shoal::yield();
          changed += v != was ? 1 : 0;
        });
        const std::uint64_t deferred = a.deferred_records() - before;
        check(before == 0, fmt::format("a new array deferred {} records", before));
        check(senders == 0 || (deferred > 0 && deferred <= records),
              fmt::format("{} of {} records deferred by the for_all", deferred, records));
        check(changed == 0, fmt::format("{} elements changed under the for_all", changed));
      } else {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        const std::uint64_t mine = block * static_cast<std::uint64_t>(me);
        std::int64_t told = 0;
        while (told == 0 && std::chrono::steady_clock::now() < deadline) {
          shoal::yield();
          a.for_all([&](std::uint64_t j, std::int64_t& v) { told += j == mine ? v : 0; });
        }
        for (int r = 0; r < 3; ++r)
          for (std::uint64_t i = 0; i < block; ++i)
            a.async_visit(
                i, [](std::uint64_t j, std::int64_t& v, std::int64_t k) { v += k * (j + 1); },
                std::int64_t{me});
        shoal::flush();
      }
      const auto all = a.gather_all();
      // Element i of core 0's block: 3 (i + 1) times the sum of the senders'
      // core numbers; each other block's first element: core 0's 1.
      const std::int64_t sum = std::int64_t{p} * (p - 1) / 2;
      std::int64_t wrong = 0;
      for (std::uint64_t i = 0; i < all.size(); ++i) {
        const std::int64_t want = i < block        ? 3 * static_cast<std::int64_t>(i + 1) * sum
                                  : i % block == 0 ? 1
                                                   : 0;
        wrong += all[i] != want ? 1 : 0;
      }
      check(all.size() == block * static_cast<std::uint64_t>(p) && wrong == 0,
            fmt::format("after the for_all: {} elements differ", wrong));
    });
    a.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

/// A user-defined distribution: blocks of 5 dealt to the cores in reverse
/// order (block b on core cores - 1 - b mod cores).
struct reversed_blocks {
  int cores = 1;
  shoal::target_location locate(std::uint64_t t) const noexcept {
    const std::uint64_t b = t / 5;
    const auto p = static_cast<std::uint64_t>(cores);
    return {cores - 1 - static_cast<int>(b % p), (b / p) * 5 + t % 5};
  }
};

/// Every operation on an array laid out by `d` gives what a sequential
/// array gives: visits from every core, puts, reduces, erases, a put_range
/// and get_range across owners, gather, gather_all and for_all.
constexpr const char* distribution_names[] = {"block", "cyclic", "block_cyclic", "hashed",
                                              "user-defined"};

template <class D>
void check_distributed_array(int which, std::uint64_t n, D d) {
  using array_t = shoal::array<std::int64_t, D>;
  auto a = array_t::create(n, d);
  // The name by its index: a pointer means nothing in another process.
  shoal::on_all_cores([a, which] {
    const char* name = distribution_names[which];
    const std::uint64_t n = a.length();
    const int me = shoal::mycore();
    const int p = shoal::cores();
    // The sequential model: every core adds (core + 1) * i to element i,
    // then core 0 puts -i at multiples of 7, every core reduces element 3
    // with max(.., 100 + core), core p-1 erases element 1 and writes
    // [n/3, n/3 + n/2) with 5i.
    for (std::uint64_t i = 0; i < n; ++i)
      a.async_visit(
          i,
          [](std::uint64_t j, std::int64_t& v, std::int64_t c) {
            v += c * static_cast<std::int64_t>(j);
          },
          std::int64_t{me + 1});
    shoal::barrier();
    if (me == 0)
      for (std::uint64_t i = 0; i < n; i += 7) a.async_put(i, -static_cast<std::int64_t>(i));
    a.async_reduce(3, 100 + me, [](std::int64_t x, std::int64_t y) { return std::max(x, y); });
    shoal::barrier();
    const std::uint64_t first = n / 3;
    const std::uint64_t count = n / 2;
    if (me == p - 1) {
      a.async_erase(1);
      std::vector<std::int64_t> values(count);
      for (std::uint64_t k = 0; k < count; ++k)
        values[k] = 5 * static_cast<std::int64_t>(first + k);
      a.async_put_range(first, std::span<const std::int64_t>(values));
    }
    shoal::barrier();
    std::vector<std::int64_t> want(n);
    const std::int64_t all = std::int64_t{p} * (p + 1) / 2;
    for (std::uint64_t i = 0; i < n; ++i) want[i] = all * static_cast<std::int64_t>(i);
    for (std::uint64_t i = 0; i < n; i += 7) want[i] = -static_cast<std::int64_t>(i);
    want[3] = std::max<std::int64_t>(want[3], 100 + p - 1);
    want[1] = 0;
    for (std::uint64_t k = 0; k < count; ++k)
      want[first + k] = 5 * static_cast<std::int64_t>(first + k);

    std::vector<std::int64_t> back(n, -1);
    a.get_range(0, std::span<std::int64_t>(back));
    check(back == want, fmt::format("{}: get_range equals the sequential array", name));
    check(a.gather_all() == want, fmt::format("{}: gather_all in index order", name));
    const auto g = a.gather(p - 1);
    check(me == p - 1 ? g == want : g.empty(), fmt::format("{}: gather to core {}", name, p - 1));
    std::int64_t local = 0;
    std::int64_t bad = 0;
    a.for_all([&](std::uint64_t i, std::int64_t& v) {
      ++local;
      bad += (i >= n || v != want[i] || a.owner(i) != me) ? 1 : 0;
    });
    check(bad == 0, fmt::format("{}: for_all visits this core's elements with their values", name));
    check(shoal::allreduce_sum(local) == static_cast<std::int64_t>(n),
          fmt::format("{}: the cores' elements cover the array once", name));
    // A sub-range read across owners (runs of consecutive local slots).
    std::vector<std::int64_t> mid(n / 4);
    a.get_range(n / 5, std::span<std::int64_t>(mid));
    check(std::equal(mid.begin(), mid.end(), want.begin() + static_cast<std::ptrdiff_t>(n / 5)),
          fmt::format("{}: get_range of a sub-range", name));
  });
  a.destroy();
}

TEST(dist_containers, ArrayOnEveryDistributionEqualsASequentialArray) {
  g_failures = 0;
  constexpr std::uint64_t n = 1003;
  shoal_dist::run_job([] {
    const int p = shoal::cores();
    check_distributed_array(0, n, shoal::block_distribution(n, p));
    check_distributed_array(1, n, shoal::cyclic_distribution(p));
    check_distributed_array(2, n, shoal::block_cyclic_distribution(3, p));
    check_distributed_array(3, n, shoal::hashed_distribution(p, 7));
    check_distributed_array(4, n, reversed_blocks{p});
    // The defaults: block over the job, and Dist(cores()).
    auto c = shoal::array<int, shoal::cyclic_distribution>::create(10);
    shoal::on_all_cores([c] {
      c.async_put(static_cast<std::uint64_t>(shoal::mycore()) % 10, 1);
      check(c.owner(7) == 7 % shoal::cores(), "the default cyclic distribution spans the job");
      shoal::barrier();
    });
    c.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

TEST(dist_containers, BagInsertRebalanceAndGather) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto b = shoal::bag<std::string>::create();
    shoal::on_all_cores([b] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      // Skewed: everything lands on core 0, (me + 1) * 50 strings per core.
      for (int i = 0; i < (me + 1) * 50; ++i) b.async_insert_at(0, key_of(me, i));
      const std::size_t n = static_cast<std::size_t>(50 * p * (p + 1) / 2);
      check(b.size() == n, fmt::format("bag size {}", b.size()));
      check(me == 0 ? b.local_size() == n : b.local_size() == 0, "skewed before rebalance");
      b.rebalance();
      const std::size_t q = n / static_cast<std::size_t>(p);
      const std::size_t r = n % static_cast<std::size_t>(p);
      const std::size_t want = q + (static_cast<std::size_t>(me) < r ? 1 : 0);
      check(b.local_size() == want,
            fmt::format("after rebalance {} (want {})", b.local_size(), want));
      auto all = b.gather_all();
      std::sort(all.begin(), all.end());
      std::vector<std::string> expected;
      for (int c = 0; c < p; ++c)
        for (int i = 0; i < (c + 1) * 50; ++i) expected.push_back(key_of(c, i));
      std::sort(expected.begin(), expected.end());
      check(all == expected, "every element once after rebalance");
      // Round-robin inserts spread evenly.
      b.clear();
      for (int i = 0; i < 10 * p; ++i) b.async_insert(key_of(me, i));
      shoal::barrier();
      check(b.local_size() == static_cast<std::size_t>(10 * p), "round-robin spreads evenly");
      std::size_t seen = 0;
      b.for_all([&](std::string&) { ++seen; });
      check(seen == b.local_size(), "for_all over the part");
    });
    b.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

/// Edge k of core c of the union-find test: two items of [0, items).
std::pair<std::uint64_t, std::uint64_t> edge_of(int core, int k, std::uint64_t items) {
  const std::uint64_t h =
      std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(core) * 1000003U + k);
  const std::uint64_t a = (h * 0x9e3779b97f4a7c15ULL >> 20) % items;
  const std::uint64_t b = (h * 0xc2b2ae3d27d4eb4fULL >> 20) % items;
  return {a, b};
}

TEST(dist_containers, DisjointSetUnionsMatchASequentialUnionFind) {
  g_failures = 0;
  constexpr std::uint64_t items = 3000;
  constexpr int edges_per_core = 700;
  shoal_dist::run_job([] {
    auto ds = shoal::disjoint_set<std::uint64_t>::create();
    auto words = shoal::disjoint_set<std::string>::create();
    shoal::on_all_cores([ds, words] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      for (std::uint64_t x = static_cast<std::uint64_t>(me); x < items;
           x += static_cast<std::uint64_t>(p))
        ds.async_insert(x);
      for (int k = 0; k < edges_per_core; ++k) {
        const auto [a, b] = edge_of(me, k, items);
        ds.async_union(a, b);
      }
      const auto roots = ds.find_all();
      // The sequential reference: every core's edges, union by smaller root.
      std::vector<std::uint64_t> parent(items);
      for (std::uint64_t x = 0; x < items; ++x) parent[x] = x;
      auto find = [&](std::uint64_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
      };
      for (int c = 0; c < p; ++c)
        for (int k = 0; k < edges_per_core; ++k) {
          const auto [a, b] = edge_of(c, k, items);
          const std::uint64_t ra = find(a);
          const std::uint64_t rb = find(b);
          if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
        }
      std::size_t wrong = roots.size() == items ? 0 : 1;
      std::size_t sets = 0;
      for (const auto& [x, r] : roots) wrong += find(x) != r ? 1 : 0;
      for (std::uint64_t x = 0; x < items; ++x) sets += find(x) == x ? 1 : 0;
      check(wrong == 0, fmt::format("{} items with a wrong root ({} items)", wrong, roots.size()));
      check(ds.num_sets() == sets, fmt::format("num_sets {} expected {}", ds.num_sets(), sets));
      check(ds.size() == items, "size");

      // Strings: a chain w0 - w1 - ... - w19 from every core, and a pair apart.
      for (int i = 0; i + 1 < 20; ++i)
        words.async_union(fmt::format("w{:02}", (i + me) % 19),
                          fmt::format("w{:02}", (i + me) % 19 + 1));
      words.async_union("x", "y");
      const auto wroots = words.find_all();
      bool ok = wroots.size() == 22;
      for (const auto& [w, r] : wroots)
        ok &= r == (w[0] == 'w' ? std::string("w00") : std::string("x"));
      check(ok, "string union-find");
      check(words.num_sets() == 2, "two string sets");
    });
    ds.destroy();
    words.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

// Containers from a typed channel's handler (handler context) and from
// tasks spawned on every core: the same counts as from the SPMD tasks.
TEST(dist_containers, UsableFromChannelHandlersAndSpawnedTasks) {
  g_failures = 0;
  shoal_dist::run_job([] {
    auto counts = shoal::counting_set<std::uint64_t>::create();
    auto names = shoal::map<std::string, std::int64_t>::create();
    struct forward {
      shoal::counting_set<std::uint64_t> counts;
      shoal::map<std::string, std::int64_t> names;
      void operator()(const std::uint64_t& v) const {
        counts.async_insert(v % 7);
        names.async_reduce(fmt::format("n{}", v % 5), 1,
                           [](std::int64_t a, std::int64_t b) { return a + b; });
      }
    };
    auto ch = shoal::make_channel<std::uint64_t>(forward{counts, names});
    shoal::on_all_cores([ch, counts, names] {
      const int me = shoal::mycore();
      const int p = shoal::cores();
      for (std::uint64_t v = 0; v < 70; ++v) ch.send(static_cast<int>(v) % p, v);
      shoal::completion_event done;
      done.enroll(1);
      shoal::completion_event* d = &done;
      // The task may be stolen, even by another process: the event is
      // completed at its home core.
      shoal::spawn([counts, d, me] {
        for (std::uint64_t v = 0; v < 7; ++v) counts.async_insert(v);
        shoal::completion_event::complete_at(me, d);
      });
      done.wait();
      const auto top = counts.top_k(7);  // begins with a barrier
      bool ok = top.size() == 7;
      for (const auto& [k, c] : top) ok &= c == static_cast<std::uint64_t>(11 * p);
      check(ok, "counts from handlers and spawned tasks");
      const auto all = names.gather_all();
      ok = all.size() == 5;
      for (const auto& [k, v] : all) ok &= v == 14 * p;
      check(ok, "map reductions from handlers");
    });
    ch.close();
    counts.destroy();
    names.destroy();
  });
  EXPECT_EQ(g_failures.load(), 0);
}

}  // namespace

SHOAL_DIST_MAIN()
