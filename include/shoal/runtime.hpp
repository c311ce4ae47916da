// Starting and stopping shoal, and who am I.
//
//   int main(int argc, char** argv) {
//     shoal::init(argc, argv);            // parses and removes shoal's flags
//     shoal::run([] { /* root task on core 0 */ });
//     shoal::finalize();
//   }
#pragma once

#include "shoal/config.hpp"
#include "shoal/detail/inline_task.hpp"
#include "shoal/detail/process_info.hpp"

#include <exception>
#include <string>
#include <utility>

namespace shoal {

/// Parses shoal's flags and SHOAL_* variables (removing the flags from argv),
/// validates them and sets the runtime up. On a bad value prints
/// "shoal: error: <flag>: <what> ..." and exits with status 2 before anything
/// starts. `--help-shoal` prints every flag with its environment variable,
/// default and range, and exits. Call once per process from main, before run().
void init(int& argc, char** argv);

/// Sets the runtime up from an explicit configuration (tests, embedding).
/// Throws config_error when it does not validate.
void init(const config& cfg);

/// Runs `root` as a task on core 0 and returns once it has finished and the
/// job is quiescent (no runnable task, no message in flight). Blocking; call
/// from main (not from a task), any number of times between init() and
/// finalize(). An exception escaping `root` is rethrown here; one escaping
/// any other task ends the job with a message.
template <class F>
void run(F&& root);

/// Prints --stats, tears the runtime down. After it, init() may be called
/// again (with a different configuration).
void finalize();

/// Prints `message` (one line, newline added) on stderr and ends the whole
/// job with exit status `status`: every rank, promptly. For errors found by
/// the program (bad input) on any rank, from any thread. Never returns.
[[noreturn]] void abort_job(const std::string& message, int status);

/// Ends this process with exit status `status` because of `message` (an
/// error this rank found before or between runs, such as a bad command
/// line; empty for none). In a job of several processes, every rank must
/// leave the same way (any exit, at the same count of run() calls): then
/// rank 0 prints each different message once and every rank exits with its
/// status. When the other ranks go on instead, the job is ended within
/// seconds (or --join-s) with `message`, naming this rank. Main thread, not
/// inside run(). Never returns.
[[noreturn]] void leave_job(const std::string& message, int status);

/// Whether init() has run and finalize() has not.
bool initialized() noexcept;

/// The effective configuration.
const config& current_config() noexcept;

/// Global id of the calling core, in [0, cores()).
inline int mycore() noexcept { return detail::tls_core; }
/// Cores in the job (all processes).
inline int cores() noexcept { return detail::g_info.total_cores; }
/// This process's rank, in [0, ranks()).
inline int myrank() noexcept { return detail::g_info.rank; }
/// Processes in the job.
inline int ranks() noexcept { return detail::g_info.ranks; }
/// Cores of this process.
inline int local_cores() noexcept { return detail::g_info.local_cores; }
/// Rank that owns global core `core`.
inline int rank_of(int core) noexcept { return core / detail::g_info.local_cores; }

namespace detail {
/// Runs the root task; returns its exception, if any.
std::exception_ptr run_root(const inline_task& root);

/// State left behind by the last run, for teardown checks in tests.
struct teardown_report {
  std::size_t live_workers = 0;  // workers still suspended
  std::size_t queued_tasks = 0;  // tasks never run
  std::size_t buffers_out = 0;   // aggregation buffers not back in their pools
};
teardown_report last_teardown() noexcept;
}  // namespace detail

template <class F>
void run(F&& root) {
  auto* fp = &root;
  std::exception_ptr e = detail::run_root(detail::inline_task::make([fp] { (*fp)(); }));
  if (e) std::rethrow_exception(e);
}

}  // namespace shoal
