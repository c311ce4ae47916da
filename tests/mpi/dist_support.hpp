// Shared main() and job shape for the distributed gtest programs
// tests/mpi/dist_*.cpp (run by tests/CMakeLists.txt under mpirun at
// 1 x 2, 2 x 2 and 3 x 2 processes x cores).
//
//   mpirun -np R dist_<name> --cores C [gtest flags]
//
// Every rank runs every TEST in the same order (init, run and finalize are
// collective). The root task runs on rank 0 only: results it computes are
// checked after run() on rank 0 only; other ranks pass a test unless
// something fails there (their failures are printed with the rank). A file
// includes this header once and ends with SHOAL_DIST_MAIN().
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <unistd.h>

#include "test_support.hpp"

namespace shoal_dist {

/// Shape of the job, known on every rank before the first test.
inline int g_cores_per_rank = 1;
inline int g_rank = 0;
inline int g_ranks = 1;

inline int job_cores() { return g_cores_per_rank * g_ranks; }
inline bool rank0() { return g_rank == 0; }
/// The runtime's SHOAL_* variables (tests of a setting run every program
/// under it: tests/node_messages.cmake), with this job's cores.
inline shoal::config job_config() {
  char name[] = "dist";
  char* argv[] = {name, nullptr};
  int argc = 1;
  shoal::config c = shoal::config::parse(argc, argv, environ);
  c.cores = g_cores_per_rank;
  return c;
}

/// init, run(root) under a watchdog with the teardown check, finalize; on
/// every rank.
template <class F>
void run_job(F&& root) {
  shoal_test::run_checked(job_config(), root);
}

/// On ranks other than 0: failures only, prefixed with the rank.
class rank_failure_printer : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", g_rank,
                 r.file_name() != nullptr ? r.file_name() : "?", r.line_number(), r.message());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] [  FAILED  ] %s.%s\n", g_rank, info.test_suite_name(),
                   info.name());
  }
};

/// --cores N (or --cores=N) per rank, then gtest on every rank.
inline int distributed_main(int argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--cores" && i + 1 < argc) {
      g_cores_per_rank = std::atoi(argv[++i]);
    } else if (arg.starts_with("--cores=")) {
      g_cores_per_rank = std::atoi(argv[i] + 8);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (g_cores_per_rank < 1 || g_cores_per_rank > 64) {
    std::fprintf(stderr, "%s: --cores wants a count in [1, 64]\n", argv[0]);
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(shuffle) && GTEST_FLAG_GET(random_seed) == 0) GTEST_FLAG_SET(random_seed, 1);
  shoal::init(job_config());
  g_rank = shoal::myrank();
  g_ranks = shoal::ranks();
  shoal::finalize();
  if (g_rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new rank_failure_printer);
  }
  return RUN_ALL_TESTS();
}

}  // namespace shoal_dist

#define SHOAL_DIST_MAIN() \
  int main(int argc, char** argv) { return shoal_dist::distributed_main(argc, argv); }
