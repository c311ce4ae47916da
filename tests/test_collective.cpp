// SPMD collectives (collective.hpp): allreduce, exclusive_scan_sum and the
// element-wise span form, on 1, 2 and 4 cores, called back to back many times;
// collectives of any size (broadcast, reduce, gather, allgather and their
// variable-length forms, values of 4 KiB, spans of a million elements); and
// misuse, named (death tests). Across processes: tests/mpi/dist_collectives.cpp.
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal_test::cores_test;

/// What each core saw, read back by the root task after on_all_cores.
struct seen {
  std::vector<std::int64_t> sums, maxes, mins;
  std::vector<double> fsums;
  std::vector<shoal::scan_result<std::int64_t>> scans;
  std::vector<std::int64_t> span_sum;
  std::vector<double> span_fsum;
};

shoal::per_core<seen> results;

/// Copies every core's record out of `results`, then resets it.
std::vector<seen> collect() {
  std::vector<seen> all;
  for (int i = 0; i < results.size(); ++i) all.push_back(results[i]);
  results.reset();
  return all;
}

/// A contribution whose floating-point sum depends on the order of addition.
double awkward(int core, int round) { return (core % 2 == 0 ? 1e16 : 1.0) * (round + 1) + core; }

class collectives : public cores_test {};

TEST_P(collectives, ScalarReductionsAgreeOnEveryCoreRoundAfterRound) {
  constexpr int rounds = 200;
  std::vector<seen> all;
  run([&] {
    shoal::on_all_cores([] {
      seen& s = results.local();
      const int me = shoal::mycore();
      for (int r = 0; r < rounds; ++r) {
        const std::int64_t x = (me + 1) * (r + 1);
        s.sums.push_back(shoal::allreduce_sum(x));
        s.maxes.push_back(shoal::allreduce_max(x));
        s.mins.push_back(shoal::allreduce_min(x));
        s.fsums.push_back(shoal::allreduce_sum(awkward(me, r)));
      }
    });
    all = collect();
  });
  const std::int64_t c = ncores();
  ASSERT_EQ(static_cast<int>(all.size()), ncores());
  for (int r = 0; r < rounds; ++r) {
    double fold = awkward(0, r);  // core order, left to right
    for (int core = 1; core < ncores(); ++core) fold = fold + awkward(core, r);
    for (int core = 0; core < ncores(); ++core) {
      const seen& s = all[static_cast<std::size_t>(core)];
      ASSERT_EQ(s.sums.size(), static_cast<std::size_t>(rounds));
      EXPECT_EQ(s.sums[r], c * (c + 1) / 2 * (r + 1)) << "core " << core << " round " << r;
      EXPECT_EQ(s.maxes[r], c * (r + 1)) << "core " << core << " round " << r;
      EXPECT_EQ(s.mins[r], r + 1) << "core " << core << " round " << r;
      // Bit for bit the core-order fold, on every core.
      EXPECT_EQ(std::memcmp(&s.fsums[r], &fold, sizeof fold), 0)
          << "core " << core << " round " << r << ": " << s.fsums[r] << " vs " << fold;
    }
  }
}

TEST_P(collectives, ExclusiveScanGivesEachCoreTheSumBeforeIt) {
  std::vector<seen> all;
  run([&] {
    shoal::on_all_cores([] {
      for (int r = 0; r < 50; ++r)
        results.local().scans.push_back(
            shoal::exclusive_scan_sum<std::int64_t>(10 * shoal::mycore() + r));
    });
    all = collect();
  });
  for (int r = 0; r < 50; ++r) {
    std::int64_t before = 0;
    for (int core = 0; core < ncores(); ++core) {
      const auto& got = all[static_cast<std::size_t>(core)].scans.at(static_cast<std::size_t>(r));
      EXPECT_EQ(got.before, before) << "core " << core << " round " << r;
      before += 10 * core + r;
    }
    for (int core = 0; core < ncores(); ++core)
      EXPECT_EQ(all[static_cast<std::size_t>(core)].scans[r].total, before) << "core " << core;
  }
}

