// Spawning tasks and yielding. Tasks are closures of at most max_task_bytes
// (64), trivially copyable (task_like constrains spawn), run by lightweight workers of the core
// they land on.
#pragma once

#include "shoal/detail/core_state.hpp"
#include "shoal/detail/finish_scope.hpp"
#include "shoal/detail/inline_task.hpp"

namespace shoal {

/// Where a spawned task may run.
enum class task_mode {
  local,      ///< on the spawning core only (private queue, FIFO)
  stealable,  ///< on this core or any core of this process that steals it
  anywhere,   ///< on any core of the job: also stolen by other processes
};
inline constexpr task_mode local = task_mode::local;
inline constexpr task_mode stealable = task_mode::stealable;
inline constexpr task_mode anywhere = task_mode::anywhere;

/// Queues `f` to run as a new task. Returns at once; no allocation.
/// Callable from any task or handler. `spawn<stealable>(f)` lets idle cores
/// of this process steal it; `spawn<anywhere>(f)` also lets idle cores of
/// other processes steal it (by message: a steal request to a random victim
/// takes half of its queue), so f must capture only values and global
/// pointers, like a message. The default keeps f on this core. Inside a
/// finish scope the task is counted in it until it ends, and runs in it.
template <task_mode Mode = task_mode::local, task_like F>
void spawn(const F& f) {
  SHOAL_CHECK_ON_CORE("shoal::spawn");
  detail::inline_task t = detail::inline_task::make(f);
  if (const std::uint32_t scope = detail::current_scope(); scope != 0) [[unlikely]] {
    t.scope = scope;
    detail::event_enroll(scope, 1);
  }
  if constexpr (Mode == task_mode::anywhere) {
    detail::spawn_movable(t);
  } else if constexpr (Mode == task_mode::stealable) {
    detail::spawn_public(t);
  } else {
    detail::spawn_private(t);
  }
}

/// Lets other workers of this core run; the caller continues later. Worker only.
inline void yield() {
  SHOAL_CHECK_ON_CORE("shoal::yield");
  detail::yield_worker();
}

}  // namespace shoal
