// dist_collectives: collectives of any size (collective.hpp) across
// processes, at 1 x 2, 2 x 2 and 3 x 2 (tests/CMakeLists.txt).
//
// Every core checks its own results against a sequential computation of the
// same values (closed forms, or the documented combining order for floating
// point) and adds its mismatches, per check, to counters on the root core
// (delegates on a 2D pointer); rank 0 asserts after run().
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "mpi/dist_support.hpp"

namespace {

using shoal_dist::job_cores;
using shoal_dist::rank0;
using shoal_dist::run_job;
using i64 = std::int64_t;

constexpr int checks = 8;
using tally = std::array<i64, checks>;

/// Runs body(bad) on every core, where bad is that core's tally, and
/// returns the sum of the tallies (on rank 0).
template <class Body>
tally run_checked_on_all_cores(Body body) {
  tally total{};
  run_job([&] {
    tally wrong{};
    const auto w = shoal::make_global(wrong.data());
    shoal::on_all_cores([w, body] {
      tally bad{};
      body(bad);
      for (int k = 0; k < checks; ++k)
        if (bad[static_cast<std::size_t>(k)] != 0)
          shoal::delegate::fetch_add(w + k, bad[static_cast<std::size_t>(k)]);
    });
    total = wrong;
  });
  return total;
}

void expect_clean(const tally& t, const char* what) {
  if (!rank0()) return;
  for (int k = 0; k < checks; ++k)
    EXPECT_EQ(t[static_cast<std::size_t>(k)], 0) << what << ": check " << k << " failed";
}

/// A value whose floating-point sum depends on the order of addition.
double awkward(i64 core, i64 i) {
  return (core % 2 == 0 ? 1e16 : 1.0) * static_cast<double>(i % 7 + 1) + static_cast<double>(core);
}

/// The documented order: a left fold over each process's cores, then the
/// binomial tree over ranks rooted at rank 0 (own value, then the children's
/// subtrees in ascending order).
template <class V>
double tree_sum(const V& value) {
  const int ranks = shoal::ranks();
  const int c = shoal::local_cores();
  std::vector<double> own(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    double acc = value(r * c);
    for (int k = 1; k < c; ++k) acc = acc + value(r * c + k);
    own[static_cast<std::size_t>(r)] = acc;
  }
  auto subtree = [&](auto& self, int v) -> double {
    double acc = own[static_cast<std::size_t>(v)];
    const int low = v & -v;
    for (int k = 1; (v == 0 || k < low) && v + k < ranks; k <<= 1) acc = acc + self(self, v + k);
    return acc;
  };
  return subtree(subtree, 0);
}

/// A 4 KiB value: far beyond the old 192-byte limit.
struct big {
  std::array<i64, 510> v;
  i64 first_core;  // a non-commutative part of the operation: keeps the left one
  i64 last_core;   // keeps the right one
};
static_assert(sizeof(big) == 4096);

big make_big(i64 core) {
  big b{};
  for (std::size_t i = 0; i < b.v.size(); ++i) b.v[i] = core * 1000 + static_cast<i64>(i);
  b.first_core = core;
  b.last_core = core;
  return b;
}

big combine_big(const big& a, const big& b) {
  big r = a;
  for (std::size_t i = 0; i < r.v.size(); ++i) r.v[i] = a.v[i] + b.v[i];
  r.last_core = b.last_core;
  return r;
}

TEST(dist_collectives, AllreduceOfLargeSpansIsBitForBitTheDocumentedTreeFold) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 me = shoal::mycore();
    const i64 c = shoal::cores();
    for (const i64 n : {i64{0}, i64{1}, i64{27}, i64{28}, i64{29}, i64{100000}}) {
      std::vector<i64> ints(static_cast<std::size_t>(n));
      std::vector<double> fl(static_cast<std::size_t>(n));
      for (i64 i = 0; i < n; ++i) {
        ints[static_cast<std::size_t>(i)] = i * (me + 1);
        fl[static_cast<std::size_t>(i)] = awkward(me, i);
      }
      shoal::allreduce_sum(std::span<i64>(ints));
      shoal::allreduce_sum(std::span<double>(fl));
      for (i64 i = 0; i < n; ++i) {
        if (ints[static_cast<std::size_t>(i)] != i * c * (c + 1) / 2) ++bad[0];
        if (i < 7 || i == n - 1) {  // one of each residue mod 7 is enough for the model
          const double want = tree_sum([i](i64 core) { return awkward(core, i); });
          if (std::memcmp(&fl[static_cast<std::size_t>(i)], &want, sizeof want) != 0) ++bad[1];
        } else if (fl[static_cast<std::size_t>(i)] != fl[static_cast<std::size_t>(i % 7)]) {
          ++bad[1];
        }
      }
    }
  });
  expect_clean(t, "allreduce of spans");
}

