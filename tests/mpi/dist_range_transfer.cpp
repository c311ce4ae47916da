// dist_range_transfer: read_range/write_range (range_transfer.hpp) across
// processes, at 1 x 2, 2 x 2 and 3 x 2 (tests/CMakeLists.txt): ranges that
// start and end mid-block, span every core, are empty, of one element and of
// a million, from the root and from every core at once; 2D ranges on every
// owner; concurrent writers to disjoint ranges. Checked element by element
// at each element's home (forall) and by reading back.
#include "mpi/dist_support.hpp"
#include "range_transfer_checks.hpp"

namespace {

using namespace range_checks;
using shoal_dist::rank0;
using shoal_dist::run_job;

constexpr i64 size = (1 << 20) + 100;

TEST(dist_range_transfer, ReadsOfEveryShapeFromTheRoot) {
  i64 bad = -1;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(size);
    fill(a, size);
    bad = check_reads(a, size);
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(bad, 0);
  }
}

TEST(dist_range_transfer, ReadsFromEveryCoreAtOnce) {
  i64 wrong = 0;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(size);
    fill(a, size);
    const auto w = shoal::make_global(&wrong);
    shoal::on_all_cores([a, w] {
      // Each core reads a different window, some overlapping others'.
      const i64 start = shoal::mycore() * 100003 % (size / 2);
      std::vector<i64> got(static_cast<std::size_t>(size / 3));
      shoal::read_range(a + start, std::span<i64>(got));
      i64 bad = 0;
      for (i64 i = 0; i < size / 3; ++i)
        if (got[static_cast<std::size_t>(i)] != initial(start + i)) ++bad;
      if (bad != 0) shoal::delegate::fetch_add(w, bad);
    });
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(wrong, 0);
  }
}

TEST(dist_range_transfer, WritesOfEveryShapeLandExactlyInTheirRange) {
  i64 bad = -1;
  i64 wrong = 0;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(size);
    bad = check_writes(a, size, shoal::make_global(&wrong));
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(bad, 0) << "read back differs";
    EXPECT_EQ(wrong, 0) << "elements differ at their home";
  }
}

TEST(dist_range_transfer, ConcurrentWritersToDisjointRanges) {
  i64 wrong = 0;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(size);
    check_concurrent_writers(a, size, shoal::make_global(&wrong));
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(wrong, 0);
  }
}

TEST(dist_range_transfer, ElementsOfSixteenAndTwoHundredFiftySixBytes) {
  i64 bad = -1;
  shoal::config cfg = shoal_dist::job_config();
  cfg.block_bytes = 1024;
  shoal_test::run_checked(cfg, [&] {
    bad = check_element_type<pair16>(5000, 3, [](i64 i) { return pair16{i, -i * i}; });
    bad += check_element_type<wide>(700, 1, [](i64 i) {
      wide w{};
      for (i64 k = 0; k < 32; ++k) w.v[k] = i * 100 + k;
      return w;
    });
  });
  if (rank0()) {
    EXPECT_EQ(bad, 0);
  }
}

TEST(dist_range_transfer, TwoDimensionalRangesOnEveryOwner) {
  i64 wrong = 0;
  run_job([&] {
    const auto w = shoal::make_global(&wrong);
    shoal::on_all_cores([w] {
      i64 bad = 0;
      for (int owner = 0; owner < shoal::cores(); ++owner) bad += check_2d(owner);
      if (bad != 0) shoal::delegate::fetch_add(w, bad);
    });
  });
  if (rank0()) {
    EXPECT_EQ(wrong, 0);
  }
}

}  // namespace

SHOAL_DIST_MAIN()
