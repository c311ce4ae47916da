#include "runtime/termination_waves.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/quiescence.hpp"
#include "runtime/watchdog.hpp"

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
// worker, busy ranks, progress).
// The job is over when a wave finds every rank quiescent, every sent batch
// received and the root finished, with the same counts as the wave before
// it: the counts are monotonic, so equal sums over two consecutive waves
// mean nothing was sent or received in between, and no message was in
// flight (sent == received) while every rank was quiet.
void wait_terminated(runtime_state& rt) {
  network& net = *rt.net;
  const bool watched = rt.cfg.watchdog_s > 0;
  watchdog dog(rt);
  std::uint64_t signature = 0;
  enum { not_quiet, sent, received, roots_done, starved, busy, progress, fields };
  std::uint64_t wave[fields] = {};
  std::uint64_t previous[fields] = {1};
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
      wave[sent] = net.batches_sent();
      wave[received] = net.batches_received();
      const bool quiet = quiescent_once(rt, signature) && quiescent_once(rt, signature);
      wave[not_quiet] =
          quiet && wave[sent] == net.batches_sent() && wave[received] == net.batches_received() ? 0
                                                                                                : 1;
      wave[roots_done] = root_done ? 1 : 0;
      wave[starved] = 0;
      for (const auto& sch : rt.schedulers) wave[starved] += sch->starved_tasks();
      // Busy: computing for a while, not a blip such as a steal request.
      wave[busy] = 0;
      for (const auto& sch : rt.schedulers)
        if (sch->busy_for(1'000'000)) wave[busy] = 1;
      wave[progress] = total_progress(rt);
      net.with_transport([&wave](transport& t) { t.start_allreduce_sum(wave, fields); });
      in_flight = true;
    }
    if (net.with_transport([](transport& t) { return t.allreduce_done(); })) {
      in_flight = false;
      const bool finished = wave[not_quiet] == 0 && wave[sent] == wave[received] &&
                            wave[roots_done] == static_cast<std::uint64_t>(g_info.ranks);
      if (finished && stealing) {
        // The job looks finished: stop idle cores from sending steal
        // requests (every rank sees this same wave), then look again with
        // two fresh waves, since a request sent meanwhile may be in flight.
        stealing = false;
        set_remote_stealing(false);
        previous[not_quiet] = 1;
        continue;
      }
      if (finished && std::equal(wave, wave + fields - 2, previous)) break;
      // Quiet everywhere with nothing in flight, over two waves with the
      // same counts, yet tasks wait for a worker: nothing can wake the
      // suspended workers that hold them up (the worker cap). The ranks
      // that hold such tasks say so and end the job; every rank saw this.
      const bool quiet = wave[not_quiet] == 0 && wave[sent] == wave[received];
      if (quiet && wave[starved] > 0 && std::equal(wave, wave + fields - 2, previous))
        fail_if_starved(rt);
      if (watched) dog.check(wave[progress], wave[busy] == 0);
      std::copy(wave, wave + fields, previous);
      if (finished) continue;  // confirm at once with a second wave
    }
    // Sleep even when the network moved: the cores drive it as they poll,
    // and this thread must not take a CPU from them (it only stands in
    // for cores that compute without polling). The pause starts short so
    // that the end of a short run is seen at once; while the last wave saw
    // cores computing it is long, because on a machine with no core to
    // spare every wake-up of this thread preempts a core.
    std::this_thread::sleep_for(pause);
    pause = next_pause(pause, moved, previous[busy] != 0);
  }
  fail_if_starved(rt);
}

}  // namespace shoal::detail