TEST(dist_collectives, ScalarsOfFourKibibytesWithANonCommutativeOperation) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 c = shoal::cores();
    for (int round = 0; round < 5; ++round) {
      const big r = shoal::allreduce(make_big(shoal::mycore()), combine_big);
      for (std::size_t i = 0; i < r.v.size(); ++i)
        if (r.v[i] != 1000 * c * (c - 1) / 2 + c * static_cast<i64>(i)) ++bad[0];
      if (r.first_core != 0 || r.last_core != c - 1) ++bad[1];
      const big b = shoal::broadcast(make_big(shoal::mycore()), static_cast<int>(round % c));
      const big want = make_big(round % c);
      if (std::memcmp(&b, &want, sizeof b) != 0) ++bad[2];
    }
  });
  expect_clean(t, "4 KiB scalars");
}

TEST(dist_collectives, ReduceGivesTheRootAllreducesBitsAndLeavesOthersAlone) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 me = shoal::mycore();
    const auto c = static_cast<int>(shoal::cores());
    constexpr i64 n = 1000;
    for (int root = 0; root < c; ++root) {
      std::vector<double> v(n);
      for (i64 i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = awkward(me, i);
      shoal::reduce(std::span<double>(v), std::plus<double>{}, root);
      for (i64 i = 0; i < n; ++i) {
        const double want =
            me == root ? tree_sum([i](i64 core) { return awkward(core, i); }) : awkward(me, i);
        if (std::memcmp(&v[static_cast<std::size_t>(i)], &want, sizeof want) != 0) ++bad[0];
      }
    }
  });
  expect_clean(t, "reduce");
}

TEST(dist_collectives, BroadcastFromEveryRootOfEveryLength) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 me = shoal::mycore();
    const auto c = static_cast<int>(shoal::cores());
    for (const i64 n : {i64{0}, i64{1}, i64{100}, i64{70000}}) {
      for (int root = 0; root < c; ++root) {
        std::vector<i64> v(static_cast<std::size_t>(n));
        for (i64 i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = me * 1000003 + i;
        shoal::broadcast(std::span<i64>(v), root);
        for (i64 i = 0; i < n; ++i)
          if (v[static_cast<std::size_t>(i)] != root * 1000003 + i) ++bad[0];
      }
    }
  });
  expect_clean(t, "broadcast");
}

/// Core `core`'s part in the variable-length tests: (core * 37 + round) % 53
/// elements (some cores contribute none).
i64 part_length(i64 core, int round) { return (core * 37 + round) % 53; }
std::int16_t part_value(i64 core, i64 i) { return static_cast<std::int16_t>(core * 100 + i); }

TEST(dist_collectives, GatherAndAllgatherOfVariableLengthsInCoreOrder) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 me = shoal::mycore();
    const auto c = static_cast<int>(shoal::cores());
    for (int round = 0; round < 2 * c; ++round) {
      std::vector<std::int16_t> mine(static_cast<std::size_t>(part_length(me, round)));
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = part_value(me, static_cast<i64>(i));
      const int root = round % c;
      const shoal::gathered<std::int16_t> g =
          shoal::gatherv(std::span<const std::int16_t>(mine), root);
      const shoal::gathered<std::int16_t> all = shoal::allgatherv(std::span<std::int16_t>(mine));
      auto check = [&](const shoal::gathered<std::int16_t>& got, std::size_t slot) {
        if (got.offsets.size() != static_cast<std::size_t>(c) + 1) {
          ++bad[slot];
          return;
        }
        i64 at = 0;
        for (int k = 0; k < c; ++k) {
          if (got.offsets[static_cast<std::size_t>(k)] != at) ++bad[slot];
          for (i64 i = 0; i < part_length(k, round); ++i)
            if (got.values.at(static_cast<std::size_t>(at + i)) != part_value(k, i)) ++bad[slot];
          at += part_length(k, round);
        }
        if (got.offsets.back() != at || static_cast<i64>(got.values.size()) != at) ++bad[slot];
      };
      if (me == root) {
        check(g, 0);
      } else if (!g.values.empty() || !g.offsets.empty()) {
        ++bad[1];
      }
      check(all, 2);
    }
  });
  expect_clean(t, "gatherv/allgatherv");
}

