// The scheduler of one core (an OS thread).
//
// Contract. Only the owning core's thread touches the ready queue, the
// private task queue, the idle worker list and the wait lists of objects it
// owns; the only cross-thread entry points are the public deque (thieves),
// notify() (wake from idle sleep) and the stop/exit flags. Priority order of a
// scheduling decision: ready (resumed) workers, then new tasks (private queue
// before public deque, run by an idle or new worker), then stealing, then
// idling. Progress hooks (registered by comm) run in the scheduler's own
// context every `poll_interval` switches, at the next switch after
// request_poll() (the aggregator asks when it has sent a bound's worth of
// batches or a poll left arrivals behind: aggregator.hpp's send bound), and
// whenever the core has nothing else to do; they never run inside a worker,
// so a message handler can never interrupt a task midway. Idle policy
// (idle_policy below): spin, then sched_yield, then sleep on a futex with a
// growing timeout (50 us .. 1 ms), each for as long as the policy says;
// notify() cuts the sleep short. Fairness: when resumed workers and new
// tasks both wait, the scheduler alternates between them, so a task that
// yields in a loop cannot starve a task it spawned. What inline code may
// touch (the running worker, the private queue, the block pool, the
// counters) is the core_state base (include/shoal/detail/core_state.hpp);
// the rest is private to src/.
#pragma once

#include "shoal/detail/chase_lev_deque.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/intrusive_list.hpp"

#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tasks/fiber.hpp"
#include "tasks/ready_queue.hpp"
#include "tasks/worker_record.hpp"

