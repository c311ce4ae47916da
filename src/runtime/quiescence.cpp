#include "runtime/quiescence.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/watchdog.hpp"

namespace shoal::detail {

bool all_idle(const runtime_state& rt) {
  for (const auto& s : rt.schedulers)
    if (!s->idle()) return false;
  return true;
}

// Quiescent: every core idle with no watched condition pending, and every
// delivered buffer processed, seen the same way twice in a row. A pending
// watch (a worker in global_completion_event::wait) may already be true and
// about to wake its worker, so it counts as work.
bool quiescent_once(const runtime_state& rt, std::uint64_t& signature) {
  if (!all_idle(rt)) return false;
  for (const auto& s : rt.schedulers)
    if (s->has_watches()) return false;
  std::uint64_t delivered = 0, processed = 0;
  for (const auto& a : rt.aggregators) {
    processed += a->processed();
    delivered += a->delivered();
  }
  for (const auto& a : rt.aggregators)
    if (a->has_pending_delivery()) return false;
  if (rt.net != nullptr && !rt.net->idle()) return false;
  if (delivered != processed || !all_idle(rt)) return false;
  const bool same = signature == delivered + 1;
  signature = delivered + 1;
  return same;
}

// Quiescent, yet tasks wait for a worker on some core: every worker there is
// suspended and the cap stops it from creating more, and nothing left can
// wake them. End the job instead of returning with work undone.
void fail_if_starved(const runtime_state& rt) {
  std::size_t starved = 0;
  for (const auto& s : rt.schedulers) starved += s->starved_tasks();
  if (starved == 0) return;
  fatal_user(fmt::format(
      "deadlock: {} tasks wait for a worker, but every core's {} workers are suspended and "
      "nothing can wake them; raise --max-workers-per-core",
      starved, rt.cfg.max_workers_per_core));
}

std::uint64_t total_progress(const runtime_state& rt) {
  std::uint64_t sum = 0;
  for (const auto& s : rt.schedulers) sum += s->progress();
  return sum;
}

// Waits for the root task to end and the job to be quiescent. Sleeps with a
// growing pause (up to 20 ms while the root runs, so this thread takes next
// to no CPU from the cores); checks for a worker-cap deadlock and, with
// --watchdog-s, for a job that has stopped making progress.
void wait_quiescent(runtime_state& rt) {
  const bool watched = rt.cfg.watchdog_s > 0;
  watchdog dog(rt);
  std::uint64_t signature = 0;
  auto pause = std::chrono::microseconds(5);
  for (;;) {
    // Acquire: pairs with the root task's release; root_error is then set.
    const bool root_done = rt.root_done.load(std::memory_order_acquire);
    if (quiescent_once(rt, signature)) {
      if (root_done) break;
      fail_if_starved(rt);  // quiescent with the root unfinished: stuck for good?
    }
    if (root_done) {
      std::this_thread::sleep_for(pause);
    } else {
      unique_lock lock(rt.root_mu);
      // Seq_cst by default, kept: under root_mu, which already orders it
      // with the root task's store; off the hot path.
      rt.root_cv.wait_for(lock.native(), pause, [&rt] { return rt.root_done.load(); });
    }
    pause = std::min(pause * 2, std::chrono::microseconds(root_done ? 500 : 20000));
    if (watched) dog.check();
  }
  fail_if_starved(rt);
}

}  // namespace shoal::detail