TEST_P(collectives, SpanSumIsElementWiseForLengthsAroundTheChunkSize) {
  // 16 int64 or doubles fill one 128-byte chunk: lengths below, at and past it.
  for (const std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{15}, std::size_t{16},
                                   std::size_t{17}, std::size_t{1000}}) {
    std::vector<seen> all;
    run([&] {
      shoal::on_all_cores([length] {
        seen& s = results.local();
        const int me = shoal::mycore();
        for (int r = 0; r < 3; ++r) {
          std::vector<std::int64_t> v(length);
          std::vector<double> f(length);
          for (std::size_t i = 0; i < length; ++i) {
            v[i] = static_cast<std::int64_t>(i) * 1000 + me + r;
            f[i] = awkward(me, static_cast<int>(i));
          }
          shoal::allreduce_sum(std::span<std::int64_t>(v));
          shoal::allreduce_sum(std::span<double>(f));
          s.span_sum = v;
          s.span_fsum = f;
        }
      });
      all = collect();
    });
    const std::int64_t c = ncores();
    for (int core = 0; core < ncores(); ++core) {
      const seen& s = all[static_cast<std::size_t>(core)];
      ASSERT_EQ(s.span_sum.size(), length) << "core " << core;
      for (std::size_t i = 0; i < length; ++i) {
        // Last round (r = 2): sum over cores of i*1000 + core + 2.
        EXPECT_EQ(s.span_sum[i], c * (static_cast<std::int64_t>(i) * 1000 + 2) + c * (c - 1) / 2)
            << "core " << core << " element " << i << " length " << length;
        double fold = awkward(0, static_cast<int>(i));
        for (int k = 1; k < ncores(); ++k) fold = fold + awkward(k, static_cast<int>(i));
        EXPECT_EQ(s.span_fsum[i], fold) << "core " << core << " element " << i;
      }
    }
  }
}

TEST_P(collectives, StructValuesWithACustomOperation) {
  struct minloc {
    double value;
    int core;
  };
  std::vector<minloc> got(static_cast<std::size_t>(ncores()));
  minloc* out = got.data();
  run([&] {
    shoal::on_all_cores([out] {
      const int me = shoal::mycore();
      // The smallest value sits on the last core; ties would go to the lower core.
      const minloc mine{100.0 - me, me};
      out[me] = shoal::allreduce(
          mine, [](const minloc& a, const minloc& b) { return b.value < a.value ? b : a; });
    });
  });
  for (int core = 0; core < ncores(); ++core) {
    EXPECT_EQ(got[static_cast<std::size_t>(core)].core, ncores() - 1) << "core " << core;
    EXPECT_EQ(got[static_cast<std::size_t>(core)].value, 100.0 - (ncores() - 1));
  }
}

/// A 4 KiB value (the old limit was 192 bytes).
struct big {
  std::array<std::int64_t, 511> v;
  std::int64_t last_core;  // combined by keeping the right-hand one: not commutative
};

big make_big(int core) {
  big b{};
  for (std::size_t i = 0; i < b.v.size(); ++i) b.v[i] = core * 10000 + static_cast<std::int64_t>(i);
  b.last_core = core;
  return b;
}

/// Per-core check tallies, read back after run().
shoal::per_core<std::int64_t> wrong;

std::int64_t total_wrong() {
  std::int64_t sum = 0;
  for (int i = 0; i < wrong.size(); ++i) sum += wrong[i];
  wrong.reset();
  return sum;
}

TEST_P(collectives, ValuesOfFourKibibytesAndSpansOfAMillionDoubles) {
  run([] {
    shoal::on_all_cores([] {
      std::int64_t& bad = wrong.local();
      const int me = shoal::mycore();
      const std::int64_t c = shoal::cores();
      const big r = shoal::allreduce(make_big(me), [](const big& a, const big& b) {
        big out = a;
        for (std::size_t i = 0; i < out.v.size(); ++i) out.v[i] += b.v[i];
        out.last_core = b.last_core;
        return out;
      });
      for (std::size_t i = 0; i < r.v.size(); ++i)
        if (r.v[i] != 10000 * c * (c - 1) / 2 + c * static_cast<std::int64_t>(i)) ++bad;
      if (r.last_core != c - 1) ++bad;
      std::vector<double> v(1 << 20);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = awkward(me, static_cast<int>(i % 5));
      shoal::allreduce_sum(std::span<double>(v));
      for (std::size_t i = 0; i < v.size(); ++i) {
        double fold = awkward(0, static_cast<int>(i % 5));  // one process: the core-order fold
        for (int k = 1; k < c; ++k) fold = fold + awkward(k, static_cast<int>(i % 5));
        if (std::memcmp(&v[i], &fold, sizeof fold) != 0) ++bad;
      }
    });
  });
  EXPECT_EQ(total_wrong(), 0);
}

