// Message waves: waiting, from one task, until every message of a stream
// (or of every application stream) sent anywhere in the job has been
// handled, cascades included. The engine under barrier(), channel phases
// (end_phase, drain) and drain_messages().
//
// Counters. Each core's aggregator counts, per stream, messages sent (when
// their batch leaves the core) and handled (after every handler of their
// batch has returned); both are monotonic and written by that core only.
// Handled messages were sent before, so at any instant the job-wide handled
// total H(t) is at most the sent total S(t). The control stream, which
// carries the waves themselves, is not counted.
//
// A wave. The waiting task sends one control message to a leader core per
// process (its local core 0; the waiter's own process is led by the waiter).
// The leader asks each core of its process; each core flushes its staging
// (so that what it staged counts as sent), then adds its (sent, handled) to
// a per-process tally; the last core of the process sends the process's sum
// back to the waiter. Cost per wave: P + P*C + P control messages, depth 3.
//
// The four-counter argument. Let wave k-1 collect totals (S', H') and
// wave k (S, H), where wave k starts after the waiter has every reply of
// wave k-1. Pick an instant t between the last sample of wave k-1 and the
// first of wave k. Counters only grow, so H' <= H(t). A message staged at t
// on core c is counted as sent at c's sample of wave k at the latest (c
// flushes first), so S(t) + staged(t) <= S. Hence
//     H' <= H(t) <= S(t) <= S(t) + staged(t) <= S,
// and H' == S forces H(t) == S(t) and staged(t) == 0: at t every message
// sent so far had been handled and none was staged anywhere. A handler's
// sends are counted (or staged) before its own message is counted as
// handled, so its cascade was handled by t too. The wait ends at the first
// k with H' == S; a sample taken after t but before the waiter was called
// (the arrival sample of a barrier) may serve as wave k-1 as long as every
// sample of it precedes the first sample of wave k.
//
// Not covered: messages sent after t (by tasks still running, including
// tasks that handlers spawned and that send later). The wait may never end
// while some task keeps sending.
//
// Back-off: the waiter is suspended during a wave and between unsuccessful
// waves (1 us, doubling up to 1 ms); the cores keep working meanwhile.
#pragma once

#include "shoal/detail/aggregator.hpp"

#include <cstdint>

namespace shoal::detail {

/// Selects what a wave counts: one stream id (a typed channel, or 0 for
/// closure messages), or every application stream.
inline constexpr std::uint32_t all_app_streams = control_stream;

/// Job-wide sums of one wave.
struct wave_totals {
  std::uint64_t sent = 0;
  std::uint64_t handled = 0;
};

/// The calling core's counters for `selector`, after flushing its staging.
/// Owning core (task or handler). Never suspends.
wave_totals sample_here(std::uint32_t selector);

/// Runs one wave over every core of the job and returns its totals.
/// Worker only; suspends the caller (label `why` #tag) until every process
/// has answered.
wave_totals run_wave(std::uint32_t selector, const char* why, std::int64_t tag);

/// Runs waves until one finds `sent` equal to the previous wave's `handled`
/// (see the argument above). `first`, when given, is a completed earlier
/// wave (e.g. arrival samples) and saves one wave. Worker only; suspends.
void wait_drained(std::uint32_t selector, const char* why, std::int64_t tag);
void wait_drained(std::uint32_t selector, const char* why, std::int64_t tag,
                  const wave_totals& first);

}  // namespace shoal::detail