TEST(dist_collectives, FixedLengthGatherAndAllgatherOfLargeParts) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 me = shoal::mycore();
    const auto c = static_cast<int>(shoal::cores());
    constexpr i64 n = 16384;  // 128 KiB per core
    std::vector<i64> mine(n);
    for (i64 i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = me * n + i;
    const std::vector<i64> all = shoal::allgather(std::span<const i64>(mine));
    if (static_cast<i64>(all.size()) != c * n) ++bad[0];
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i] != static_cast<i64>(i)) ++bad[0];
    const std::vector<i64> at_last = shoal::gather(std::span<i64>(mine), c - 1);
    if (me == c - 1) {
      if (at_last != all) ++bad[1];
    } else if (!at_last.empty()) {
      ++bad[1];
    }
    const std::vector<big> bigs = shoal::allgather(make_big(me));
    for (int k = 0; k < c; ++k) {
      const big want = make_big(k);
      if (std::memcmp(&bigs.at(static_cast<std::size_t>(k)), &want, sizeof want) != 0) ++bad[2];
    }
  });
  expect_clean(t, "gather/allgather");
}

TEST(dist_collectives, MixedCollectivesBackToBackWithCoresOutOfStep) {
  const tally t = run_checked_on_all_cores([](tally& bad) {
    const i64 me = shoal::mycore();
    const i64 c = shoal::cores();
    for (int r = 0; r < 60; ++r) {
      // Cores arrive at different times: some yield a while before each call.
      for (i64 k = 0; k < (me * 7 + r) % 5 * 20; ++k) shoal::yield();
      if (shoal::allreduce_sum(me + r) != c * (c - 1) / 2 + c * r) ++bad[0];
      const double d = shoal::broadcast(static_cast<double>(me) + 0.5, static_cast<int>(r % c));
      if (d != static_cast<double>(r % c) + 0.5) ++bad[1];
      const std::vector<std::int32_t> a = shoal::allgather(static_cast<std::int32_t>(me * r));
      for (i64 k = 0; k < c; ++k)
        if (a.at(static_cast<std::size_t>(k)) != k * r) ++bad[2];
      const auto scan = shoal::exclusive_scan_sum(me + 1);
      if (scan.before != me * (me + 1) / 2 || scan.total != c * (c + 1) / 2) ++bad[3];
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(r % 3),
                                      static_cast<std::uint8_t>(me));
      const auto g = shoal::allgatherv(std::span<const std::uint8_t>(bytes));
      if (static_cast<i64>(g.values.size()) != c * (r % 3)) ++bad[4];
      if (shoal::allreduce_max(static_cast<std::int16_t>(me)) != c - 1) ++bad[5];
    }
  });
  expect_clean(t, "mixed collectives");
}

// Misuse across processes, run on its own by tests/CMakeLists.txt
// (--gtest_also_run_disabled_tests): the last process's cores pass one more
// element than the others; the fatal error names both lengths.
TEST(dist_collectives, DISABLED_SpansOfDifferentLengthsOnDifferentProcessesAreNamed) {
  run_job([] {
    shoal::on_all_cores([] {
      std::vector<double> v(shoal::myrank() == shoal::ranks() - 1 ? 4 : 3);
      shoal::allreduce_sum(std::span<double>(v));
    });
  });
}

}  // namespace

SHOAL_DIST_MAIN()
