// Parallel loops and SPMD helpers built on tasks and messages.
#pragma once

#include "shoal/completion_event.hpp"
#include "shoal/detail/near_send.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"
#include "shoal/task.hpp"

#include <cstdint>

namespace shoal {

namespace detail {
template <class F>
struct parallel_for_state {
  completion_event done;
  const F* f;
  std::int64_t grain;
  parallel_for_state(std::int64_t n, const F* fn, std::int64_t g) : done(n), f(fn), grain(g) {}
};

// Splits [lo, hi) in halves, spawning the upper half as a stealable task,
// until a piece is at most `grain` long; runs that piece and retires its
// iterations (the event counts iterations, so no core needs to enroll).
template <class F>
void parallel_for_piece(parallel_for_state<F>* st, std::int64_t lo, std::int64_t hi) {
  while (hi - lo > st->grain) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    spawn<stealable>([st, mid, hi] { parallel_for_piece(st, mid, hi); });
    hi = mid;
  }
  for (std::int64_t i = lo; i < hi; ++i) (*st->f)(i);
  st->done.complete(hi - lo);
}
}  // namespace detail

/// Calls f(i) for every i in [begin, end), in parallel over this process's
/// cores: recursive halving into a log-depth tree of stealable tasks with at
/// most `grain` iterations each. Blocking (suspends the calling worker until
/// every iteration has run). f is shared by reference across cores, so it
/// must be safe to call concurrently; iterations may suspend.
template <class F>
void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain, const F& f) {
  SHOAL_CHECK_ON_CORE("shoal::parallel_for");
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  detail::parallel_for_state<F> st(end - begin, &f, grain);
  detail::parallel_for_piece(&st, begin, end);
  st.done.wait();
}

/// Runs a copy of `f` as a task on every core of the job and waits for all
/// of them. Blocking; f must be a message_handler_like closure of at most
/// max_on_all_cores_bytes (48). Costs one message to every core and one
/// back; with route_control_over_hypercube on, both go over hypercube edges
/// (detail/near_send.hpp: up to ceil(log2 P) hops each).
template <class F>
requires message_handler_like<F> && fits_on_all_cores<F>
void on_all_cores(const F& f) {
  SHOAL_CHECK_ON_CORE("shoal::on_all_cores");
  completion_event done(cores());
  completion_event* d = &done;
  const int home = mycore();
  for (int c = 0; c < cores(); ++c) {
    detail::send_near(c, [f, d, home] {
      spawn([f, d, home] {
        F g = f;
        g();
        if (mycore() == home) {
          completion_event::complete_at(home, d);
        } else {
          detail::send_near(home, [d, home] { completion_event::complete_at(home, d); });
        }
      });
    });
  }
  done.wait();
}

// What the barriers wait for (see also channel.hpp for channel phases):
// - barrier() waits for every core to arrive AND for every application
//   message (closures on any core, every typed channel; not the runtime's
//   control messages) sent before the last core arrived, with the messages
//   their handlers sent in turn (cascades), to have been handled. It does
//   not wait for tasks: a task spawned by a handler, or any other task still
//   running, is not waited for, nor are messages such a task sends after the
//   barrier's drain has begun. Use a completion event for tasks.
// - arrival_barrier() waits for arrivals only; messages may still be in
//   flight (or staged) when it returns.

/// Collective, draining: suspends the calling task until one task on every
/// core of the job has called barrier() and every application message sent
/// before the last arrival (and its cascades) has been handled (ygm's and
/// UPC++'s barrier). Call from exactly one task per core (SPMD style, e.g.
/// inside on_all_cores). Costs C + P control messages to arrive, one wave
/// (P + P*C + P messages, depth 3) when nothing is in flight, more while
/// messages are, and P + P*C to release (P processes of C cores).
void barrier();

/// Collective, arrival only: suspends the calling task until one task on
/// every core of the job has called arrival_barrier(); does not wait for
/// messages. One task per core. Costs C + P control messages to arrive and
/// P + P*C to release.
void arrival_barrier();

/// Global view: suspends the calling task until every application message
/// sent, anywhere in the job, before the call (by tasks that finished or
/// sent before it), and its cascades, has been handled. Any single task;
/// not collective. Never returns while some task keeps sending. Costs at
/// least two waves of P + P*C + P control messages.
void drain_messages();

}  // namespace shoal
