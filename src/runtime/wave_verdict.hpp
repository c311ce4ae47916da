// What one completed termination wave decides (see wait_terminated in
// termination_waves.cpp for the protocol). A pure function of the wave's
// job-wide sums, the wave before it and whether remote stealing is on, so
// that the rules are tested without a job (tests/test_pebbles_idle.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace shoal::detail {

/// The fields of a termination wave, each summed over the ranks.
enum wave_field : int {
  wave_not_quiet,   // ranks not locally quiescent
  wave_sent,        // network batches sent
  wave_received,    // network batches received
  wave_roots_done,  // ranks whose root task has finished
  wave_starved,     // tasks waiting for a worker the cap forbids
  wave_movable,     // movable tasks queued (what a remote thief could take)
  wave_busy,        // ranks with a core computing for 1 ms or more
  wave_progress,    // the cores' progress counts (for the watchdog)
  wave_fields
};

enum class wave_verdict {
  go_on,           // look again
  stop_stealing,   // switch remote stealing off, then look again twice
  start_stealing,  // work appeared: switch remote stealing back on
  starved,         // quiet with nothing in flight, yet tasks wait for a worker
  finished,        // the job is over
};

/// Every root done, every rank quiet, every batch sent received.
inline bool wave_finished(const std::uint64_t (&wave)[wave_fields], std::uint64_t ranks) {
  return wave[wave_not_quiet] == 0 && wave[wave_sent] == wave[wave_received] &&
         wave[wave_roots_done] == ranks;
}

/// `previous`: the wave before (the first field set to 1 after the
/// stealing switch changes, so that two fresh waves must agree).
/// The fields compared between two waves are all but busy and progress.
inline wave_verdict judge_wave(const std::uint64_t (&wave)[wave_fields],
                               const std::uint64_t (&previous)[wave_fields], bool stealing,
                               std::uint64_t ranks) {
  const bool roots = wave[wave_roots_done] == ranks;
  const bool quiet = wave[wave_not_quiet] == 0 && wave[wave_sent] == wave[wave_received];
  const bool finished = wave_finished(wave, ranks);
  // Nothing a thief could take anywhere. Idle cores' steal requests are
  // messages too: while any travels its ranks are not quiet and the counts
  // move, so with stealing on a job of many ranks on a slow network could
  // wait without end for a wave in which no request was in flight.
  const bool nothing_to_steal = roots && wave[wave_movable] == 0 && wave[wave_busy] == 0;
  if (stealing && (finished || nothing_to_steal)) return wave_verdict::stop_stealing;
  if (!stealing && !finished && !nothing_to_steal) return wave_verdict::start_stealing;
  const bool same = std::equal(wave, wave + wave_busy, previous);
  if (finished && !stealing && same) return wave_verdict::finished;
  if (quiet && wave[wave_starved] > 0 && same) return wave_verdict::starved;
  return wave_verdict::go_on;
}

}  // namespace shoal::detail
