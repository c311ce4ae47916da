// The exit statuses of a shoal program (and of the launcher, which passes on
// the status a job was aborted with), so that a script can tell a wrong
// answer from a bad command line from a broken run.
#pragma once

namespace shoal::exit_status {

/// The run finished and validated.
inline constexpr int ok = 0;
/// The run finished but its result did not validate (the apps' check).
inline constexpr int failed_validation = 1;
/// Bad input: a flag, a file, a configuration, mismatched ranks. The
/// message names what was wrong and where.
inline constexpr int usage = 2;
/// The runtime gave up: a deadlock or the watchdog, a lost or stopped rank,
/// a crash signal, a broken internal check.
inline constexpr int fatal = 3;

}  // namespace shoal::exit_status
