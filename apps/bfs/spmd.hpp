// Collective steps for SPMD search code: one task per core (started by
// shoal::on_all_cores) calls these in the same order on every core.
//
// - allreduce_sum: a barrier that also sums one or two numbers per core
//   (shoal::allreduce: 2 messages per core; the calling task suspends until
//   the total arrives).
// - wait_delivered: ends a phase of counted messages. Each core tells every
//   other core how many counted messages it sent it this phase (one closure
//   message per pair), then suspends until it has received them all. Handlers
//   of counted messages call core_state::rx.note_received().
// - wait_ended: ends a phase of values on one typed channel without counting
//   them. Each core sends every other core an end marker on the same
//   channel; values from one core to another on one channel are handled in
//   the order they were sent (aggregator.hpp), so a core holding every other
//   core's marker has handled all their values. The channel's handler calls
//   core_state::rx.note_end(0) for a marker. This saves the round of count
//   messages, which would travel after the values.
// Messages of the next phase must not be sent before every core has finished
// this one, so an allreduce_sum (a barrier) always follows either wait.
#pragma once

#include <shoal/shoal.hpp>

#include <array>
#include <cstdint>

#include "bfs/core_state.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

/// Two sums at once (for the async variant's termination test).
using sum_pair = std::array<std::int64_t, 2>;

/// Element-wise sums of `x` over every core of the job. Blocking; one task
/// per core.
inline sum_pair allreduce_sum(sum_pair x) {
  return shoal::allreduce(x, [](const sum_pair& a, const sum_pair& b) {
    return sum_pair{a[0] + b[0], a[1] + b[1]};
  });
}

/// Sum of `x` over every core of the job. Blocking; one task per core.
inline std::int64_t allreduce_sum(std::int64_t x) { return shoal::allreduce_sum(x); }

/// Suspends until every counted message sent to this core in this phase has
/// been handled; resets the phase's counts. Blocking; one task per core.
template <class V>
void wait_phase_end(core_state<V>& st) {
  shoal::flush();
  if (!st.rx.complete()) {
    shoal::completion_event done(1);
    st.rx.waiter = &done;
    done.wait();
  }
  st.rx = delivery{};
}

template <class V>
void wait_delivered(core_state<V>& st) {
  for (int c = 0; c < shoal::cores(); ++c) {
    if (c == st.me) continue;
    const std::int64_t n = st.sent[static_cast<std::size_t>(c)];
    st.sent[static_cast<std::size_t>(c)] = 0;
    shoal::send(c, [n] { g_state<V>.local().rx.note_end(n); });
  }
  wait_phase_end(st);
}

/// Sends `marker` on `ch` to every other core, then suspends until every
/// other core's marker has arrived here. Blocking; one task per core.
template <class V, class T>
void wait_ended(core_state<V>& st, const shoal::channel<T>& ch, const T& marker) {
  for (int c = 0; c < shoal::cores(); ++c)
    if (c != st.me) ch.send(c, marker);
  wait_phase_end(st);
}

}  // namespace shoal_apps::bfs
