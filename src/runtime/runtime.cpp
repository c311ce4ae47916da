// Assembles the layers for one process: schedulers (tasks), aggregators
// (comm) and the global heap (memory), and runs the root task. How a run
// ends lives beside it: quiescence.cpp (one process), termination_waves.cpp
// (several), watchdog.cpp and progress_thread.hpp.
#include "shoal/runtime.hpp"

#include "shoal/detail/aggregator.hpp"
#include "shoal/exit_status.hpp"
#include "shoal/global_completion_event.hpp"
#include "shoal/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "memory/one_sided_impl.hpp"
#include "runtime/cpu_binding.hpp"
#include "runtime/idle_choice.hpp"
#include "runtime/progress_thread.hpp"
#include "runtime/quiescence.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/termination_waves.hpp"
#include "tasks/stack_pool.hpp"
#include "transport/transport.hpp"

extern char** environ;

namespace shoal {
namespace detail {
namespace {

runtime_state* g_rt = nullptr;

bool poll_hook(void* a) { return static_cast<aggregator*>(a)->poll(); }
bool idle_hook(void* a) { return static_cast<aggregator*>(a)->on_idle(); }

void build_cores(runtime_state& rt) {
  const config& c = rt.cfg;
  const int n = c.cores;
  for (int i = 0; i < n; ++i) {
    rt.schedulers.push_back(std::make_unique<scheduler>(
        i, rt.group, static_cast<std::size_t>(c.stack_kb) * 1024, c.max_workers_per_core));
    rt.group.cores.push_back(rt.schedulers.back().get());
  }
  for (int i = 0; i < n; ++i) {
    scheduler& s = *rt.schedulers[static_cast<std::size_t>(i)];
    rt.aggregators.push_back(std::make_unique<aggregator>(
        i, g_info.rank_base, g_info.total_cores, static_cast<std::size_t>(c.aggregation_bytes),
        c.buffers_per_core, static_cast<std::uint64_t>(c.flush_us) * 1000, s, s.stats));
    s.add_poll_hook({poll_hook, rt.aggregators.back().get()});
    s.add_idle_hook({idle_hook, rt.aggregators.back().get()});
    if (rt.net != nullptr) {
      rt.stealers.push_back(std::make_unique<remote_stealer>(s));
      s.add_poll_hook({remote_stealer::poll_hook, rt.stealers.back().get()});
    }
  }
}

void core_main(runtime_state& rt, int i) {
  tls_core = g_info.rank_base + i;
  tls_aggregator = rt.aggregators[static_cast<std::size_t>(i)].get();
  rt.schedulers[static_cast<std::size_t>(i)]->run_loop();
  tls_aggregator = nullptr;
  tls_core = -1;
}

void record_teardown(runtime_state& rt) {
  teardown_report r;
  for (auto& s : rt.schedulers) {
    r.live_workers += s->live_workers();
    r.queued_tasks += s->queued_tasks();
  }
  for (auto& a : rt.aggregators) r.buffers_out += a->buffers_out_after_drain();
  rt.last = r;
}

}  // namespace

scheduler& scheduler_of(int local_core) noexcept {
  return *g_rt->schedulers[static_cast<std::size_t>(local_core)];
}

remote_stealer& stealer_of(int local_core) noexcept {
  return *g_rt->stealers[static_cast<std::size_t>(local_core)];
}

aggregator& aggregator_of(int local_core) noexcept {
  return *g_rt->aggregators[static_cast<std::size_t>(local_core)];
}

global_heap& heap() noexcept { return *g_rt->heap; }
void reset_barrier(int local_cores);

std::exception_ptr run_root(const inline_task& root) {
  SHOAL_CHECK(g_rt != nullptr, "shoal::run() called before shoal::init()");
  SHOAL_CHECK(!g_info.running, "shoal::run() called while the runtime is already running");
  runtime_state& rt = *g_rt;
  // Counted over the process's life (init/finalize cycles too): a peer that
  // left after fewer runs ends the job here rather than hanging this one.
  static std::uint64_t runs_started = 0;
  current_transport()->note_run_started(++runs_started);
  // Relaxed (were seq_cst): no core thread runs yet; starting them below
  // orders these stores before all their reads.
  rt.root_done.store(false, std::memory_order_relaxed);
  rt.root_error = nullptr;
  rt.group.exit.store(false, std::memory_order_relaxed);
  struct root_frame {
    inline_task task;
    runtime_state* rt;
  } frame{root, &rt};
  root_frame* fp = &frame;
  if (g_info.rank == 0)
    rt.schedulers[0]->spawn_private(inline_task::make([fp] {
      try {
        fp->task();
      } catch (...) {
        fp->rt->root_error = std::current_exception();
      }
      {
        lock_guard lock(fp->rt->root_mu);
        // Release: root_error is written before wait_*() reads root_done.
        fp->rt->root_done.store(true, std::memory_order_release);
      }
      fp->rt->root_cv.notify_one();
    }));
  // The root runs on rank 0 only. Relaxed (was seq_cst): this thread alone
  // reads it, and the core threads start after.
  if (g_info.rank != 0) rt.root_done.store(true, std::memory_order_relaxed);
  g_info.running = true;
  std::vector<std::thread> threads;
  for (int i = 0; i < rt.cfg.cores; ++i) threads.emplace_back(core_main, std::ref(rt), i);
  if (rt.net != nullptr) {
    std::unique_ptr<progress_thread> driver;
    if (rt.cfg.progress_thread) driver = std::make_unique<progress_thread>(*rt.net);
    wait_terminated(rt);
  } else {
    wait_quiescent(rt);
  }
  // Release: pairs with wants_exit()'s acquire; the run's end is published.
  rt.group.exit.store(true, std::memory_order_release);
  for (auto& s : rt.schedulers) s->notify();
  for (auto& t : threads) t.join();
  // Every rank's cores have stopped before any rank may start the next run:
  // otherwise a fast rank's next root could send to cores still finishing
  // this run, which would then run next-run messages in this one.
  if (rt.net != nullptr) rt.net->with_transport([](transport& t) { t.barrier(); });
  current_transport()->note_run_ended();
  g_info.running = false;
  record_teardown(rt);
  return rt.root_error;
}

teardown_report last_teardown() noexcept {
  return g_rt != nullptr ? g_rt->last : teardown_report{};
}

}  // namespace detail

namespace {}  // namespace

// Threads made without an explicit size (ours, MPI's, the C++ library's)
// get RLIMIT_STACK as their stack, and so does the main thread: under
// `ulimit -s 16` the process died by SIGSEGV with no message, at random,
// often before main(). Checked as the program starts (a constructor that
// runs before other initialisers) and refused with a message.
constexpr rlim_t min_stack_limit = rlim_t{1} << 20;

[[gnu::constructor(101)]] void check_stack_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_STACK, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return;
  if (r.rlim_cur >= min_stack_limit) return;
  char msg[200];
  const int n = std::snprintf(msg, sizeof msg,
                              "shoal: error: the stack size limit (ulimit -s) is %llu KiB; shoal's "
                              "threads need at least %llu KiB: raise it (ulimit -s 8192)\n",
                              static_cast<unsigned long long>(r.rlim_cur >> 10),
                              static_cast<unsigned long long>(min_stack_limit >> 10));
  ssize_t ignored = write(STDERR_FILENO, msg, static_cast<std::size_t>(n));
  (void)ignored;
  _exit(exit_status::usage);
}

