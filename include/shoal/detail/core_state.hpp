// The thin inline face of a core's scheduler. Inline code (spawn, the finish
// scope lookup, future states, the sync primitives) touches only this: the
// running worker, the private task queue, the block pool and the counters.
// The scheduler (src/tasks/scheduler.hpp) derives from core_state; its ready
// queue, deques, idle policy and fibers stay out of line, and so does every
// call below that switches context (suspend, yield) or wakes a worker.
//
// Why spawn and the scope lookup stay inline: they cost a few nanoseconds, and
// through a call the 80-byte task is first built in memory and then copied
// (measured for issue 17: a local spawn 2-7 ns inline, 6-30 ns through a
// call). Suspend, yield and wake end in (or lead to) a context switch, which
// dwarfs a call, so they are out of line with the rest of the scheduler.
#pragma once

#include "shoal/detail/inline_task.hpp"
#include "shoal/detail/small_pool.hpp"
#include "shoal/detail/task_fifo.hpp"
#include "shoal/detail/worker.hpp"
#include "shoal/stats.hpp"

#include <cstdint>

namespace shoal::detail {

/// State of one core that inline fast paths read and write. Owning core
/// only; made and destroyed by the scheduler that derives from it.
struct core_state {
  /// The running worker; null in the scheduler's own context (handlers,
  /// progress hooks).
  worker* current = nullptr;
  /// Tasks spawned on this core for this core only (spawn<local>), FIFO.
  task_fifo private_tasks;
  /// Fixed-size blocks (future states) of this core; lives until finalize().
  small_pool pool;
  core_stats stats;

 protected:
  core_state() = default;
  ~core_state() = default;
};

/// The core state of the calling OS thread; null outside shoal's cores.
inline thread_local core_state* tls_core_state = nullptr;

/// The calling core's state. Shoal cores only (check with tls_core_state).
inline core_state& this_core() noexcept { return *tls_core_state; }

/// Whether the caller runs in a worker (a task), not in a handler. Shoal cores only.
inline bool in_worker() noexcept { return tls_core_state->current != nullptr; }

/// The running worker; null in a handler. Shoal cores only.
inline worker* current_worker() noexcept { return tls_core_state->current; }

/// Queues `t` on this core's private queue (spawn<local>). Never allocates in
/// a steady state (the queue recycles its chunks).
inline void spawn_private(const inline_task& t) {
  core_state& c = this_core();
  ++c.stats.tasks_spawned;
  c.private_tasks.push(t);
}

/// Queues `t` on this core's public deque: idle cores of this process may
/// steal it (spawn<stealable>).
void spawn_public(const inline_task& t);

/// Queues `t` where cores of any process may steal it (spawn<anywhere>).
void spawn_movable(const inline_task& t);

/// Requeues the running worker at the tail and runs others. Worker only.
void yield_worker();

/// Parks the running worker until wake(); `why` names what it waits for
/// and `tag` (when not -1) which one: the watchdog prints "why #tag"
/// (in hex from 2^32 up: an address, see address_tag). Worker only.
void suspend(const char* why, std::int64_t tag = -1);

/// Makes a suspended worker of this core runnable. Owning core only.
void wake(worker* w);

/// A suspend() tag naming an object by its address (the watchdog prints it
/// in hex: "mutex #0x7f...").
inline std::int64_t address_tag(const void* p) noexcept {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p));
}

/// Set by code that may have made a watched condition true; the aggregator
/// turns it into a nudge of the watching cores once per batch.
inline thread_local bool tls_nudge = false;

}  // namespace shoal::detail
