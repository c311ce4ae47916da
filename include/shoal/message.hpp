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

#include "shoal/closure.hpp"
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

namespace detail {
/// Delivers everything this core has staged and hands what went to other
/// processes to the transport at once (src/comm/network.cpp). A batch for
/// another process is otherwise only copied into the network's buffer for
/// that rank and leaves at this core's next poll: a core that goes straight
/// back to computing (a collective's result, a barrier's release) would hold
/// another process's waiting cores for as long as it computes. A partly
/// filled network buffer still waits for those in flight to its rank
/// (combining); phase steps that must not wait use push_staged_partial
/// (src/comm/network.hpp).
void push_staged();

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
template <message_handler_like F>
void send_control(int core, const F& f) {
  send_closure(core, f, control_stream);
}
}  // namespace detail

/// Runs `f` on global core `core` (possibly this one), asynchronously.
/// Callable from tasks and handlers; may suspend a task when every buffer of
/// this core is in flight (back-pressure), never a handler. Inside a finish
/// scope the message is counted in it until its handler returns, and the
/// handler runs inside the scope (4 more bytes on the wire).
template <message_handler_like F>
void send(int core, const F& f) {
  if (const std::uint32_t scope = detail::current_scope(); scope != 0) [[unlikely]] {
    detail::event_enroll(scope, 1);
    detail::send_closure(core, detail::scoped_closure<F>{f, scope});
    return;
  }
  detail::send_closure(core, f);
}

/// Delivers every message this core has staged: batches for this process's
/// cores are in their queues, those for other processes handed to the
/// transport, on return. Returns at once (does not wait for handlers).
inline void flush() {
  SHOAL_CHECK_ON_CORE("shoal::flush");
  detail::push_staged();
}

}  // namespace shoal
