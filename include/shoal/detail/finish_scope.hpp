// The finish scope of the running code (see finish.hpp). A task carries its
// scope in its inline_task (set by spawn, completed by the scheduler when
// the task ends); a handler of a message sent inside a scope runs with
// tls_handler_scope set by the wrapper below. Outside any scope both are 0
// and the cost of a spawn or send is the lookup and one branch.
#pragma once

#include "shoal/detail/completion_slots.hpp"
#include "shoal/detail/core_state.hpp"

#include <cstdint>

namespace shoal::detail {

/// The scope of the handler running now on this core (0: none).
inline thread_local std::uint32_t tls_handler_scope = 0;

/// The scope work started now would belong to: the running task's, or the
/// running handler's; 0 outside shoal's cores or outside any scope.
inline std::uint32_t current_scope() noexcept {
  const core_state* c = tls_core_state;
  if (c == nullptr) return 0;
  const worker* w = c->current;
  return w != nullptr ? w->task.scope : tls_handler_scope;
}

/// A closure message sent inside a scope: counted in the scope from send to
/// the end of its handler, which runs inside the scope.
template <class F>
struct scoped_closure {
  F f;
  std::uint32_t scope;

  void operator()() {
    const std::uint32_t outer = tls_handler_scope;
    tls_handler_scope = scope;
    f();
    tls_handler_scope = outer;
    event_complete(scope, 1);
  }
};

}  // namespace shoal::detail
