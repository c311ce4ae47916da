#include "runtime/termination_waves.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "shoal/one_sided.hpp"

#include "runtime/quiescence.hpp"
#include "runtime/watchdog.hpp"

namespace shoal::detail {
namespace {

using std::chrono::microseconds;

// Pauses from long_pause up may be cut short by wake_waves().
constexpr microseconds long_pause(1000);
constexpr microseconds longest_pause(16000);

// The main thread's pause between looks at the job (see wait_terminated).
// `holds_work`: some core of this process still holds work of the run, so
// the run cannot end before that core runs out of it, and its idle hook
// then wakes this thread: the pause grows from 1 ms to 16 ms. `rma`: the
// one-sided rma backend is live, whose passive-target operations progress
// only while the target process calls MPI; this thread's 1 ms pause keeps
// doing that for a target whose cores compute without polling, so it
// keeps the fixed pause.
microseconds next_pause(microseconds pause, bool moved, bool busy, bool holds_work, bool rma) {
  if (!rma && (busy || holds_work)) return std::clamp(pause * 2, long_pause, longest_pause);
  if (busy) return long_pause;
  // The cores just went idle: the end may be near.
  if (pause > microseconds(200)) return microseconds(5);
  return std::min(pause * 2, microseconds(moved ? 50 : 200));
}

// Whether some core of this process still holds work (scheduler::
// holds_work): while one does, the run cannot end before it goes idle.
bool some_core_holds_work(const runtime_state& rt) {
  return std::ranges::any_of(rt.schedulers, [](const auto& s) { return s->holds_work(); });
}

// Sleeps `pause`; a long one ends early at wake_waves(). The nap flag is
// raised before the cores are looked at again: a core that went idle
// meanwhile either sees the flag (and wakes this thread) or is seen idle
// here (and the nap is skipped).
void pause_main(runtime_state& rt, microseconds pause) {
  if (pause < long_pause) {
    std::this_thread::sleep_for(pause);
    return;
  }
  unique_lock lock(rt.root_mu);
  rt.main_woken.store(false, std::memory_order_relaxed);  // under root_mu, as the wakers set it
  rt.main_napping.store(true);
  if (some_core_holds_work(rt))
    rt.root_cv.wait_for(lock.native(), pause, [&rt] { return rt.main_woken.load(); });
  rt.main_napping.store(false, std::memory_order_relaxed);  // a late waker only takes the lock
}

}  // namespace

void wake_waves(runtime_state& rt) noexcept {
  if (!rt.main_napping.load()) return;
  {
    lock_guard lock(rt.root_mu);
    rt.main_woken.store(true, std::memory_order_relaxed);  // read under root_mu
  }
  rt.root_cv.notify_one();
}

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
  const bool rma = one_sided_backend() == one_sided_kind::rma;
  auto pause = microseconds(5);
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
    // that the end of a short run is seen at once; while the cores hold
    // work of the run it grows long, because on a machine with no core to
    // spare every wake-up of this thread preempts a core (at 2 x 1 on 2
    // CPUs, 1 ms pauses meant about 855 wake-ups a second).
    pause_main(rt, pause);
    pause = next_pause(pause, moved, previous[busy] != 0, some_core_holds_work(rt), rma);
  }
  fail_if_starved(rt);
}

}  // namespace shoal::detail
