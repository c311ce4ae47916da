// The watchdog (--watchdog-s, 60 s by default): ends the job when every core
// has been idle, without any progress, for that long while the job is
// unfinished (a deadlock: all workers suspended on something that will not
// happen). A task computing, even without yielding, keeps its core busy, and
// in a job of several processes one busy core anywhere keeps every rank's
// watchdog quiet (the termination waves carry busy and progress), so a long
// computation never trips it. The report names each core's waits ("why #tag").
#pragma once

#include <chrono>
#include <cstdint>

#include "runtime/runtime_state.hpp"

namespace shoal::detail {

class watchdog {
 public:
  /// Starts the clock now. run()'s main thread.
  explicit watchdog(const runtime_state& rt);

  /// Looks at this process's cores (a job of one process).
  void check();

  /// `now`: a progress count (monotonic); `idle`: whether nothing computes.
  /// In a job of several processes both are job-wide (summed over ranks).
  /// Ends the job with the report when nothing has moved for --watchdog-s.
  void check(std::uint64_t now, bool idle);

 private:
  using clock = std::chrono::steady_clock;
  const runtime_state& rt_;
  std::uint64_t last_;
  clock::time_point since_ = clock::now();
};

}  // namespace shoal::detail
