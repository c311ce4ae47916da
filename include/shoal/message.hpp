// Closure messages: run a small trivially copyable closure on another core.
//
// send(core, f) copies f's bytes into the aggregation buffer for `core`; the
// buffer is delivered when full, after --flush-us, when this core goes idle,
// or on flush(). At the destination f runs in handler context: to completion,
// never suspending (spawn a task for work that must wait). Messages from one
// core to another run in the order they were sent. Cost: the closure rounded
// up to 8 bytes, plus an 8-byte header for each run of closures of one type
// staged back to back for one destination; no allocation.
#pragma once

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/buffer.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/finish_scope.hpp"
#include "shoal/detail/handler_id.hpp"
#include "shoal/detail/process_info.hpp"

#include <concepts>
#include <cstring>
#include <type_traits>

namespace shoal {

/// Largest closure a message may carry.
inline constexpr std::size_t max_message_bytes = 256;

/// A closure that can travel as a message: callable with no arguments,
/// trivially copyable (it is copied as bytes, possibly to another process),
/// at most 256 bytes, at most 8-byte aligned. Capture values and global
/// pointers; a captured reference or local pointer is only meaningful on the
/// sender's own process (and only while the pointee lives).
template <class F>
concept message_handler_like = std::invocable<F&> && std::is_trivially_copyable_v<F> &&
                                   sizeof(F) <= max_message_bytes
                               && alignof(F) <= 8;

namespace detail {
template <class F>
constexpr void check_message_closure() {
  static_assert(std::invocable<F&>, "shoal::send: the message must be callable with no arguments");
  static_assert(std::is_trivially_copyable_v<F>,
                "shoal::send: the message closure must be trivially copyable: it is copied as "
                "bytes to another core or process, so capture plain values and global pointers, "
                "not std::string/std::vector/smart pointers or other objects with copy logic");
  static_assert(sizeof(F) <= max_message_bytes,
                "shoal::send: the message closure is larger than 256 bytes; capture less");
  static_assert(alignof(F) <= 8, "shoal::send: the message closure may not be over-aligned");
}

/// For loop bodies that travel inside messages (forall): they take
/// arguments, but must be copyable as bytes like any message.
template <class F>
constexpr void check_loop_body() {
  static_assert(std::is_trivially_copyable_v<F>,
                "shoal::forall: the loop body must be trivially copyable: it is copied as bytes "
                "to every core, so capture plain values and global pointers");
  static_assert(alignof(F) <= 8, "shoal::forall: the loop body may not be over-aligned");
}

template <class F>
void send_closure(int core, const F& f, std::uint32_t stream = 0) {
  SHOAL_CHECK_ON_CORE("shoal::send");
  char* p = tls_aggregator->reserve_closure(core, to_handler_id(&invoke_closures<F>),
                                            padded_closure_bytes<F>, stream);
  std::memcpy(p, static_cast<const void*>(&f), sizeof(F));
}

/// send() for the runtime's own protocols: the control stream, left out of
/// message accounting (barriers that drain, channel phases), so a protocol
/// that waits for the application's messages never waits for its own.
/// Same delivery, ordering and cost as send().
template <class F>
void send_control(int core, const F& f) {
  check_message_closure<F>();
  send_closure(core, f, control_stream);
}
}  // namespace detail

/// Runs `f` on global core `core` (possibly this one), asynchronously.
/// Callable from tasks and handlers; may suspend a task when every buffer of
/// this core is in flight (back-pressure), never a handler. Inside a finish
/// scope the message is counted in it until its handler returns, and the
/// handler runs inside the scope (4 more bytes on the wire).
template <class F>
void send(int core, const F& f) {
  detail::check_message_closure<F>();
  if (const std::uint32_t scope = detail::current_scope(); scope != 0) [[unlikely]] {
    detail::event_enroll(scope, 1);
    detail::send_closure(core, detail::scoped_closure<F>{f, scope});
    return;
  }
  detail::send_closure(core, f);
}

/// Delivers every message this core has staged. Returns at once.
inline void flush() {
  SHOAL_CHECK_ON_CORE("shoal::flush");
  detail::tls_aggregator->flush_all();
}

}  // namespace shoal