TEST_P(collectives, BroadcastReduceGatherAndAllgatherFromEveryRoot) {
  run([] {
    shoal::on_all_cores([] {
      std::int64_t& bad = wrong.local();
      const int me = shoal::mycore();
      const int c = shoal::cores();
      for (int root = 0; root < c; ++root) {
        if (shoal::broadcast(make_big(me), root).last_core != root) ++bad;
        std::vector<std::int32_t> v(300, me + 1);
        shoal::reduce(std::span<std::int32_t>(v), std::multiplies<std::int32_t>{}, root);
        std::int32_t product = 1;
        for (int k = 1; k <= c; ++k) product *= k;
        for (const std::int32_t x : v)
          if (x != (me == root ? product : me + 1)) ++bad;
        // Core k contributes k elements of value k (core 0 none).
        const std::vector<std::int32_t> mine(static_cast<std::size_t>(me), me);
        const auto g = shoal::gatherv(std::span<const std::int32_t>(mine), root);
        const auto all = shoal::allgatherv(std::span<const std::int32_t>(mine));
        std::vector<std::int32_t> want;
        for (int k = 0; k < c; ++k) want.insert(want.end(), static_cast<std::size_t>(k), k);
        if (all.values != want || all.offsets.size() != static_cast<std::size_t>(c) + 1) ++bad;
        for (int k = 0; k < c && all.offsets.size() == static_cast<std::size_t>(c) + 1; ++k)
          if (all.count(k) != k || (k > 0 && all.part(k)[0] != k)) ++bad;
        if (me == root ? g.values != want : !g.values.empty()) ++bad;
        const std::vector<int> ids = shoal::gather(std::span<const int>(&me, 1), root);
        if (me == root ? static_cast<int>(ids.size()) != c : !ids.empty()) ++bad;
        for (int k = 0; k < static_cast<int>(ids.size()); ++k)
          if (ids[static_cast<std::size_t>(k)] != k) ++bad;
      }
      const std::vector<int> every = shoal::allgather(me * me);
      for (int k = 0; k < c; ++k)
        if (every.at(static_cast<std::size_t>(k)) != k * k) ++bad;
    });
  });
  EXPECT_EQ(total_wrong(), 0);
}

SHOAL_TEST_CORES(collectives);

// ------------------------------------------------------------------ misuse

class collective_misuse : public ::testing::Test {
 protected:
  void SetUp() override {  // NOLINT(readability-identifier-naming): gtest
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

template <class F>
void run_to_death(int cores, F body, int watchdog_s = 0) {
  shoal::config cfg = shoal_test::make_config(cores);
  cfg.watchdog_s = watchdog_s;
  shoal::init(cfg);
  shoal::run([body] { shoal::on_all_cores(body); });
  shoal::finalize();
}

TEST_F(collective_misuse, SpansOfDifferentLengthsNameTheCollectiveAndBothLengths) {
  EXPECT_DEATH(run_to_death(2,
                            [] {
                              std::vector<double> v(static_cast<std::size_t>(3 + shoal::mycore()));
                              shoal::allreduce_sum(std::span<double>(v));
                            }),
               "shoal::allreduce #0: core 0 passed 3 elements, core 1 passed 4");
  EXPECT_DEATH(run_to_death(2,
                            [] {
                              (void)shoal::allreduce_sum(1);
                              std::vector<int> v(static_cast<std::size_t>(5 - shoal::mycore()));
                              shoal::broadcast(std::span<int>(v), 1);
                            }),
               "shoal::broadcast #1: core 0 passed 5 elements, core 1 passed 4");
  EXPECT_DEATH(run_to_death(2,
                            [] {
                              std::vector<int> v(static_cast<std::size_t>(1 + shoal::mycore()));
                              (void)shoal::allgather(std::span<int>(v));
                            }),
               "shoal::allgather #0: core 0 passed 1 elements, core 1 passed 2");
}

TEST_F(collective_misuse, RootOutOfRangeIsNamed) {
  EXPECT_DEATH(run_to_death(2, [] { (void)shoal::broadcast(1.0, 2); }),
               "shoal::broadcast: root 2 out of range \\[0, 2\\)");
  EXPECT_DEATH(run_to_death(2,
                            [] {
                              std::vector<int> v(4);
                              shoal::reduce(std::span<int>(v), std::plus<int>{}, -1);
                            }),
               "shoal::reduce: root -1 out of range \\[0, 2\\)");
  EXPECT_DEATH(run_to_death(1, [] { (void)shoal::gatherv(std::span<const int>(), 1); }),
               "shoal::gather: root 1 out of range \\[0, 1\\)");
}

TEST_F(collective_misuse, DifferentCollectivesOrRootsOnDifferentCoresAreNamed) {
  EXPECT_DEATH(run_to_death(2,
                            [] {
                              if (shoal::mycore() == 0) {
                                (void)shoal::allreduce_sum(1);
                              } else {
                                (void)shoal::allgather(1);
                              }
                            }),
               "shoal collective #0: core 0 called shoal::allreduce, core 1 called "
               "shoal::allgather");
  EXPECT_DEATH(run_to_death(2, [] { (void)shoal::broadcast(1, shoal::mycore()); }),
               "shoal::broadcast #0: core 0 passed root 0, core 1 passed root 1");
}

TEST_F(collective_misuse, ACoreThatSkipsACollectiveLeavesTheOthersWaitingUnderItsName) {
  EXPECT_EXIT(run_to_death(
                  2,
                  [] {
                    for (int r = 0; r < 3; ++r) (void)shoal::allreduce_sum(r);
                    if (shoal::mycore() == 0) (void)shoal::allgather(7);
                  },
                  1),
              ::testing::ExitedWithCode(shoal::exit_status::fatal), "core 0: .*1 waiting on allgather #3");
}

}  // namespace
