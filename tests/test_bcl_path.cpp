// One-sided or delegate behind the same call (bcl/path.hpp) on hash_map,
// bloom_filter and the three queues (short and long runs), one process with 1, 2 and 4 cores,
// direct and am backends: forced each way (SHOAL_BCL_PATH) each container takes that path and their
// checks give the same results; auto follows a calibration file; a bad
// variable or file ends the job with status 2 naming it (file:line). Across
// processes: tests/bcl.cmake (bcl_path_*).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include <fmt/format.h>

#include "bcl_bloom_filter_checks.hpp"
#include "bcl_hash_map_checks.hpp"
#include "bcl_object_checks.hpp"
#include "bcl_queue_checks.hpp"
#include "test_support.hpp"

namespace {

using namespace bcl_hash_map_checks;
using shoal::bcl::path;
using shoal_test::run_to_death;
using ::testing::ExitedWithCode;

/// Every hash_map, bloom_filter and queue check, and 1 more wrong value for
/// each fresh container that did not take `want`.
u64 checks_on_path(path want) {
  u64 wrong = 0;
  map m = map::make(16);
  if (m.path() != want || m.find_only_path() != want) ++wrong;
  m.destroy();
  wrong += same_keys_from_every_core(100, 100);
  wrong += finds_during_inserts(60);
  wrong += full_parts_reported();
  wrong += update_replaces_value();
  wrong += local_inserts(100);
  shoal::bcl::bloom_filter<u64> f = shoal::bcl::bloom_filter<u64>::make(64);
  if (f.insert_path() != want || f.find_path() != want) ++wrong;
  f.destroy();
  wrong += bcl_bloom_filter_checks::same_values_from_every_core(100);
  using namespace bcl_queue_checks;
  wrong += queue_paths_are(want);
  // Short runs (1 to 3) among long ones (20): both forms of the delegate path at once.
  wrong += concurrent_push_pop<circular>(60, 48, 20) + concurrent_push_pop<checksum>(60, 48, 20);
  wrong += full_empty_and_wrap<circular>() + full_empty_and_wrap<checksum>();
  wrong += long_runs_full_empty<fast>() + long_runs_full_empty<circular>() +
           long_runs_full_empty<checksum>();
  wrong += fast_phases(50, 20) + phases_with_promises(50) + fast_drain_wraps();
  // Serialised values: the ring of serial_ptrs takes the path.
  wrong += bcl_object_checks::string_queue_push_pop(12) +
           bcl_object_checks::string_queue_push_pop<bcl_object_checks::string_checksum_queue>(12) +
           bcl_object_checks::vector_fast_queue_phases(12);
  return wrong;
}

class bcl_path : public shoal_test::backends_test {
 protected:
  void TearDown() override {
    unsetenv("SHOAL_BCL_PATH");
    unsetenv("SHOAL_BCL_CALIBRATION");
  }
};

TEST_P(bcl_path, ForcedOneSidedGivesTheResults) {
  setenv("SHOAL_BCL_PATH", "onesided", 1);
  each_backend([] { return checks_on_path(path::onesided); });
}

TEST_P(bcl_path, ForcedDelegateGivesTheSameResults) {
  setenv("SHOAL_BCL_PATH", "delegate", 1);
  each_backend([] { return checks_on_path(path::delegate); });
}

// Per process: the cases of one binary run in parallel under ctest.
std::string write_file(const std::string& name, const std::string& text) {
  const std::string file = ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
  std::ofstream(file) << text;
  return file;
}

// Under auto the table compares the file's costs: a cheap delegate (D = 1 ns)
// wins both ways, a dear one (D = 1 ms) loses both.
TEST_P(bcl_path, AutoFollowsTheCalibrationFile) {
  const std::string cheap = write_file("bcl_cheap_delegate.txt",
                                       "# test\ndirect R 10\ndirect W 10\ndirect A 10\n"
                                       "direct F 1\ndirect D 1\nam R 9 # comment\nam W 9\n"
                                       "am A 9\nam F 0\nam D 1\n");
  const std::string dear = write_file("bcl_dear_delegate.txt",
                                      "direct R 10\ndirect W 10\ndirect A 10\ndirect F 1\n"
                                      "direct D 1e6\nam R 9\nam W 9\nam A 9\nam F 0\nam D 1e6\n");
  setenv("SHOAL_BCL_PATH", "auto", 1);
  setenv("SHOAL_BCL_CALIBRATION", cheap.c_str(), 1);
  each_backend([] { return checks_on_path(path::delegate); });
  setenv("SHOAL_BCL_CALIBRATION", dear.c_str(), 1);
  each_backend([] { return checks_on_path(path::onesided); });
}

// fast_queue compares a push, A + W, against D (its pops are the host's
// local ones), the other queues a push and a pop against 2D. Under the rma
// figures of bench/results/bcl_costs.md (A 1795, W 168, R 1228, F 1447, D
// 2258 ns) fast_queue goes one-sided (1963 < 2258) and circular_queue
// delegate (10023 > 4516); with A = 3000 fast_queue goes delegate too.
std::string rma_figures(const char* name, int a) {
  std::string text;
  for (const char* b : {"direct", "am"})
    text += fmt::format("{0} R 1228\n{0} W 168\n{0} A {1}\n{0} F 1447\n{0} D 2258\n", b, a);
  return write_file(name, text);
}

u64 queue_paths(path want_fast, path want_circular) {
  using namespace bcl_queue_checks;
  fast f = fast::make(shoal::cores() - 1, 4);
  circular c = circular::make(shoal::cores() - 1, 4);
  const u64 wrong = (f.path() != want_fast ? 1 : 0) + (c.path() != want_circular ? 1 : 0);
  f.destroy();
  c.destroy();
  return wrong + fast_phases(20, 10);
}

TEST_P(bcl_path, AutoFastQueueWeighsAPushAgainstD) {
  const std::string push_onesided = rma_figures("bcl_push_onesided.txt", 1795);
  const std::string push_delegate = rma_figures("bcl_push_delegate.txt", 3000);
  setenv("SHOAL_BCL_PATH", "auto", 1);
  setenv("SHOAL_BCL_CALIBRATION", push_onesided.c_str(), 1);
  each_backend([] { return queue_paths(path::onesided, path::delegate); });
  setenv("SHOAL_BCL_CALIBRATION", push_delegate.c_str(), 1);
  each_backend([] { return queue_paths(path::delegate, path::delegate); });
}

SHOAL_TEST_CORES(bcl_path);

class bcl_path_errors : public shoal_test::death_test {};

void make_with(const char* mode, const char* file) {
  if (mode != nullptr) setenv("SHOAL_BCL_PATH", mode, 1);
  if (file != nullptr) setenv("SHOAL_BCL_CALIBRATION", file, 1);
  run_to_death(shoal_test::make_config(2), [] { map::make(8); });
}

TEST_F(bcl_path_errors, BadPathWordIsNamed) {
  EXPECT_EXIT(make_with("one-sided", nullptr), ExitedWithCode(2),
              "SHOAL_BCL_PATH: expected one of onesided, delegate, auto, got 'one-sided'");
}

TEST_F(bcl_path_errors, MissingCalibrationFileIsNamed) {
  EXPECT_EXIT(make_with(nullptr, "/nonexistent/bcl_calibration.txt"), ExitedWithCode(2),
              "SHOAL_BCL_CALIBRATION: cannot read '/nonexistent/bcl_calibration.txt'");
}

TEST_F(bcl_path_errors, MalformedLineIsNamedWithFileAndLine) {
  const std::string f = write_file("bcl_bad_line.txt", "# ok\ndirect R 10\ndirect W\n");
  EXPECT_EXIT(make_with(nullptr, f.c_str()), ExitedWithCode(2),
              "bcl_bad_line.txt:3: expected 3 fields, got 'direct W'");
  const std::string g = write_file("bcl_bad_number.txt", "direct R 10\n\ndirect A fast\n");
  EXPECT_EXIT(make_with(nullptr, g.c_str()), ExitedWithCode(2),
              "bcl_bad_number.txt:3: 'fast' is not a number of nanoseconds");
  const std::string h = write_file("bcl_bad_op.txt", "direct X 10\n");
  EXPECT_EXIT(make_with(nullptr, h.c_str()), ExitedWithCode(2), "bcl_bad_op.txt:1: unknown op 'X'");
}

TEST_F(bcl_path_errors, MissingFigureForTheBackendIsNamed) {
  const std::string f = write_file("bcl_no_d.txt",
                                   "direct R 1\ndirect W 1\ndirect A 1\n"
                                   "direct F 1\nam D 5\n");
  EXPECT_EXIT(make_with(nullptr, f.c_str()), ExitedWithCode(2),
              "bcl_no_d.txt: no figure for op D of backend direct");
}

}  // namespace
