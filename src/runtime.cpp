// Assembles the layers for one process: schedulers (tasks), aggregators
// (comm) and the global heap (memory), and runs the root task.
#include "shoal/runtime.hpp"

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/scheduler.hpp"
#include "shoal/global_completion_event.hpp"
#include "shoal/stats.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "global_heap_impl.hpp"
#include "stack_pool.hpp"

extern char** environ;

namespace shoal {
namespace detail {
namespace {

struct runtime_state {
  config cfg;
  core_group group;
  std::vector<std::unique_ptr<scheduler>> schedulers;
  std::vector<std::unique_ptr<aggregator>> aggregators;
  std::unique_ptr<global_heap> heap;
  std::unique_ptr<global_completion_event> default_gce;
  std::atomic<bool> root_done{false};
  std::exception_ptr root_error;
  teardown_report last{};
};

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
  }
}

// Quiescent: every core idle and every delivered buffer processed, seen the
// same way twice in a row.
bool quiescent_once(runtime_state& rt, std::uint64_t& signature) {
  for (auto& s : rt.schedulers)
    if (!s->idle()) return false;
  std::uint64_t delivered = 0, processed = 0;
  for (auto& a : rt.aggregators) {
    processed += a->processed();
    delivered += a->delivered();
  }
  for (auto& a : rt.aggregators)
    if (a->has_pending_delivery()) return false;
  if (delivered != processed) return false;
  for (auto& s : rt.schedulers)
    if (!s->idle()) return false;
  const bool same = signature == delivered + 1;
  signature = delivered + 1;
  return same;
}

std::uint64_t total_progress(const runtime_state& rt) {
  std::uint64_t sum = 0;
  for (const auto& s : rt.schedulers) sum += s->progress();
  return sum;
}

// Waits for the root task like wait_quiescent, but ends the job with a
// report when no core has made progress for --watchdog-s seconds.
void watch_root(runtime_state& rt) {
  using clock = std::chrono::steady_clock;
  std::uint64_t last = total_progress(rt);
  auto last_change = clock::now();
  while (!rt.root_done.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::uint64_t now = total_progress(rt);
    if (now != last) {
      last = now;
      last_change = clock::now();
      continue;
    }
    if (clock::now() - last_change < std::chrono::seconds(rt.cfg.watchdog_s)) continue;
    std::string report =
        fmt::format("watchdog: no progress for {} s (--watchdog-s); ", rt.cfg.watchdog_s);
    for (const auto& s : rt.schedulers) report += s->describe() + "; ";
    fatal_user(report);
  }
}

void wait_quiescent(runtime_state& rt) {
  std::uint64_t signature = 0;
  // Block (futex) until the root task ends, so this thread takes no CPU
  // from the cores meanwhile; then poll briefly for quiescence.
  if (rt.cfg.watchdog_s > 0) {
    watch_root(rt);
  } else {
    rt.root_done.wait(false, std::memory_order_acquire);
  }
  auto pause = std::chrono::microseconds(5);
  while (!quiescent_once(rt, signature)) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
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

aggregator& aggregator_of(int local_core) noexcept {
  return *g_rt->aggregators[static_cast<std::size_t>(local_core)];
}

global_heap& heap() noexcept { return *g_rt->heap; }
void reset_barrier(int local_cores);

std::exception_ptr run_root(const inline_task& root) {
  SHOAL_CHECK(g_rt != nullptr, "shoal::run() called before shoal::init()");
  SHOAL_CHECK(!g_info.running, "shoal::run() called while the runtime is already running");
  runtime_state& rt = *g_rt;
  rt.root_done.store(false);
  rt.root_error = nullptr;
  rt.group.exit.store(false);
  struct root_frame {
    inline_task task;
    runtime_state* rt;
  } frame{root, &rt};
  root_frame* fp = &frame;
  rt.schedulers[0]->spawn_private(inline_task::make([fp] {
    try {
      fp->task();
    } catch (...) {
      fp->rt->root_error = std::current_exception();
    }
    fp->rt->root_done.store(true, std::memory_order_release);
    fp->rt->root_done.notify_one();
  }));
  g_info.running = true;
  std::vector<std::thread> threads;
  for (int i = 0; i < rt.cfg.cores; ++i) threads.emplace_back(core_main, std::ref(rt), i);
  wait_quiescent(rt);
  rt.group.exit.store(true, std::memory_order_release);
  for (auto& s : rt.schedulers) s->notify();
  for (auto& t : threads) t.join();
  g_info.running = false;
  record_teardown(rt);
  return rt.root_error;
}

teardown_report last_teardown() noexcept {
  return g_rt != nullptr ? g_rt->last : teardown_report{};
}

}  // namespace detail

namespace {

void setup(const config& cfg) {
  using namespace detail;
  SHOAL_CHECK(g_rt == nullptr, "shoal::init() called twice without finalize()");
  auto rt = std::make_unique<runtime_state>();
  rt->cfg = cfg;
  g_info = process_info{};
  g_info.rank = 0;
  g_info.ranks = 1;
  g_info.local_cores = cfg.cores;
  g_info.total_cores = cfg.cores;
  g_info.rank_base = 0;
  g_info.block_bytes = cfg.block_bytes;
  g_rt = rt.release();
  g_rt->heap = std::make_unique<global_heap>(static_cast<std::size_t>(cfg.heap_mb) << 20, cfg.cores,
                                             static_cast<std::size_t>(cfg.block_bytes));
  build_cores(*g_rt);
  g_rt->default_gce = std::make_unique<global_completion_event>();
  reset_barrier(cfg.cores);
  install_overflow_handler(static_cast<std::size_t>(cfg.stack_kb) * 1024);
  if (cfg.verbose && g_info.rank == 0)
    std::fprintf(stderr, "shoal: configuration\n%s", cfg.describe().c_str());
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
  setup(cfg);
}

void init(const config& cfg) {
  config c = cfg;
  c.resolve();
  c.validate();
  setup(c);
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
  g_rt->aggregators.clear();
  g_rt->schedulers.clear();
  g_rt->heap.reset();
  delete g_rt;
  g_rt = nullptr;
  g_info = process_info{};
}

}  // namespace shoal
