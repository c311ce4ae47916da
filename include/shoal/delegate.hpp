// Delegate operations (Grappa section 4): instead of moving data to the
// computation, send the operation to the core that owns the data. The
// operation runs there in handler context, to completion and without
// suspending, so it is atomic with respect to every other delegate on that
// core without hardware atomics. When the data is on the calling core the
// operation runs immediately (no message).
//
// Names tell cost and completion:
//   call, read, write, fetch_add, compare_and_swap: blocking; suspend the
//     calling worker for one round trip (two messages), return the result.
//   async_call, async_read, async_fetch_add, async_compare_and_swap: return
//     at once with a future of the result (two messages).
//   post, async_write, async_add: return at once, no reply (one message);
//     they enroll in a global_completion_event (default_gce() unless given),
//     completed where the operation ran, whatever the process, since an
//     event is job-wide (global_completion_event.hpp).
// Every f is message_handler_like (closure.hpp) and must not suspend.
#pragma once

#include "shoal/detail/core_state.hpp"
#include "shoal/future.hpp"
#include "shoal/global_completion_event.hpp"
#include "shoal/global_ptr.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"

#include <cstring>
#include <type_traits>

namespace shoal::delegate {

namespace detail {
template <class R>
struct reply_slot {
  alignas(shoal::detail::stored_t<R>) unsigned char value[sizeof(shoal::detail::stored_t<R>)];
  shoal::detail::worker* waiter;
};
}  // namespace detail

/// Runs f() on global core `core` and returns its result. Blocking: suspends
/// the calling worker until the reply arrives. f must be a
/// message_handler_like closure that does not suspend. Worker only.
template <message_handler_like F>
auto call(int core, const F& f) -> std::invoke_result_t<const F&> {
  using R = std::invoke_result_t<const F&>;
  SHOAL_CHECK_ON_CORE("shoal::delegate::call");
  if (core == mycore()) return f();
  SHOAL_CHECK(shoal::detail::in_worker(),
              "delegate::call outside a task (handlers must not block)");
  detail::reply_slot<R> slot;
  slot.waiter = shoal::detail::current_worker();
  detail::reply_slot<R>* sp = &slot;
  const int me = mycore();
  send(core, [f, sp, me] {
    if constexpr (std::is_void_v<R>) {
      f();
      send(me, [sp] { shoal::detail::wake(sp->waiter); });
    } else {
      const R r = f();
      send(me, [sp, r] {
        std::memcpy(sp->value, &r, sizeof r);
        shoal::detail::wake(sp->waiter);
      });
    }
  });
  shoal::detail::suspend("delegate::call to core", core);
  if constexpr (!std::is_void_v<R>) {
    R r;
    std::memcpy(&r, slot.value, sizeof r);
    return r;
  }
}

/// Runs f() on `core` and returns a future of its result. Returns at once;
/// two messages (request and reply; none when `core` is this core). For no
/// reply at one message, use post().
template <message_handler_like F>
auto async_call(int core, const F& f) -> future<std::invoke_result_t<const F&>> {
  using R = std::invoke_result_t<const F&>;
  SHOAL_CHECK_ON_CORE("shoal::delegate::async_call");
  auto pair = make_promise_pair<R>();
  const promise<R> p = pair.first;
  future<R>& fut = pair.second;
  auto run_and_fulfil = [f, p] {
    if constexpr (std::is_void_v<R>) {
      f();
      p.set_value();
    } else {
      p.set_value(f());
    }
  };
  if (core == mycore()) {
    run_and_fulfil();
  } else {
    send(core, run_and_fulfil);
  }
  return std::move(fut);
}

/// Runs f() on `core` without a reply (UPC++'s rpc_ff); `gce` counts it
/// until it has run. Returns at once; one message (none when `core` is this
/// core). The unit is enrolled here and completed where f ran, on whichever
/// process: no completion message comes back. Any task or handler.
template <message_handler_like F>
void post(int core, const F& f, completion_ref gce = completion_ref()) {
  SHOAL_CHECK_ON_CORE("shoal::delegate::post");
  gce.enroll();
  if (core == mycore()) {
    f();
    gce.complete();
    return;
  }
  send(core, [f, gce] {
    f();
    gce.complete();
  });
}

/// The value at `p`. Blocking.
template <class T>
T read(global_ptr<T> p) {
  return call(p.core(), [p] { return *p.local(); });
}

/// Stores `v` at `p`. Blocking (returns once stored).
template <class T>
void write(global_ptr<T> p, T v) {
  call(p.core(), [p, v] { *p.local() = v; });
}

/// If *p == expected, stores desired; returns whether it did. Blocking.
template <class T>
bool compare_and_swap(global_ptr<T> p, T expected, T desired) {
  return call(p.core(), [p, expected, desired] {
    T* x = p.local();
    if (!(*x == expected)) return false;
    *x = desired;
    return true;
  });
}

/// Adds `inc` to *p and returns the previous value. Blocking.
template <class T>
T fetch_add(global_ptr<T> p, T inc) {
  return call(p.core(), [p, inc] {
    T* x = p.local();
    const T old = *x;
    *x = old + inc;
    return old;
  });
}

/// Future of the value at `p`.
template <class T>
future<T> async_read(global_ptr<T> p) {
  return async_call(p.core(), [p] { return *p.local(); });
}

/// Future of the previous value; adds `inc` at p's home.
template <class T>
future<T> async_fetch_add(global_ptr<T> p, T inc) {
  return async_call(p.core(), [p, inc] {
    T* x = p.local();
    const T old = *x;
    *x = old + inc;
    return old;
  });
}

/// Future of whether the swap happened.
template <class T>
future<bool> async_compare_and_swap(global_ptr<T> p, T expected, T desired) {
  return async_call(p.core(), [p, expected, desired] {
    T* x = p.local();
    if (!(*x == expected)) return false;
    *x = desired;
    return true;
  });
}

/// Stores `v` at `p` without a reply; `gce` tracks completion.
template <class T>
void async_write(global_ptr<T> p, T v, completion_ref gce = completion_ref()) {
  post(
      p.core(), [p, v] { *p.local() = v; }, gce);
}

/// Adds `inc` at `p` without a reply; `gce` tracks completion.
template <class T>
void async_add(global_ptr<T> p, T inc, completion_ref gce = completion_ref()) {
  post(
      p.core(), [p, inc] { *p.local() += inc; }, gce);
}

}  // namespace shoal::delegate
