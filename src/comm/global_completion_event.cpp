#include "shoal/global_completion_event.hpp"

#include "shoal/delegate.hpp"
#include "shoal/detail/thread_safety.hpp"
#include "shoal/message.hpp"
#include "tasks/scheduler.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "comm/near_control.hpp"

namespace shoal {
namespace detail {
namespace {

// ---- ids: handed out by rank 0 ----

annotated_mutex g_ids_mu;
std::vector<std::uint32_t> g_free_ids SHOAL_GUARDED_BY(g_ids_mu);  // rank 0's is the job's

std::uint32_t claim_id_here() {
  lock_guard lock(g_ids_mu);
  if (g_free_ids.empty())
    fatal_user(fmt::format("too many global_completion_events (finish scopes included) alive at "
                           "once: at most {} in the job",
                           max_events - 1));
  const std::uint32_t id = g_free_ids.back();
  g_free_ids.pop_back();
  return id;
}

void release_id_here(std::uint32_t id) {
  lock_guard lock(g_ids_mu);
  g_free_ids.push_back(id);
}

// ---- sums over this process's cores ----

struct totals {
  std::uint64_t enrolled = 0;
  std::uint64_t completed = 0;
};

// Completed first, then enrolled: on one process, equal sums prove that
// nothing was outstanding between the passes (header).
totals local_totals(std::uint32_t id) noexcept {
  totals t;
  // Acquire (both): pair with bump()'s release on each core's counter, so
  // the completed pass is done before the enrolled pass reads.
  for (int c = 0; c < g_info.local_cores; ++c)
    t.completed += counters_of(c, id).completed.load(std::memory_order_acquire);
  for (int c = 0; c < g_info.local_cores; ++c)
    t.enrolled += counters_of(c, id).enrolled.load(std::memory_order_acquire);
  return t;
}

bool done_here(const void* id) noexcept {
  const totals t = local_totals(*static_cast<const std::uint32_t*>(id));
  SHOAL_ASSERT(t.completed <= t.enrolled, "global_completion_event completed more than enrolled");
  return t.completed == t.enrolled;
}

// ---- waves (several processes) ----

struct wave {
  totals sum;
  int pending = 0;
  worker* waiter = nullptr;
};

// Waves are not progress: a wait that never ends must still trip the
// watchdog, so their messages and switches count as chatter (like remote
// steal requests): a reply, a request, a suspend/resume pair (2 switches).
constexpr std::uint64_t switches_per_suspend = 2;

void on_reply(wave* w, totals t) {
  ++this_scheduler().steal_chatter;
  w->sum.enrolled += t.enrolled;
  w->sum.completed += t.completed;
  if (--w->pending == 0) this_scheduler().wake(w->waiter);
}

// One core per process (the waiter's local index) sums its process's
// counters and replies on the control stream (both legs over hypercube
// edges under route_control_over_hypercube: near_control.hpp). Suspends
// until every reply.
totals run_wave(std::uint32_t id) {
  scheduler& s = this_scheduler();
  wave w;
  w.pending = g_info.ranks - 1;
  w.waiter = s.current;
  wave* wp = &w;
  const int me = tls_core;
  const int local = me - g_info.rank_base;
  for (int r = 0; r < g_info.ranks; ++r) {
    if (r == g_info.rank) continue;
    send_control_near(r * g_info.local_cores + local, [id, me, wp] {
      ++this_scheduler().steal_chatter;
      const totals t = local_totals(id);
      send_control_near(me, [wp, t] { on_reply(wp, t); });
      push_staged();
    });
  }
  flush();
  const totals mine = local_totals(id);
  s.suspend("global_completion_event wave", id);
  s.steal_chatter += switches_per_suspend;
  w.sum.enrolled += mine.enrolled;
  w.sum.completed += mine.completed;
  return w.sum;
}

bool deadline_passed(const void* deadline) noexcept {
  return now_ns() >= *static_cast<const std::uint64_t*>(deadline);
}

// Suspends the calling worker for about `ns` (its core keeps working).
void pause_worker(std::uint64_t ns, std::uint32_t id) {
  const std::uint64_t deadline = now_ns() + ns;
  scheduler& s = this_scheduler();
  s.wait_until(deadline_passed, &deadline, "global_completion_event back-off", id);
  s.steal_chatter += switches_per_suspend;
}

void wait_waves(std::uint32_t id) {
  constexpr std::uint64_t first_pause_ns = 20'000;
  constexpr std::uint64_t max_pause_ns = 1'000'000;
  std::uint64_t pause = first_pause_ns;
  totals previous = run_wave(id);
  for (;;) {
    if (previous.enrolled != previous.completed) {
      pause_worker(pause, id);
      pause = std::min(pause * 2, max_pause_ns);
    }
    const totals next = run_wave(id);
    if (previous.completed == next.enrolled) return;
    previous = next;
  }
}

void wait_one_process(std::uint32_t id) {
  if (done_here(&id)) return;
  g_event_waiters[id].fetch_add(1, std::memory_order_relaxed);
  this_scheduler().wait_until(done_here, &id, "global_completion_event", id);
  g_event_waiters[id].fetch_sub(1, std::memory_order_relaxed);
}

void check_worker(const char* what) {
  SHOAL_CHECK(tls_core_state != nullptr && in_worker(),
              "global_completion_event::{} outside a task (it may suspend)", what);
}

}  // namespace

void make_event_table(int local_cores) {
  const std::size_t n = static_cast<std::size_t>(local_cores) * max_events;
  g_event_table = new (std::align_val_t{64}) event_counters[n];
  g_event_waiters = new std::atomic<int>[max_events];
  // Relaxed (was seq_cst): a fresh array behind a plain pointer; whatever
  // orders a reader after the pointer's store orders it after these too.
  for (std::uint32_t i = 0; i < max_events; ++i)
    g_event_waiters[i].store(0, std::memory_order_relaxed);
  lock_guard lock(g_ids_mu);
  g_free_ids.clear();
  for (std::uint32_t id = max_events - 1; id > 0; --id) g_free_ids.push_back(id);
}

void free_event_table() noexcept {
  ::operator delete[](static_cast<void*>(g_event_table), std::align_val_t{64});
  delete[] g_event_waiters;
  g_event_table = nullptr;
  g_event_waiters = nullptr;
}

}  // namespace detail

global_completion_event::global_completion_event() : id_(0) {
  using namespace detail;
  SHOAL_CHECK(g_event_table != nullptr, "a global_completion_event needs shoal::init() first");
  if (g_info.ranks == 1 || g_info.rank == 0) {
    id_ = claim_id_here();
    return;
  }
  SHOAL_CHECK(tls_core_state != nullptr && in_worker(),
              "a global_completion_event on rank {} can only be made by a task (its id comes "
              "from rank 0)",
              g_info.rank);
  id_ = delegate::call(0, [] { return claim_id_here(); });
}

global_completion_event::~global_completion_event() {
  using namespace detail;
  if (id_ == 0 || g_event_table == nullptr) return;
  if (g_info.ranks == 1 || g_info.rank == 0) {
    release_id_here(id_);
    return;
  }
  SHOAL_CHECK(tls_core >= 0, "a global_completion_event of rank {} destroyed outside run()",
              g_info.rank);
  const std::uint32_t id = id_;
  send_control_near(0, [id] { release_id_here(id); });
}

global_completion_event* global_completion_event::make_default() {
  return new global_completion_event(default_tag{});
}

namespace detail {

void event_wait(std::uint32_t id) {
  check_worker("wait()");
  flush();
  if (g_info.ranks == 1) {
    wait_one_process(id);
  } else {
    wait_waves(id);
  }
}

bool event_done(std::uint32_t id) {
  if (g_info.ranks == 1) return done_here(&id);
  check_worker("done()");
  flush();
  const totals first = run_wave(id);
  return run_wave(id).enrolled == first.completed;
}

}  // namespace detail
}  // namespace shoal