namespace {

void setup(const config& cfg, const std::vector<std::string>& args) {
  using namespace detail;
  SHOAL_CHECK(g_rt == nullptr, "shoal::init() called twice without finalize()");
  auto rt = std::make_unique<runtime_state>();
  rt->cfg = cfg;
  // Open MPI, when it sees more ranks than slots, makes MPI_Test call
  // sched_yield when nothing arrived. Shoal's cores call it under the
  // transport's lock, so the yielding thread keeps the lock while every
  // other rank runs: on 2 CPUs, 12 ranks x 2 cores took 20-30 s for a
  // 0.02 s gups. How a core waits is --idle's business (idle_choice.hpp),
  // so MPI's yield is turned off unless the user asked for it. Except under
  // --one-sided rma: a core waiting inside MPI for a passive-target
  // operation needs the target process to run (Open MPI's pt2pt RMA
  // progresses in the target's MPI calls), and without the yield the
  // waiter kept the CPU: one_sided_job at 3 x 2 took 8-76 s instead of
  // 0.7 s (its cas_lock check 72 s instead of 0.1 s).
  if (cfg.one_sided != one_sided_kind::rma)
    setenv("OMPI_MCA_mpi_yield_when_idle", "0", /*overwrite=*/0);
  transport& net = obtain_transport(cfg.transport, cfg.join_s);
  g_info = process_info{};
  ++g_init_epoch;
  g_info.rank = net.rank();
  g_info.ranks = net.ranks();
  // Crash signals are named from here on (with this rank), not only once
  // the cores exist: the start-up check below can take seconds, and a
  // signal then used to end the process with no word from shoal.
  install_overflow_handler(static_cast<std::size_t>(cfg.stack_kb) * 1024);
  net.watch_peers(cfg.watchdog_s, cfg.join_s);
  check_job_consistency(net, cfg, args);
  g_info.local_cores = cfg.cores;
  g_info.total_cores = cfg.cores * net.ranks();
  g_info.rank_base = cfg.cores * net.rank();
  g_info.block_bytes = cfg.block_bytes;
  g_rt = rt.release();
  const auto heap_total = static_cast<std::size_t>(cfg.heap_mb) << 20;
  const std::size_t heap_mapped =
      global_heap::mapped_bytes(heap_total, cfg.cores, static_cast<std::size_t>(cfg.block_bytes));
  // shm puts the heap in node-shared memory, made here (collective).
  char* shared_heap = one_sided_prepare(cfg, net, heap_mapped);
  g_rt->heap = std::make_unique<global_heap>(
      heap_total, cfg.cores, static_cast<std::size_t>(cfg.block_bytes), shared_heap);
  if (net.ranks() > 1)
    g_rt->net = std::make_unique<network>(net, static_cast<std::size_t>(cfg.network_bytes), 4,
                                          static_cast<std::size_t>(cfg.cores) *
                                              static_cast<std::size_t>(cfg.buffers_per_core) *
                                              static_cast<std::size_t>(cfg.aggregation_bytes),
                                          cfg.node_messages == node_messages_kind::shm);
  // Binding first: the cores start below with the widened mask, and the
  // idle policy reads the mask as it is after it.
  const std::string bound =
      apply_binding(choose_binding(cfg.bind, cfg.cores, this_cpu_picture(net.ranks()),
                                   this_local_rank(net.ranks()), online_cpus()));
  const idle_choice idle = choose_idle(cfg.idle, cfg.cores, this_cpu_picture(net.ranks()));
  set_idle_policy(idle.policy);
  build_cores(*g_rt);
  make_event_table(cfg.cores);
  g_rt->default_gce.reset(global_completion_event::make_default());
  reset_barrier(cfg.cores);
  if (g_info.rank == 0)
    for (const std::string& w : config::unknown_env(environ))
      std::fprintf(stderr, "shoal: warning: %s\n", w.c_str());
  if (cfg.verbose && g_info.rank == 0)
    std::fprintf(stderr, "shoal: configuration (%d ranks, transport %s)\n%s", net.ranks(),
                 net.name(), cfg.describe().c_str());
  if (cfg.verbose && g_info.rank == 0)
    std::fprintf(stderr, "shoal: idle cores: %s\nshoal: cpus: %s\n", idle.words.c_str(),
                 bound.c_str());
  if (cfg.verbose && g_info.rank == 0 && g_rt->net != nullptr)
    std::fprintf(stderr, "shoal: messages within the node: %s\n", net.node_messages().c_str());
  one_sided_start(cfg, net, g_rt->heap->base(), heap_mapped);
}

}  // namespace