namespace shoal::detail {

class stack_pool;
class scheduler;
std::uint64_t now_ns() noexcept;

/// A progress hook: returns true when it did some work.
struct hook {
  bool (*fn)(void* arg);
  void* arg;
};

/// How an idle core waits: it polls with a pause instruction until it has
/// been idle spin_ns, then with sched_yield until yield_ns, then sleeps
/// between polls, 50 us doubling up to max_sleep_us. Any work it finds ends
/// the idle period (the clock restarts at the next one).
///
/// A sleeping core is woken by a delivery from its own process, never by a
/// message from another process: that waits for the sleep to time out. So
/// max_sleep_us is the latency a long wait adds to the next remote message.
struct idle_policy {
  static constexpr std::uint64_t never = ~std::uint64_t{0};
  std::uint64_t spin_ns;
  std::uint64_t yield_ns;
  std::uint32_t max_sleep_us = 1000;
  static constexpr idle_policy spin() noexcept { return {never, never}; }
  static constexpr idle_policy yield() noexcept { return {0, never}; }
  static constexpr idle_policy sleep() noexcept { return {0, 0, 1000}; }
  /// Spin 50 us, yield until 20 ms, then sleep at most 200 us at a time:
  /// for cores with a CPU each. Yielding that long covers the waits of a
  /// run (a rank idle while rank 0 validates a BFS tree for a few ms then
  /// started the next search 35-726 us late when it slept after 1 ms,
  /// against 0-8 us spinning); the sleeps after it bound the CPU an idle
  /// job burns and add at most 200 us to the wait that ends them.
  static constexpr idle_policy mixed() noexcept { return {50'000, 20'000'000, 200}; }
  friend bool operator==(const idle_policy&, const idle_policy&) = default;
};

/// Sets the policy of every core of the process; before the cores start
/// (the runtime calls it at init). Not thread-safe against running cores.
void set_idle_policy(idle_policy p) noexcept;
idle_policy current_idle_policy() noexcept;

/// The cores of one process, for stealing and waking.
struct core_group {
  std::vector<scheduler*> cores;
  std::atomic<int> sleepers{0};
  std::atomic<bool> exit{false};
};

class scheduler : public core_state {
 public:
  static constexpr std::uint32_t poll_interval = 64;

  scheduler(int core, core_group& group, std::size_t stack_bytes, int max_workers);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  /// Body of the core's OS thread; returns once group.exit is set.
  void run_loop();

  // ---- owning core only (or any thread while the cores are stopped) ----
  /// Queues `t` on the private queue, as spawn<local> does (run() uses it
  /// for the root task before the cores start).
  void spawn_private(const inline_task& t) {
    ++stats.tasks_spawned;
    private_tasks.push(t);
  }
  void spawn_public(const inline_task& t);
  /// A task that may run on any core of the job, other processes included
  /// (spawn<anywhere>): stealable by cores of this process like a public
  /// one, and handed to other processes on their steal requests.
  void spawn_movable(const inline_task& t);
  /// Takes one movable task for a thief of another process (oldest first).
  bool give_movable(inline_task& out) { return movable_.steal(out); }
  std::int64_t movable_size() const noexcept { return movable_.size(); }

  /// Requeues the running worker at the tail and runs others. Worker only.
  void yield();
  /// Parks the running worker until wake(); `why` names what it waits for
  /// and `tag` (when not -1) which one: the watchdog prints "why #tag"
  /// (in hex from 2^32 up: an address, see address_tag).
  void suspend(const char* why, std::int64_t tag = -1);
  /// Makes a suspended worker of this core runnable.
  void wake(worker* w) {
    worker_record* r = record_of(w);
    SHOAL_ASSERT(r->suspended, "waking a worker that is not suspended");
    r->suspended = false;
    ready_.push(r);
  }
  /// The running worker's record; null in the scheduler's own context.
  worker_record* running() const noexcept { return record_of(current); }
  bool in_worker() const noexcept { return current != nullptr; }
  int core() const noexcept { return core_; }

  /// Suspends the running worker until `ready(arg)` holds; the scheduler
  /// re-evaluates it at every poll. For conditions other cores make true
  /// (they call nudge_watchers() so a sleeping core re-checks promptly).
  void wait_until(bool (*ready)(const void*), const void* arg, const char* why,
                  std::int64_t tag = -1);

  void add_poll_hook(hook h) { poll_hooks_.push_back(h); }
  void add_idle_hook(hook h) { idle_hooks_.push_back(h); }
  /// Forces the next switch to pass through the scheduler (and its hooks);
  /// from a poll hook, the switch after the worker it resumes next.
  void request_poll() noexcept { since_poll_ = poll_interval; }

  // ---- any thread ----
  /// Cuts an idle sleep short. The caller has published its work first.
  void notify() noexcept;
  /// Whether the core was idle (nothing runnable, staging flushed) when last seen.
  /// Acquire: pairs with the release stores in idle_step()/leave_idle().
  bool idle() const noexcept { return idle_.load(std::memory_order_acquire); }
  /// Whether the core has been out of its idle loop for at least `ns` (a
  /// computation, not a blip such as sending a steal request). Any thread.
  bool busy_for(std::uint64_t ns) const noexcept {
    return !idle() && now_ns() - busy_since_ns_.load(std::memory_order_relaxed) >= ns;
  }
  /// Whether a worker waits in wait_until(). Acquire: pairs with the
  /// release stores in wait_until()/check_watches().
  bool has_watches() const noexcept { return has_watches_.load(std::memory_order_acquire); }
  /// Tasks queued when the core last went idle: nonzero only when every
  /// worker was suspended and the cap forbade new ones.
  /// Acquire: pairs with idle_step()'s release store.
  std::size_t starved_tasks() const noexcept { return starved_.load(std::memory_order_acquire); }
  std::size_t live_workers() const noexcept { return workers_created_ - idle_count_; }
  /// Grows whenever the core runs a task, switches or handles a message;
  /// published at each poll. Any thread (the watchdog).
  std::uint64_t progress() const noexcept { return progress_.load(std::memory_order_relaxed); }
  /// What the core (named by its global id) is doing and what its suspended
  /// workers wait for: a racy snapshot for the watchdog's report, read from
  /// another thread.
  std::string describe() const;
  std::size_t queued_tasks() const noexcept {
    return private_tasks.size() + static_cast<std::size_t>(public_.size() + movable_.size());
  }
  /// Whether the core is in its idle loop now (owning core only).
  bool idling() const noexcept { return idling_; }

  /// Runs fn(arg) on a stack that is not a worker's and returns when it has.
  /// From a worker: on this core's service stack (service_stack_bytes, mapped
  /// at first use, guard page below), two fiber switches there and back. In
  /// the scheduler's own context (the core thread's stack), or when already
  /// on the service stack: directly. Owning core only. fn must not switch
  /// fibers (no yield, suspend or wait) and must not throw.
  /// Why: worker stacks are --stack-kb small (64 KiB by default), and an MPI
  /// library may use more within one call: MPICH 4.0's MPI_Test (ch4:ucx)
  /// overflowed 64 KiB when a worker drove the network. So every transport
  /// call a worker makes (network::progress) runs here.
  void run_off_worker_stack(void (*fn)(void*), void* arg);
  static constexpr std::size_t service_stack_bytes = std::size_t{1} << 20;
  /// Messages of remote stealing handled here (not progress for the watchdog).
  std::uint64_t steal_chatter = 0;
  /// Marks the core busy; called before running handlers so that the work
  /// they create is never mistaken for quiescence.
  void leave_idle();

 private:
  friend void worker_main();
  friend void service_main();

  void switch_from(worker_record* self);
  void resume(worker_record* w);
  bool take_local_task(inline_task& out);
  bool try_steal(inline_task& out);
  void wake_a_thief() noexcept;
  worker_record* obtain_worker();
  bool run_hooks(std::vector<hook>& hooks);
  bool check_watches();
  void poll();
  void idle_step();
  bool wants_exit() const noexcept;
  bool startable_task_waiting() const noexcept;

  const int core_;
  core_group& group_;
  stack_pool* stacks_;
  const int max_workers_;

  fiber sched_ctx_;
  // The service stack (run_off_worker_stack): its context, its lowest byte
  // (null until first used), and the call it is to run.
  fiber service_ctx_;
  char* service_map_ = nullptr;
  void (*service_fn_)(void*) = nullptr;
  void* service_arg_ = nullptr;
  bool in_service_ = false;
  std::uint32_t since_poll_ = 0;
  ready_queue ready_;
  worker_list idle_workers_;
  std::size_t idle_count_ = 0;
  std::size_t workers_created_ = 0;
  std::vector<hook> poll_hooks_;
  std::vector<hook> idle_hooks_;
  struct watch {
    bool (*ready)(const void*);
    const void* arg;
    worker_record* w;
  };
  std::vector<watch> watches_;
  std::uint64_t rng_;

  // Idle state machine.
  bool idling_ = false;
  std::uint32_t idle_spins_ = 0;
  std::uint32_t sleep_us_ = 50;
  std::uint64_t phase_start_ns_ = 0;

  chase_lev_deque public_;
  chase_lev_deque movable_;
  alignas(64) std::atomic<bool> idle_{false};
  std::atomic<std::uint64_t> progress_{0};
  std::atomic<std::uint64_t> busy_since_ns_{0};
  std::atomic<std::size_t> starved_{0};
  std::atomic<bool> has_watches_{false};
  alignas(64) std::atomic<std::uint32_t> sleep_word_{0};
};

/// The scheduler of the calling OS thread (a shoal core; see tls_core_state).
inline scheduler& this_scheduler() noexcept { return static_cast<scheduler&>(*tls_core_state); }

/// Calls f() off the worker stacks (scheduler::run_off_worker_stack) when
/// the caller is a worker; directly on any other thread or context. Every
/// call into the MPI library that a worker makes goes through here.
template <class F>
void off_worker_stack(F&& f) {
  if (tls_core_state == nullptr || !in_worker()) {
    f();
    return;
  }
  this_scheduler().run_off_worker_stack(
      [](void* p) { (*static_cast<std::remove_reference_t<F>*>(p))(); }, &f);
}

/// Wakes every core of the process that has a watch, so it re-checks.
void nudge_watchers() noexcept;

/// The scheduler of local core `local_core` of this process.
scheduler& scheduler_of(int local_core) noexcept;

/// Monotonic nanoseconds.
std::uint64_t now_ns() noexcept;

}  // namespace shoal::detail
