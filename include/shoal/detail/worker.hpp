// A worker: a stackful fiber that runs tasks, switched with Boost.Context's
// fcontext. The worker record lives at the top of its own stack; below the
// stack sits a guard region, so an overflow faults instead of corrupting a
// neighbour (see stack_pool). Workers never migrate between cores.
#pragma once

#include "shoal/detail/fiber_sanitizer.hpp"
#include "shoal/detail/inline_task.hpp"

#include <cstddef>
#include <cstdint>

#include <boost/context/detail/fcontext.hpp>

namespace shoal::detail {

using fcontext = boost::context::detail::fcontext_t;

struct worker {
  fcontext ctx = nullptr;       // saved context while not running
  inline_task task;             // the task this worker runs next / is running
  worker* next = nullptr;       // intrusive link for wait lists and the idle list
  char* stack_lo = nullptr;     // lowest usable stack byte (guard lies below)
  std::size_t stack_bytes = 0;  // usable stack size
  const char* waiting_on = "";  // what a suspended worker waits for (watchdog, debugging)
  std::int64_t waiting_tag = -1;  // which one of them (a sequence number, an id), or -1
  int core = 0;                 // local core index that owns it
  bool suspended = false;       // suspended and not in the ready queue
  [[no_unique_address]] fiber_marks marks;  // sanitizer bookkeeping (empty otherwise)
};

/// Switches from the running context to `to`, saving the current context in
/// `*save`. Whoever switches back to us stores *their* context where we told
/// them (the data word carries the slot), so every jump is one call.
/// `from_marks` and `to_marks` describe the two stacks to the sanitizers.
inline void jump(fcontext* save, fcontext to, fiber_marks& from_marks,
                 const fiber_marks& to_marks) noexcept {
  fiber_leave(from_marks, to_marks);
  auto t = boost::context::detail::jump_fcontext(to, save);
  fiber_arrived(from_marks);
  *static_cast<fcontext*>(t.data) = t.fctx;
}

}  // namespace shoal::detail
