// The runtime's own messages between processes (barrier arrivals and
// releases, message waves and their replies, global completion event
// waves, flow-control acknowledgements; on_all_cores' messages, which are
// application messages, use detail/near_send.hpp) can travel over the
// hypercube's edges: one bit of the rank at a time, hop by hop, like a
// value of a channel under hypercube_routing (routing.hpp). A process then
// exchanges control messages only with the ranks one bit away from it, at
// most ceil(log2 P) of them, so under hypercube routing a phase's protocol
// opens no network buffer to a peer its data does not already use. Off by
// default (shoal::route_control_over_hypercube turns it on): each hop costs
// latency, and a program whose data goes to every process gains nothing.
//
// Contract.
// - send_control_near(core, f): runs f on global core `core`, as
//   send_control does. Off: sent directly. On: after ceil(log2 P)
//   forwarding hops at most; a hop is a control closure run on the core of
//   the same local index at the next rank, which sends the rest of the way
//   and pushes it out at once (the protocols waiting on these messages are
//   latency-bound).
// - Ordering: with the switch unchanged, every message from one core to
//   another takes the same path through the same cores, so two of them
//   still run in the order sent. The protocols using it do not rely on
//   order across a change of the switch (each waits for its replies).
// - Cost: one closure of sizeof(f) + 8 bytes per hop; no allocation.
//   Latency: one network hop per bit in which the ranks differ (2 for a
//   barrier leg at P = 4, up to 4 at P = 16), against 1 sent directly.
// Any core, tasks and handlers (a handler's sends never wait).
#pragma once

#include "shoal/detail/near_send.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/message.hpp"
#include "shoal/routing.hpp"

#include <atomic>

namespace shoal::detail {

/// route_control_over_hypercube's switch (routing.hpp); also read by remote
/// stealing to pick neighbours as victims. Relaxed: a policy, not data; a
/// send that sees the old value is delivered either way.
inline std::atomic<bool> g_control_over_hypercube{false};

template <message_handler_like F>
void send_control_near(int core, const F& f);

/// One hop of a control message on its way to `core`.
template <class F>
struct control_hop {
  int core;
  F f;
  void operator()() const {
    send_control_near(core, f);
    push_staged();
  }
};

/// The next hop is near_next_core's (detail/near_send.hpp), the one
/// on_all_cores' application messages take.
template <message_handler_like F>
void send_control_near(int core, const F& f) {
  const int next = near_next_core(core);
  if (next == core) {
    send_control(core, f);
  } else {
    send_control(next, control_hop<F>{core, f});
  }
}

}  // namespace shoal::detail
