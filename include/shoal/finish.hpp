// finish(f): the safe way to wait for dynamic work (X10's finish, UPC++'s
// finish). f runs in the calling task; finish returns when f and everything
// it started, transitively, anywhere in the job, has completed.
//
// What a scope counts. While a task runs inside a scope, every spawn (all
// modes, including tasks stolen by other processes) and every send it makes
// (so every delegate, blocking or async, and on_all_cores, forall, ...) is
// enrolled in the scope and carries its id; the task or handler it starts
// runs inside the scope too, and the scope completes the unit when that task
// ends or that handler returns. So the whole tree is counted, however deep
// and wherever it runs, with no counting by the user.
//
// What it does not count. Values sent on a typed channel carry no scope
// (they are bare payloads): their handlers run outside it. End a channel's
// traffic with a channel phase (channel.hpp). Work started by the runtime
// itself (control messages) is not counted either. OS threads outside shoal
// are not tasks.
//
// Pitfall it replaces. Counting a tree by hand with a completion_event
// (`complete_at(home, e, 1 - k)`: each node adjusts the count by its number
// of children minus itself) is wrong in rare runs: a child's completion can
// reach the home core before its parent's adjustment, the count touches
// zero early, and wait() returns with the tree unfinished (the issue saw 1-2
// in 5,000 runs). A scope cannot be fooled this way: a unit is enrolled
// before the work it counts is started, so the job-wide sums can only agree
// when nothing is outstanding (global_completion_event.hpp).
//
// Cost. One global_completion_event per scope (an id from rank 0: free on
// rank 0, one delegate round trip on other ranks; at most
// detail::max_events scopes and events alive at once). Inside a scope, one
// counter store per spawn, message and task end, and 4 bytes more per
// message. Outside scopes: one lookup and branch per spawn and send. The wait
// is global_completion_event::wait() (waves on several processes).
#pragma once

#include "shoal/detail/core_state.hpp"
#include "shoal/detail/finish_scope.hpp"
#include "shoal/global_completion_event.hpp"

#include <cstdint>
#include <utility>

namespace shoal {

namespace detail {
// Restores the task's scope when f returns or throws.
struct scope_guard {
  worker* w;
  std::uint32_t outer;
  ~scope_guard() { w->task.scope = outer; }
};
}  // namespace detail

/// Runs f() in the calling task inside a new finish scope, then suspends
/// until everything f started (spawns and sends, transitively, on any core
/// of the job) has completed. Scopes nest: an inner finish waits for its own
/// work only. Blocking; worker (task) only, on any process.
template <class F>
void finish(F&& f) {
  SHOAL_CHECK(detail::tls_core_state != nullptr && detail::in_worker(),
              "shoal::finish outside a task (it suspends)");
  global_completion_event scope;
  {
    detail::worker* w = detail::current_worker();
    detail::scope_guard guard{w, w->task.scope};
    w->task.scope = scope.id();
    std::forward<F>(f)();
  }
  scope.wait();
}

}  // namespace shoal
