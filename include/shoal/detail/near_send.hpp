// Application messages over hypercube edges: what on_all_cores' launch and
// completions use, so that with shoal::route_control_over_hypercube on
// (routing.hpp) they too reach a process through at most ceil(log2 P)
// neighbours instead of opening a network buffer to every process.
//
// Contract.
// - send_near(core, f): runs f on global core `core`, as send() does
//   (application stream, counted by barriers and channel phases, enrolled
//   in the caller's finish scope). Switch off, or `core` one hop away or in
//   this process: one send(). On: a forwarding closure to the core of the
//   same local index at the next rank of the hypercube path, which sends the
//   rest of the way (each hop is itself a send(), so the message is counted
//   as handled only after its next hop was sent: a drain sees it in transit).
// - Cost: sizeof(f) + 8 bytes per hop; at most ceil(log2 P) hops; no
//   allocation. Switch off: one extra call and a relaxed load.
// Any core, tasks and handlers.
#pragma once

#include "shoal/message.hpp"

namespace shoal::detail {

/// The core at which a message for global core `core` makes its next hop:
/// `core` itself when route_control_over_hypercube is off, when `core` is
/// in this process or one hypercube hop away (src/comm/network_traffic.cpp).
int near_next_core(int core) noexcept;

template <message_handler_like F>
void send_near(int core, const F& f);

/// One hop of an application message on its way to `core`.
template <class F>
struct near_hop {
  int core;
  F f;
  void operator()() const { send_near(core, f); }
};

template <message_handler_like F>
void send_near(int core, const F& f) {
  const int next = near_next_core(core);
  if (next == core) {
    send(core, f);
  } else {
    send(next, near_hop<F>{core, f});
  }
}

}  // namespace shoal::detail