void init(int& argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") break;
    if (std::string_view(argv[i]) == "--help-shoal") {
      std::fputs(config::help().c_str(), stdout);
      std::exit(0);
    }
  }
  config cfg;
  try {
    cfg = config::parse(argc, argv, environ);
  } catch (const config_error& e) {
    std::fprintf(stderr, "shoal: error: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(2);
  }
  // The application's arguments (shoal's flags removed): every rank must
  // have the same, or it would silently run with rank 0's values.
  setup(cfg, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
}

void init(const config& cfg) {
  config c = cfg;
  c.resolve();
  c.validate();
  setup(c, {});
}

global_completion_event& default_gce() noexcept { return *detail::g_rt->default_gce; }

bool initialized() noexcept { return detail::g_rt != nullptr; }

const config& current_config() noexcept { return detail::g_rt->cfg; }

std::vector<core_stats> stats_per_core() {
  std::vector<core_stats> out;
  if (detail::g_rt == nullptr) return out;
  for (auto& s : detail::g_rt->schedulers) out.push_back(s->stats);
  return out;
}

void finalize() {
  using namespace detail;
  if (g_rt == nullptr) return;
  if (g_rt->cfg.stats) std::fputs(stats_table().c_str(), stderr);
  g_rt->default_gce.reset();
  free_event_table();
  g_rt->aggregators.clear();
  g_rt->stealers.clear();
  g_rt->net.reset();
  g_rt->schedulers.clear();
  one_sided_stop();  // the windows over the heap go first (collective)
  g_rt->heap.reset();
  delete g_rt;
  g_rt = nullptr;
  g_info = process_info{};
}

}  // namespace shoal
