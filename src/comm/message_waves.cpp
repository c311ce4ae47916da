// Message waves (detail/message_waves.hpp): a wave asks a leader core per
// process, which asks every core of its process to flush and sample its
// counters into a per-process tally; the last core of a process replies to
// the waiter with the process's sums.
#include "shoal/detail/message_waves.hpp"

#include "shoal/detail/process_info.hpp"
#include "tasks/scheduler.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"

#include <algorithm>
#include <atomic>

#include "comm/near_control.hpp"
#include "comm/network.hpp"

namespace shoal::detail {
namespace {

constexpr std::uint64_t first_backoff_ns = 1'000;
constexpr std::uint64_t max_backoff_ns = 1'000'000;

// The waiting task's side of one wave: on its stack, touched on its core only.
struct wave_waiter {
  wave_totals sum;
  int ranks_left = 0;
  worker* w = nullptr;
};

// One process's part of a wave: made by its leader, freed by its last core.
struct process_tally {
  std::atomic<int> left;
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> handled{0};
  wave_waiter* waiter;
  int waiter_core;
  std::uint32_t selector;
};

void on_reply(wave_waiter* ww, const wave_totals& t) {
  ww->sum.sent += t.sent;
  ww->sum.handled += t.handled;
  if (--ww->ranks_left == 0 && ww->w != nullptr) this_scheduler().wake(ww->w);
}

void sample_into(process_tally* p) {
  const wave_totals t = sample_here(p->selector);
  p->sent.fetch_add(t.sent, std::memory_order_relaxed);
  p->handled.fetch_add(t.handled, std::memory_order_relaxed);
  // acq_rel: the last core reads every other core's additions.
  if (p->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const wave_totals sum{p->sent.load(std::memory_order_relaxed),
                        p->handled.load(std::memory_order_relaxed)};
  wave_waiter* ww = p->waiter;
  const int home = p->waiter_core;
  delete p;
  send_control_near(home, [ww, sum] { on_reply(ww, sum); });
  push_staged_partial();  // the waiter's process waits on it (network.hpp)
}

// Runs on the leader core of a process (a handler), or in the waiter's task
// for the waiter's own process.
void lead(wave_waiter* ww, int home, std::uint32_t selector) {
  auto* p = new process_tally{{g_info.local_cores}, {0}, {0}, ww, home, selector};
  const int me = mycore();
  for (int c = 0; c < g_info.local_cores; ++c) {
    const int core = g_info.rank_base + c;
    if (core != me) send_control(core, [p] { sample_into(p); });
  }
  sample_into(p);  // flushes the requests above too
}

void sleep_for(std::uint64_t ns, const char* why, std::int64_t tag) {
  const std::uint64_t deadline = now_ns() + ns;
  this_scheduler().wait_until(
      [](const void* d) { return now_ns() >= *static_cast<const std::uint64_t*>(d); }, &deadline,
      why, tag);
}

}  // namespace

wave_totals sample_here(std::uint32_t selector) {
  aggregator& a = *tls_aggregator;
  a.flush_all();
  if (selector == all_app_streams) return {a.app_sent(), a.app_handled()};
  return {a.sent(selector), a.handled(selector)};
}

wave_totals run_wave(std::uint32_t selector, const char* why, std::int64_t tag) {
  scheduler& s = this_scheduler();
  SHOAL_CHECK(s.in_worker(), "{}: call it from a task, not from a message handler", why);
  wave_waiter ww;
  ww.ranks_left = g_info.ranks;
  wave_waiter* wp = &ww;
  const int me = mycore();
  for (int r = 0; r < g_info.ranks; ++r)
    if (r != g_info.rank)
      send_control_near(r * g_info.local_cores, [wp, me, selector] { lead(wp, me, selector); });
  lead(wp, me, selector);
  // Replies are handled by this core's scheduler, so none can have arrived
  // unless a send above yielded under back-pressure.
  if (ww.ranks_left > 0) {
    ww.w = s.current;
    s.suspend(why, tag);
  }
  return ww.sum;
}

void wait_drained(std::uint32_t selector, const char* why, std::int64_t tag,
                  const wave_totals& first) {
  wave_totals before = first;
  std::uint64_t backoff = 0;
  for (;;) {
    const wave_totals now = run_wave(selector, why, tag);
    if (now.sent == before.handled) return;
    before = now;
    if (backoff != 0) sleep_for(backoff, why, tag);
    backoff = backoff == 0 ? first_backoff_ns : std::min(2 * backoff, max_backoff_ns);
  }
}

void wait_drained(std::uint32_t selector, const char* why, std::int64_t tag) {
  wait_drained(selector, why, tag, run_wave(selector, why, tag));
}

}  // namespace shoal::detail
