// The end of a run in a job of one process: the root task has finished and
// the process is quiescent (every core idle, no watched condition pending,
// every delivered buffer processed), seen the same way twice in a row.
// In a job of several processes the termination waves (termination_waves.hpp)
// build on the same local check.
#pragma once

#include <cstdint>

#include "runtime/runtime_state.hpp"

namespace shoal::detail {

/// Whether every core of the process was idle when last seen. Any thread.
bool all_idle(const runtime_state& rt);

/// One look at local quiescence; true when this look and the one before it
/// (which left `signature`) both saw the process quiet with the same count of
/// delivered buffers. Any thread (run()'s main thread).
bool quiescent_once(const runtime_state& rt, std::uint64_t& signature);

/// Ends the job when tasks wait for a worker that can never come: every
/// worker of some core is suspended and the cap forbids more. Call when the
/// process is quiescent.
void fail_if_starved(const runtime_state& rt);

/// The sum of every core's progress counter (monotonic). Any thread.
std::uint64_t total_progress(const runtime_state& rt);

/// Returns once the root task has ended and the process is quiescent; runs
/// the watchdog meanwhile (--watchdog-s). run()'s main thread, one process.
void wait_quiescent(runtime_state& rt);

}  // namespace shoal::detail
