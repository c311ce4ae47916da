#include "runtime/termination_waves.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/quiescence.hpp"
#include "runtime/watchdog.hpp"
#include "runtime/wave_verdict.hpp"

namespace shoal::detail {
namespace {

// The main thread's pause between looks at the job (see wait_terminated).
std::chrono::microseconds next_pause(std::chrono::microseconds pause, bool moved, bool busy) {
  using us = std::chrono::microseconds;
  if (busy) return us(1000);
  if (pause > us(200)) return us(5);  // the cores just went idle: the end may be near
  return std::min(pause * 2, us(moved ? 50 : 200));
}

}  // namespace

// Job of several processes: every rank's main thread drives the network
// when the cores do not, and runs termination waves (Active Pebbles 3.6):
// non-blocking allreduces of (ranks not locally quiescent, batches sent,
// batches received, ranks whose root is finished, tasks starved of a
// worker, movable tasks, busy ranks, progress); wave_verdict.hpp judges
// each one.
// The job is over when a wave finds every rank quiescent, every sent batch
// received and the root finished, with the same counts as the wave before
// it: the counts are monotonic, so equal sums over two consecutive waves
// mean nothing was sent or received in between, and no message was in
// flight (sent == received) while every rank was quiet.
//
// Idle cores' remote steal requests are messages too: while one travels
// its ranks are not quiet and the counts move. So remote stealing is
// switched off whenever a wave finds nothing a thief could take (every
// root done, no movable task anywhere, no rank computing), and on again
// when one does. Before that rule the end of a job waited for a wave in
// which no steal request was in flight anywhere: at 16 ranks across the
// emulated hosts (TCP, 2 CPUs) about 4 jobs in 10 never saw one.
void wait_terminated(runtime_state& rt) {
  network& net = *rt.net;
  const bool watched = rt.cfg.watchdog_s > 0;
  watchdog dog(rt);
  std::uint64_t signature = 0;
  std::uint64_t wave[wave_fields] = {};
  std::uint64_t previous[wave_fields] = {1};
  bool in_flight = false;
  bool stealing = true;
  set_remote_stealing(true);
  auto pause = std::chrono::microseconds(5);
  for (;;) {
    const bool moved = !rt.cfg.progress_thread && net.progress();
    if (!in_flight) {
      // Acquire: pairs with the root task's release; root_error is set.
      const bool root_done = rt.root_done.load(std::memory_order_acquire);
      // Counts first, then quiescence: a batch counted as received before a
      // quiet verdict has been handled (it was in an inbound ring).
      wave[wave_sent] = net.batches_sent();
      wave[wave_received] = net.batches_received();
      const bool quiet = quiescent_once(rt, signature) && quiescent_once(rt, signature);
      wave[wave_not_quiet] = quiet && wave[wave_sent] == net.batches_sent() &&
                                     wave[wave_received] == net.batches_received()
                                 ? 0
                                 : 1;
      wave[wave_roots_done] = root_done ? 1 : 0;
      wave[wave_starved] = 0;
      for (const auto& sch : rt.schedulers) wave[wave_starved] += sch->starved_tasks();
      // What other ranks' idle cores could steal (a racy count: a hint).
      wave[wave_movable] = 0;
      for (const auto& sch : rt.schedulers)
        wave[wave_movable] += static_cast<std::uint64_t>(sch->movable_size());
      // Busy: computing for a while, not a blip such as a steal request.
      wave[wave_busy] = 0;
      for (const auto& sch : rt.schedulers)
        if (sch->busy_for(1'000'000)) wave[wave_busy] = 1;
      wave[wave_progress] = total_progress(rt);
      net.with_transport([&wave](transport& t) { t.start_allreduce_sum(wave, wave_fields); });
      in_flight = true;
    }
    if (net.with_transport([](transport& t) { return t.allreduce_done(); })) {
      in_flight = false;
      const auto verdict =
          judge_wave(wave, previous, stealing, static_cast<std::uint64_t>(g_info.ranks));
      if (verdict == wave_verdict::finished) break;
      if (verdict == wave_verdict::stop_stealing) {
        // Every rank sees this same wave. Look again with two fresh waves,
        // since a request sent meanwhile may be in flight.
        stealing = false;
        set_remote_stealing(false);
        previous[wave_not_quiet] = 1;
        continue;
      }
      if (verdict == wave_verdict::start_stealing) {
        stealing = true;
        set_remote_stealing(true);
      }
      // Quiet everywhere with nothing in flight, over two waves with the
      // same counts, yet tasks wait for a worker: nothing can wake the
      // suspended workers that hold them up (the worker cap). The ranks
      // that hold such tasks say so and end the job; every rank saw this.
      if (verdict == wave_verdict::starved) fail_if_starved(rt);
      if (watched) dog.check(wave[wave_progress], wave[wave_busy] == 0);
      std::copy(wave, wave + wave_fields, previous);
      // Finished once: confirm at once with a second wave.
      if (wave_finished(wave, static_cast<std::uint64_t>(g_info.ranks))) continue;
    }
    // Sleep even when the network moved: the cores drive it as they poll,
    // and this thread must not take a CPU from them (it only stands in
    // for cores that compute without polling). The pause starts short so
    // that the end of a short run is seen at once; while the last wave saw
    // cores computing it is long, because on a machine with no core to
    // spare every wake-up of this thread preempts a core. Not longer than
    // 1 ms (gups 2^22 at 2 x 1 on a loaded 2-vCPU host: 0.035 GUPS at 10 ms
    // against 0.14-0.18 at 1 ms), though its MPI calls are not what the
    // cores miss: waking every 1 ms and doing nothing 9 turns in 10 kept
    // 0.15, and never driving the network at all kept the speed too. At
    // 10 ms the cores were on a CPU for a third of the phase (getrusage),
    // at 1 ms all of it: with each rank bound to one CPU that other
    // programs share, this thread's wake-ups most likely are where the
    // kernel hands that CPU back to the rank (bench/results/quiet_checks.md,
    // h15d).
    std::this_thread::sleep_for(pause);
    pause = next_pause(pause, moved, previous[wave_busy] != 0);
  }
  fail_if_starved(rt);
}

}  // namespace shoal::detail
