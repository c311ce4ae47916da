// Fibers: the one place that touches Boost.Context. Making a fiber, switching
// between fibers and the first entry into one are all here, so that whatever
// must happen at a switch (the sanitizer annotations of fiber_sanitizer.hpp)
// lands in one spot. Nothing outside src/tasks/ includes this header.
//
// Protocol. Every switch passes the switching fiber's record as the data
// word; the fiber that resumes stores the context it was handed into that
// record. So a stopped fiber's `ctx` is always where it can be resumed, and
// each switch is a single jump_fcontext.
#pragma once

#include <cstddef>

#include <boost/context/detail/fcontext.hpp>

#include "tasks/fiber_sanitizer.hpp"

namespace shoal::detail {

/// A stopped execution context: a worker's, or the scheduler loop's on the
/// core's OS thread stack. Only valid while that fiber is not running.
struct fiber {
  boost::context::detail::fcontext_t ctx = nullptr;
  [[no_unique_address]] fiber_marks marks;  // sanitizer bookkeeping (empty otherwise)
};

/// Saves the running context in `from` and resumes `to`. Returns when some
/// fiber switches back to `from`.
inline void switch_fiber(fiber& from, const fiber& to) noexcept {
  fiber_leave(from.marks, to.marks);
  const auto t = boost::context::detail::jump_fcontext(to.ctx, &from);
  fiber_arrived(from.marks);
  static_cast<fiber*>(t.data)->ctx = t.fctx;
}

/// Where a new fiber starts: completes the switch that entered it, then runs
/// Start, which must never return. Start's first act is fiber_arrived() on
/// its own fiber's marks (only Start knows which fiber it is).
template <void (*Start)()>
void fiber_entry(boost::context::detail::transfer_t t) {
  static_cast<fiber*>(t.data)->ctx = t.fctx;
  Start();
  __builtin_trap();
}

/// A fiber that runs Start on the stack that ends (grows down from) at
/// `top`, `bytes` long, the first time it is switched to.
template <void (*Start)()>
fiber make_fiber(void* top, std::size_t bytes) noexcept {
  fiber f;
  f.ctx = boost::context::detail::make_fcontext(top, bytes, &fiber_entry<Start>);
  fiber_created(f.marks, static_cast<char*>(top) - bytes, bytes);
  return f;
}

}  // namespace shoal::detail
