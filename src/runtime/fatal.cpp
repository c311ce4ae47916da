#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/exit_status.hpp"
#include "shoal/runtime.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

#include "transport/transport.hpp"

namespace shoal::detail {
namespace {

// One message even when several cores fail at once: the first caller
// prints and ends the process; later ones wait for that.
[[noreturn]] void die(const std::string& line, int status = exit_status::fatal) {
  static std::atomic_flag dying = ATOMIC_FLAG_INIT;
  // Seq_cst (default), kept: a once-only gate on the dying path; cost is moot.
  if (dying.test_and_set()) {
    for (;;) pause();
  }
  std::fflush(stdout);  // what the program printed comes before the message
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  // Across processes: end every rank of the job, not only this one. The
  // launcher forwards a rank's stderr through a pipe, and MPICH's (hydra)
  // drops what it has not forwarded yet when the job is aborted: give it a
  // moment, so that the message is seen (measured: lost about 1 run in 350).
  if (transport* t = current_transport(); t != nullptr && t->ranks() > 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    t->abort(status);
  }
  std::_Exit(status);
}

std::string where() {
  if (tls_core >= 0) return fmt::format("rank {} core {}", g_info.rank, tls_core);
  return fmt::format("rank {}", g_info.rank);
}

}  // namespace

void fatal(const std::string& what, const char* file, int line) {
  die(fmt::format("shoal: fatal on {}: {} ({}:{})\n", where(), what, file, line));
}

void fatal_user(const std::string& what) {
  die(fmt::format("shoal: fatal on {}: {}\n", where(), what));
}

void fatal_outside_run(const char* api) {
  fatal_user(fmt::format("{} called outside shoal::run() (no shoal core on this thread)", api));
}

}  // namespace shoal::detail

namespace shoal {

void abort_job(const std::string& message, int status) { detail::die(message + "\n", status); }

void leave_job(const std::string& message, int status) {
  std::fflush(stdout);
  if (initialized()) finalize();
  detail::transport* t = detail::current_transport();
  if (t != nullptr && t->ranks() > 1) {
    t->leave(status, message);  // rank 0 prints the messages
  } else if (!message.empty()) {
    std::fprintf(stderr, "%s\n", message.c_str());
  }
  std::fflush(stderr);
  std::exit(status);
}

}  // namespace shoal
