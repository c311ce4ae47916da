// SPMD collectives (collective.hpp): allreduce, exclusive_scan_sum and the
// element-wise span form, on 1, 2 and 4 cores, called back to back many times.
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
  for (const std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{15},
                                   std::size_t{16}, std::size_t{17}, std::size_t{1000}}) {
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
      out[me] = shoal::allreduce(mine, [](const minloc& a, const minloc& b) {
        return b.value < a.value ? b : a;
      });
    });
  });
  for (int core = 0; core < ncores(); ++core) {
    EXPECT_EQ(got[static_cast<std::size_t>(core)].core, ncores() - 1) << "core " << core;
    EXPECT_EQ(got[static_cast<std::size_t>(core)].value, 100.0 - (ncores() - 1));
  }
}

SHOAL_TEST_CORES(collectives);

}  // namespace
