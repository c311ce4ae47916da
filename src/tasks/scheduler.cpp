#include "tasks/scheduler.hpp"

#include "shoal/detail/completion_slots.hpp"
#include "shoal/detail/process_info.hpp"

#include <chrono>
#include <climits>
#include <exception>
#include <map>
#include <string>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tasks/fiber.hpp"
#include "tasks/stack_pool.hpp"

namespace shoal::detail {
namespace {

// Idle policy (set_idle_policy, from --idle): spin with pause for spin_ns,
// then offer the CPU with sched_yield until yield_ns (cheap when the machine
// has spare cores, polite when it is oversubscribed), then sleep on the
// futex. Waking a sleeping core costs 10-100 us, and a message from another
// process does not wake it at all (see idle_policy), so by default a core
// stays awake through the waits of a run; on an oversubscribed node every
// pass of a spinning core takes a CPU from a core that has work, so there
// it sleeps at once.
idle_policy g_idle = idle_policy::mixed();
constexpr std::uint32_t min_sleep_us = 50;

void cpu_relax() { __builtin_ia32_pause(); }

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::uint32_t us) {
  timespec ts{0, static_cast<long>(us) * 1000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, &ts,
          nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

std::uint64_t xorshift(std::uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

// An exception must not cross a context switch: one escaping a task ends the
// job with its message (the root task catches its own and hands it to run()).
void run_guarded(inline_task& t) {
  try {
    t();
  } catch (const std::exception& e) {
    // fatal_user names the rank and the (global) core.
    fatal_user(fmt::format("uncaught exception in a task: {}", e.what()));
  } catch (...) {
    fatal_user("uncaught exception of unknown type in a task");
  }
}

// How deep below its record a stopped worker saved its registers: the
// prefetch of the next workers assumes they stopped about as deep.
std::size_t stack_depth(const worker_record* w) {
  return static_cast<std::size_t>(reinterpret_cast<const char*>(w) -
                                  static_cast<const char*>(w->context.ctx));
}

}  // namespace

void set_idle_policy(idle_policy p) noexcept { g_idle = p; }
idle_policy current_idle_policy() noexcept { return g_idle; }

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Every worker starts here and never returns: it runs its task, then takes
// the next local task directly when that is cheap, else parks itself as idle.
void worker_main() {
  scheduler& s = this_scheduler();
  worker_record* self = s.running();
  fiber_arrived(self->context.marks);  // a new fiber: tell the sanitizers where we are
  for (;;) {
    run_guarded(self->task);
    if (self->task.scope != 0) event_complete(self->task.scope, 1);  // finish.hpp
    ++s.stats.tasks_run;
    if (s.ready_.empty() && s.since_poll_ < scheduler::poll_interval &&
        s.take_local_task(self->task)) {
      ++s.since_poll_;
      continue;
    }
    s.idle_workers_.push(self);
    ++s.idle_count_;
    s.switch_from(self);
  }
}

// The service stack's fiber: runs each call it is handed, then switches back
// to the worker that handed it (run_off_worker_stack). Never returns.
void service_main() {
  scheduler& s = this_scheduler();
  fiber_arrived(s.service_ctx_.marks);  // a new fiber, as in worker_main
  for (;;) {
    s.service_fn_(s.service_arg_);
    s.in_service_ = false;
    switch_fiber(s.service_ctx_, s.running()->context);
  }
}

void scheduler::run_off_worker_stack(void (*fn)(void*), void* arg) {
  if (current == nullptr || in_service_) {
    fn(arg);
    return;
  }
  if (service_map_ == nullptr) {
    service_map_ = map_lone_stack(service_stack_bytes, core_);
    service_ctx_ =
        make_fiber<service_main>(service_map_ + service_stack_bytes, service_stack_bytes);
  }
  service_fn_ = fn;
  service_arg_ = arg;
  in_service_ = true;
  switch_fiber(running()->context, service_ctx_);
}

scheduler::scheduler(int core, core_group& group, std::size_t stack_bytes, int max_workers)
    : core_(core),
      group_(group),
      stacks_(new stack_pool(core, stack_bytes)),
      max_workers_(max_workers),
      rng_(0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(core + 1)) {}

scheduler::~scheduler() {
  delete stacks_;
  if (service_map_ != nullptr) {
    fiber_destroyed(service_ctx_.marks);
    unmap_lone_stack(service_map_, service_stack_bytes);
  }
}

void scheduler::wake_a_thief() noexcept {
  // Wake a sleeping core so it can steal. The seq_cst fence orders our push
  // before reading the sleeper count (pairs with idle_step()).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (group_.sleepers.load(std::memory_order_relaxed) > 0) {
    for (scheduler* c : group_.cores) {
      if (c != this && c->sleep_word_.load(std::memory_order_relaxed) != 0) {
        c->notify();
        break;
      }
    }
  }
}

void scheduler::spawn_movable(const inline_task& t) {
  if (!movable_.push(t)) {
    spawn_public(t);  // deque full: still runs, just not across processes
    return;
  }
  ++stats.tasks_spawned;
  wake_a_thief();
}

void scheduler::spawn_public(const inline_task& t) {
  ++stats.tasks_spawned;
  if (!public_.push(t)) {
    private_tasks.push(t);  // deque full: still runs, just not stealable
    return;
  }
  wake_a_thief();
}

void scheduler::yield() {
  worker_record* self = running();
  // A task that yields with nothing else to run on its core is spinning on
  // something another thread must do. When cores are not meant to keep a
  // CPU each (--idle yield or sleep; auto picks sleep when the node has
  // more cores than CPUs), that thread may be waiting for this very CPU, so
  // offer it to the OS (a spin on an MPI-RMA lock at 3 x 2 on 2 CPUs under
  // MPICH took 34-99 s without this). The policy is tested first: under
  // spin and mixed a yield costs what it did.
  const bool offer_cpu = g_idle.spin_ns == 0 && ready_.empty() && !startable_task_waiting();
  ready_.push(self);
  if (offer_cpu) {
    ++stats.os_yields;
    sched_yield();
  }
  switch_from(self);
}

void spawn_public(const inline_task& t) { this_scheduler().spawn_public(t); }

void spawn_movable(const inline_task& t) { this_scheduler().spawn_movable(t); }

void yield_worker() { this_scheduler().yield(); }

void suspend(const char* why, std::int64_t tag) { this_scheduler().suspend(why, tag); }

void wake(worker* w) { this_scheduler().wake(w); }

void scheduler::suspend(const char* why, std::int64_t tag) {
  worker_record* self = running();
  self->suspended = true;
  self->waiting_on = why;
  self->waiting_tag = tag;
  switch_from(self);
}

// Direct worker-to-worker switch when possible; through the scheduler when
// a poll is due or nothing else is ready.
void scheduler::switch_from(worker_record* self) {
  // Direct switches skip the scheduler, which is also where new tasks start:
  // when tasks are waiting, go through it so a yielding loop cannot starve them.
  if (++since_poll_ < poll_interval && !startable_task_waiting()) {
    worker_record* next = ready_.pop();
    if (next == self) return;
    if (next != nullptr) {
      ++stats.context_switches;
      ready_.prefetch_ahead(stack_depth(self));
      current = next;
      switch_fiber(self->context, next->context);
      return;
    }
  }
  ++stats.context_switches;
  current = nullptr;
  switch_fiber(self->context, sched_ctx_);
}

void scheduler::resume(worker_record* w) {
  leave_idle();
  ++stats.context_switches;
  current = w;
  // since_poll_ was reset by the poll before this; a poll hook may have asked
  // for the next switch to poll again (request_poll), which must stand.
  ready_.prefetch_ahead(stack_depth(w));
  switch_fiber(sched_ctx_, w->context);
}

bool scheduler::take_local_task(inline_task& out) {
  return private_tasks.pop(out) || public_.pop(out) || movable_.pop(out);
}

// Random victim, steal half of what it has (at least one).
bool scheduler::try_steal(inline_task& out) {
  const auto n = group_.cores.size();
  if (n < 2) return false;
  auto victim_index = static_cast<std::size_t>(xorshift(rng_) % (n - 1));
  if (victim_index >= static_cast<std::size_t>(core_)) ++victim_index;
  scheduler& victim = *group_.cores[victim_index];
  const bool movable = victim.public_.size() == 0;
  chase_lev_deque& from = movable ? victim.movable_ : victim.public_;
  const std::int64_t available = from.size();
  if (available == 0) return false;
  // Busy before taking: a stolen task must never be in flight while both
  // this core and its victim look idle (run() would see quiescence).
  leave_idle();
  ++stats.steal_attempts;
  if (!from.steal(out)) return false;
  ++stats.tasks_stolen;
  inline_task extra;
  chase_lev_deque& to = movable ? movable_ : public_;
  for (std::int64_t i = 1; i < available / 2 && from.steal(extra); ++i) {
    ++stats.tasks_stolen;
    if (!to.push(extra)) private_tasks.push(extra);
  }
  return true;
}

worker_record* scheduler::obtain_worker() {
  if (worker* w = idle_workers_.pop()) {
    --idle_count_;
    worker_record* r = record_of(w);
    fiber_stack_unused(r->stack_lo, r->context.ctx);  // below its parked frames: dead
    return r;
  }
  if (workers_created_ >= static_cast<std::size_t>(max_workers_)) return nullptr;
  worker_record* w = stacks_->create();
  w->context = make_fiber<worker_main>(w, w->stack_bytes);
  ++workers_created_;
  ++stats.workers_created;
  ready_.reserve(workers_created_ + 1);
  return w;
}

bool scheduler::run_hooks(std::vector<hook>& hooks) {
  bool worked = false;
  for (const hook& h : hooks) worked |= h.fn(h.arg);
  return worked;
}

void scheduler::wait_until(bool (*ready)(const void*), const void* arg, const char* why,
                           std::int64_t tag) {
  if (ready(arg)) return;
  watches_.push_back({ready, arg, running()});
  // Release: to has_watches()'s acquire in the quiescence check.
  has_watches_.store(true, std::memory_order_release);
  suspend(why, tag);
}

bool scheduler::check_watches() {
  bool woke = false;
  for (std::size_t i = 0; i < watches_.size();) {
    if (watches_[i].ready(watches_[i].arg)) {
      wake(watches_[i].w);
      watches_[i] = watches_.back();
      watches_.pop_back();
      woke = true;
    } else {
      ++i;
    }
  }
  // Release: the wakes above come before the quiescence check sees no watch.
  if (watches_.empty()) has_watches_.store(false, std::memory_order_release);
  return woke;
}

void nudge_watchers() noexcept {
  for (int i = 0; i < g_info.local_cores; ++i) {
    scheduler& s = scheduler_of(i);
    if (s.has_watches()) s.notify();
  }
}

void scheduler::poll() {
  since_poll_ = 0;
  // Relaxed: a monotonic hint for the watchdog, nothing is published with it.
  progress_.store(
      stats.tasks_run + stats.context_switches + stats.messages_received - steal_chatter,
      std::memory_order_relaxed);
  if (tls_nudge) {
    tls_nudge = false;
    nudge_watchers();
  }
  if (!watches_.empty() && check_watches()) leave_idle();
  if (!idling_) {  // sample the ready queue while working, not while spinning idle
    const auto len = static_cast<std::uint64_t>(ready_.size());
    ++stats.polls;
    stats.ready_len_sum += len;
    ++stats.ready_len_samples;
    if (len > stats.ready_len_max) stats.ready_len_max = len;
  }
  if (run_hooks(poll_hooks_)) leave_idle();
}

// Acquire: pairs with run()'s release store of exit after quiescence.
bool scheduler::wants_exit() const noexcept { return group_.exit.load(std::memory_order_acquire); }

bool scheduler::startable_task_waiting() const noexcept {
  return (!private_tasks.empty() || public_.size() > 0 || movable_.size() > 0) &&
         (idle_count_ > 0 || workers_created_ < static_cast<std::size_t>(max_workers_));
}

void scheduler::run_loop() {
  tls_core_state = this;
  install_alt_stack();
  mark_thread_stack(sched_ctx_.marks);
  phase_start_ns_ = now_ns();
  inline_task task;
  bool start_first = false;  // alternates ready workers and new tasks when both wait
  for (;;) {
    poll();
    start_first = !start_first && !ready_.empty();
    if (!start_first || !startable_task_waiting()) {
      if (worker_record* w = ready_.pop()) {
        resume(w);
        continue;
      }
    }
    if (idle_count_ > 0 || workers_created_ < static_cast<std::size_t>(max_workers_)) {
      if (take_local_task(task) || try_steal(task)) {
        worker_record* w = obtain_worker();
        w->task = task;
        resume(w);
        continue;
      }
    }
    if (wants_exit()) break;
    idle_step();
  }
  leave_idle();
  remove_alt_stack();
  tls_core_state = nullptr;
}

void scheduler::leave_idle() {
  if (!idling_) return;
  idling_ = false;
  idle_spins_ = 0;
  sleep_us_ = min_sleep_us;
  const std::uint64_t t = now_ns();
  busy_since_ns_.store(t, std::memory_order_relaxed);  // before the flag: readers pair them
  // Release: busy_since_ns_ is written before idle() reads false.
  idle_.store(false, std::memory_order_release);
  stats.idle_ns += t - phase_start_ns_;
  phase_start_ns_ = t;
}

void scheduler::idle_step() {
  if (!idling_) {
    // First idle round: flush staged messages so nothing waits on us.
    run_hooks(idle_hooks_);
    idling_ = true;
    // Release: read with acquire by the starvation check, after idle().
    starved_.store(queued_tasks(), std::memory_order_release);
    const std::uint64_t t = now_ns();
    stats.busy_ns += t - phase_start_ns_;
    phase_start_ns_ = t;
    // Release: the idle hooks' flush and starved_ come before idle() reads
    // true in the quiescence check.
    idle_.store(true, std::memory_order_release);
    return;
  }
  if ((++idle_spins_ & 63) != 0) {
    cpu_relax();
    return;
  }
  const std::uint64_t idle_for = now_ns() - phase_start_ns_;
  if (idle_for < g_idle.spin_ns) return;
  if (idle_for < g_idle.yield_ns) {
    sched_yield();
    return;
  }
  sleep_word_.store(1, std::memory_order_relaxed);
  group_.sleepers.fetch_add(1, std::memory_order_relaxed);
  // Orders publishing sleep_word_ before re-checking for work (pairs with the
  // fence in notify()/spawn_public()).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool work = run_hooks(poll_hooks_) || wants_exit() || !ready_.empty() ||
                    (!watches_.empty() && check_watches());
  if (!work) futex_wait(&sleep_word_, 1, sleep_us_);
  sleep_word_.store(0, std::memory_order_relaxed);
  group_.sleepers.fetch_sub(1, std::memory_order_relaxed);
  if (work) {
    leave_idle();
  } else {
    const std::uint32_t cap =
        g_idle.max_sleep_us < min_sleep_us ? min_sleep_us : g_idle.max_sleep_us;
    sleep_us_ = sleep_us_ * 2 > cap ? cap : sleep_us_ * 2;
  }
}

void scheduler::notify() noexcept {
  // Orders the caller's publication before reading sleep_word_.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleep_word_.load(std::memory_order_relaxed) != 0) {
    sleep_word_.store(0, std::memory_order_relaxed);
    futex_wake(&sleep_word_);
  }
}

}  // namespace shoal::detail

namespace shoal::detail {

std::string scheduler::describe() const {
  std::map<std::string, int> waits;
  stacks_->for_each_worker([&waits](const worker_record& w) {
    if (!w.suspended) return;
    if (w.waiting_tag < 0) {
      ++waits[w.waiting_on];
    } else if (w.waiting_tag < (std::int64_t{1} << 32)) {
      ++waits[fmt::format("{} #{}", w.waiting_on, w.waiting_tag)];
    } else {
      ++waits[fmt::format("{} #{:#x}", w.waiting_on, w.waiting_tag)];
    }
  });
  std::string out =
      fmt::format("core {}: {}, {} ready, {} tasks queued, {} workers", g_info.rank_base + core_,
                  idle() ? "idle" : "busy", ready_.size(), queued_tasks(), workers_created_);
  for (const auto& [why, n] : waits) out += fmt::format(", {} waiting on {}", n, why);
  return out;
}

}  // namespace shoal::detail
