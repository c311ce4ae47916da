// global_completion_event: job-wide completion of asynchronous work
// (Grappa's GlobalCompletionEvent). Work is enrolled on the core that starts
// it and completed on whichever core finishes it, so an async delegate needs
// no reply message at all.
//
// An event lives in the process that created it (enroll and wait there).
// Work it counts may run on any core of the job: completions on another
// process come back to the enrolling core by message (async delegates do
// this for you), so wait() covers work wherever it ran.
//
// Protocol. Each core keeps two monotonic counters for the event, enrolled
// and completed, written only by that core. done() reads every core's
// `completed`, then every core's `enrolled`; because a unit's enrolment
// happens before its completion, the sums can be equal only if no unit was
// outstanding at the moment between the two passes (the four-counter
// argument). The event is reusable: counters are never reset. A worker in
// wait() is suspended and woken by its core's scheduler when done() holds;
// completing cores nudge a sleeping waiter core once per batch.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace shoal {

class global_completion_event {
 public:
  /// Creates an event usable from every core of the process. Any context
  /// after init(); enroll/complete/wait are for tasks and handlers only.
  global_completion_event();
  ~global_completion_event();
  global_completion_event(const global_completion_event&) = delete;
  global_completion_event& operator=(const global_completion_event&) = delete;

  /// Adds `n` units of outstanding work on the calling core. Never blocks.
  void enroll(std::int64_t n = 1) noexcept { bump(counters_[local()].enrolled, n); }

  /// Retires `n` units on the calling core (any core). Never blocks.
  void complete(std::int64_t n = 1) noexcept;

  /// Suspends the calling worker until every unit enrolled anywhere has
  /// completed. Flushes this core's staged messages first.
  void wait();

  /// Whether nothing is outstanding (see the protocol above).
  bool done() const noexcept;

 private:
  struct alignas(64) counters {
    std::atomic<std::uint64_t> enrolled{0};
    std::atomic<std::uint64_t> completed{0};
  };

  static int local() noexcept {
    SHOAL_ASSERT(detail::tls_core >= 0, "global_completion_event used outside a shoal core");
    return detail::tls_core - detail::g_info.rank_base;
  }
  static void bump(std::atomic<std::uint64_t>& c, std::int64_t n) noexcept {
    // Single writer (the owning core); release publishes what led to it.
    c.store(c.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(n),
            std::memory_order_release);
  }

  std::unique_ptr<counters[]> counters_;
  int cores_;
  std::atomic<int> waiters_{0};  // workers in wait(); completions nudge while any
};

/// The event async delegates use when no other is given. Created by init().
global_completion_event& default_gce() noexcept;

}  // namespace shoal
