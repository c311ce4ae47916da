// global_completion_event: job-wide completion of asynchronous work
// (Grappa's GlobalCompletionEvent). A unit of work is enrolled on the core
// that starts it and completed on whichever core of whichever process
// finishes it; wait() returns once every unit enrolled anywhere in the job
// has completed. An async delegate therefore needs no reply message at all.
//
// Naming. An event is an id, the same in every process: ids come from rank 0
// (locally there, one delegate round trip from other ranks) and go back to it
// when the owning object is destroyed. The owning object stays where it was
// made; what travels is its completion_ref, a 4-byte trivially copyable
// handle that closures carry to any core or process. default_gce() is id 0 on
// every process: one job-wide event.
//
// Counters. Each core of each process keeps, per id, two monotonic counters
// (enrolled, completed), written only by that core (detail/completion_slots).
// They are never reset: only the job-wide totals matter, so a reused id is
// harmless (leftover units of an earlier owner can only make a wait longer,
// never shorter).
//
// Why wait() is right. A unit's completion happens after its enrolment (it
// is caused by it), so at every instant the job-wide completed total is at
// most the enrolled total. One process: done() reads every core's
// `completed`, then every core's `enrolled`; equal sums mean nothing was
// outstanding at the instant between the passes (the four-counter argument).
// Several processes: wait() runs waves; wave k asks one core per process to
// sum its process's counters, and collects (E_k, C_k). Every read of wave
// k-1 precedes every read of wave k, so for an instant T between them,
// C_{k-1} <= C(T) <= E(T) <= E_k by monotonicity; C_{k-1} == E_k therefore
// means C(T) == E(T): nothing outstanding at T, and wait() returns.
//
// Cost. enroll/complete: one store to the caller's own cache line (no
// message, no atomic read-modify-write). wait() on one process: the calling
// worker is suspended and re-checks at its core's polls (2 x cores loads).
// On P processes: at least two waves of 2 x (P - 1) control messages each,
// with a back-off between unbalanced waves (20 us doubling to 1 ms) during
// which the waiter is suspended and its core runs other work.
//
// Memory model. What a unit wrote before complete() is visible, after
// wait() returns, to the waiter (same process) and to whatever the waiter
// then reads by delegate or message (its request runs after the wave that
// saw the completion). Channel values are not units: see channel phases.
//
// No per-process variant. enroll/complete cost the same either way (one
// store), and on one process wait() is the same two-pass check; a
// process-local event would only save the waves of a multi-process wait()
// (about 11 us for an empty wait at 2 x 1), and would be right only when
// every unit completes in the waiter's process: the trap default_gce() used
// to be. For counting on one core, completion_event (completion_event.hpp)
// is cheaper still. For counting dynamic work, use finish (finish.hpp).
#pragma once

#include "shoal/detail/completion_slots.hpp"

#include <cstdint>

namespace shoal {

namespace detail {
void event_wait(std::uint32_t id);
bool event_done(std::uint32_t id);
}  // namespace detail

/// A trivially copyable handle of a global_completion_event: capture it in
/// closures that run on other cores or processes. Valid while the event
/// that gave it lives. enroll/complete: any task or handler on any core of
/// the job; never block; cost one store on the caller's core.
class completion_ref {
 public:
  /// The handle of default_gce().
  constexpr completion_ref() noexcept = default;
  explicit constexpr completion_ref(std::uint32_t id) noexcept : id_(id) {}

  /// Adds `n` units of outstanding work, counted on the calling core.
  void enroll(std::int64_t n = 1) const noexcept { detail::event_enroll(id_, n); }
  /// Retires `n` units, counted on the calling core (any core of the job).
  void complete(std::int64_t n = 1) const noexcept { detail::event_complete(id_, n); }
  /// global_completion_event::wait() from any task of the job, e.g. every
  /// core of an SPMD phase waiting on the root's event. Blocking.
  void wait() const { detail::event_wait(id_); }
  /// The event's job-wide id.
  constexpr std::uint32_t id() const noexcept { return id_; }

 private:
  std::uint32_t id_ = 0;
};

class global_completion_event {
 public:
  /// Makes a new event (claims a job-wide id). On rank 0: any context after
  /// init(), before run() included; on other ranks: a task only (one
  /// blocking delegate round trip to rank 0). At most detail::max_events
  /// events live at once in the job (a clear error beyond).
  global_completion_event();
  /// Gives the id back (to rank 0: a control message from other ranks, which
  /// must destroy their events inside run()). Destroying an event with work
  /// outstanding is allowed: a later event with the same id waits for it.
  ~global_completion_event();
  global_completion_event(const global_completion_event&) = delete;
  global_completion_event& operator=(const global_completion_event&) = delete;

  /// The handle closures carry; completion_ref converts implicitly.
  completion_ref ref() const noexcept { return completion_ref(id_); }
  operator completion_ref() const noexcept { return ref(); }  // NOLINT: by design

  /// Adds `n` units on the calling core. Any task or handler. Never blocks.
  void enroll(std::int64_t n = 1) const noexcept { ref().enroll(n); }
  /// Retires `n` units on the calling core (any core). Never blocks.
  void complete(std::int64_t n = 1) const noexcept { ref().complete(n); }

  /// Suspends the calling worker until every unit enrolled anywhere in the
  /// job has completed (see the protocol above). Flushes this core's staged
  /// messages first. Worker only; any core of any process; several workers
  /// may wait on one event at once.
  void wait() const { detail::event_wait(id_); }

  /// Whether nothing is outstanding job-wide, now. One process: the two-pass
  /// check, never suspends (any context on a core). Several processes: two
  /// waves (worker only; suspends for two round trips).
  bool done() const { return detail::event_done(id_); }

  std::uint32_t id() const noexcept { return id_; }

  /// For init() only: the id-0 object behind default_gce().
  static global_completion_event* make_default();

 private:
  struct default_tag {};
  explicit global_completion_event(default_tag) noexcept : id_(0) {}

  std::uint32_t id_;
};

/// The job-wide event async delegates use when no other is given: id 0,
/// the same event on every process. Made by init().
global_completion_event& default_gce() noexcept;

}  // namespace shoal
