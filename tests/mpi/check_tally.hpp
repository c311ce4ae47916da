// What the MPI check jobs (one_sided_job, bcl_job) share: a tally of named
// checks, each returning the wrong values it saw, and the one-line verdict
// rank 0 prints at the end ("<what> <backend>: <k> checks, <w> wrong values
// [in <names>]: PASSED|FAILED"), which the tests match.
#pragma once

#include "shoal/shoal.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace shoal_test {

struct check_tally {
  int checks = 0;
  std::uint64_t wrong = 0;
  std::string which;  ///< names of the checks that saw wrong values

  void note(const char* name, std::uint64_t w) {
    ++checks;
    wrong += w;
    if (w != 0) which += std::string(" ") + name;
  }

  /// Prints the verdict on rank 0, finalizes shoal and returns the exit
  /// status (1 on rank 0 when a check failed).
  int report_and_finalize(const char* what, const std::string& backend) const {
    int status = 0;
    if (shoal::myrank() == 0) {
      std::printf("%s %s: %d checks, %llu wrong values%s%s: %s\n", what, backend.c_str(), checks,
                  static_cast<unsigned long long>(wrong), which.empty() ? "" : " in", which.c_str(),
                  wrong == 0 ? "PASSED" : "FAILED");
      std::fflush(stdout);
      status = wrong == 0 ? 0 : 1;
    }
    shoal::finalize();
    return status;
  }
};

}  // namespace shoal_test
