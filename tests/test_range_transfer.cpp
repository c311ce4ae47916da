// Bulk transfer of global ranges (range_transfer.hpp) on one process with 1,
// 2 and 4 cores: reads and writes of ranges starting and ending mid-block,
// spanning every core, empty, of one element and of a million, checked
// element by element; elements of 16 and 256 bytes; 2D ranges; concurrent
// writers. Across processes: tests/mpi/dist_range_transfer.cpp.
#include "range_transfer_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace range_checks;
using shoal_test::cores_test;

constexpr i64 size = (1 << 20) + 100;

class range_transfer : public cores_test {};

TEST_P(range_transfer, ReadsOfEveryShapeMatchTheArray) {
  i64 bad = -1;
  run([&] {
    const auto a = shoal::global_alloc<i64>(size);
    fill(a, size);
    bad = check_reads(a, size);
    shoal::global_free(a);
  });
  EXPECT_EQ(bad, 0);
}

TEST_P(range_transfer, WritesOfEveryShapeLandExactlyInTheirRange) {
  i64 bad = -1;
  i64 wrong = 0;
  run([&] {
    const auto a = shoal::global_alloc<i64>(size);
    bad = check_writes(a, size, shoal::make_global(&wrong));
    shoal::global_free(a);
  });
  EXPECT_EQ(bad, 0) << "read back differs";
  EXPECT_EQ(wrong, 0) << "elements differ at their home";
}

TEST_P(range_transfer, ConcurrentWritersToDisjointRanges) {
  i64 wrong = 0;
  run([&] {
    const auto a = shoal::global_alloc<i64>(size);
    check_concurrent_writers(a, size, shoal::make_global(&wrong));
    shoal::global_free(a);
  });
  EXPECT_EQ(wrong, 0);
}

TEST_P(range_transfer, ElementsOfSixteenAndTwoHundredFiftySixBytes) {
  i64 bad = -1;
  shoal::config cfg = config();
  cfg.block_bytes = 1024;  // four 256-byte elements per block
  run(cfg, [&] {
    bad = check_element_type<pair16>(5000, 3, [](i64 i) { return pair16{i, -i * i}; });
    bad += check_element_type<wide>(700, 1, [](i64 i) {
      wide w{};
      for (i64 k = 0; k < 32; ++k) w.v[k] = i * 100 + k;
      return w;
    });
  });
  EXPECT_EQ(bad, 0);
}

shoal::per_core<i64> wrong_2d;

TEST_P(range_transfer, TwoDimensionalRangesOnEveryOwner) {
  run([&] {
    shoal::on_all_cores([] {
      for (int owner = 0; owner < shoal::cores(); ++owner) wrong_2d.local() += check_2d(owner);
    });
  });
  i64 bad = 0;
  for (int i = 0; i < wrong_2d.size(); ++i) bad += wrong_2d[i];
  wrong_2d.reset();
  EXPECT_EQ(bad, 0);
}

SHOAL_TEST_CORES(range_transfer);

}  // namespace
