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

template <message_handler_like F>
void send_control_near(int core, const F& f) {
  const int dest_rank = core / g_info.local_cores;
  const int next = hypercube_routing{}.next_rank(g_info.rank, dest_rank, g_info.ranks);
  if (!g_control_over_hypercube.load(std::memory_order_relaxed) || dest_rank == g_info.rank ||
      next == dest_rank) {
    send_control(core, f);
    return;
  }
  send_control(next * g_info.local_cores + core % g_info.local_cores, control_hop<F>{core, f});
}

}  // namespace shoal::detail
