// Assembles the layers for one process: schedulers (tasks), aggregators
// (comm) and the global heap (memory), and runs the root task.
#include "shoal/runtime.hpp"

#include "shoal/detail/aggregator.hpp"
#include "tasks/scheduler.hpp"
#include "shoal/global_completion_event.hpp"
#include "shoal/stats.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "memory/global_heap_impl.hpp"
#include "tasks/stack_pool.hpp"
#include "comm/network.hpp"
#include "comm/remote_steal.hpp"
#include "transport/transport.hpp"

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
  std::unique_ptr<network> net;  // jobs of several processes only
  std::vector<std::unique_ptr<remote_stealer>> stealers;  // likewise
  std::unique_ptr<global_completion_event> default_gce;
  std::atomic<bool> root_done{false};
  std::mutex root_mu;  // with root_cv: wakes run()'s thread at once
  std::condition_variable root_cv;
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
    if (rt.net != nullptr) {
      rt.stealers.push_back(std::make_unique<remote_stealer>(s));
      s.add_poll_hook({remote_stealer::poll_hook, rt.stealers.back().get()});
    }
  }
}

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

// --watchdog-s (60 s by default): ends the job when every core has been
// idle, without any progress, for that long while the job is unfinished (a
// deadlock: all workers suspended on something that will not happen). A
// task computing, even without yielding, keeps its core busy, and in a job
// of several processes one busy core anywhere keeps every rank's watchdog
// quiet (the termination waves carry busy and progress), so a long
// computation never trips it. The report names each core's waits ("why #tag").
class watchdog {
 public:
  explicit watchdog(const runtime_state& rt) : rt_(rt), last_(total_progress(rt)) {}

  void check() { check(total_progress(rt_), all_idle(rt_)); }

  /// `now`: a progress count (monotonic); `idle`: whether nothing computes.
  /// In a job of several processes both are job-wide (summed over ranks).
  void check(std::uint64_t now, bool idle) {
    if (now != last_ || !idle) {
      last_ = now;
      since_ = clock::now();
      return;
    }
    if (clock::now() - since_ < std::chrono::seconds(rt_.cfg.watchdog_s)) return;
    std::string report =
        fmt::format("watchdog: no progress for {} s (--watchdog-s); ", rt_.cfg.watchdog_s);
    for (const auto& s : rt_.schedulers) report += s->describe() + "; ";
    report +=
        "usual causes: a collective or barrier() not called by every core, a promise "
        "never set, an event never completed";
    fatal_user(report);
  }

 private:
  using clock = std::chrono::steady_clock;
  const runtime_state& rt_;
  std::uint64_t last_;
  clock::time_point since_ = clock::now();
};

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
    const bool root_done = rt.root_done.load(std::memory_order_acquire);
    if (quiescent_once(rt, signature)) {
      if (root_done) break;
      fail_if_starved(rt);  // quiescent with the root unfinished: stuck for good?
    }
    if (root_done) {
      std::this_thread::sleep_for(pause);
    } else {
      std::unique_lock<std::mutex> lock(rt.root_mu);
      rt.root_cv.wait_for(lock, pause, [&rt] { return rt.root_done.load(); });
    }
    pause = std::min(pause * 2, std::chrono::microseconds(root_done ? 500 : 20000));
    if (watched) dog.check();
  }
  fail_if_starved(rt);
}

// The main thread's pause between looks at the job (see wait_terminated).
std::chrono::microseconds next_pause(std::chrono::microseconds pause, bool moved, bool busy) {
  using us = std::chrono::microseconds;
  if (busy) return us(1000);
  if (pause > us(200)) return us(5);  // the cores just went idle: the end may be near
  return std::min(pause * 2, us(moved ? 50 : 200));
}

// Job of several processes: every rank's main thread drives the network
// when the cores do not, and runs termination waves (Active Pebbles 3.6):
// non-blocking allreduces of (ranks not locally quiescent, batches sent,
// batches received, ranks whose root is finished, busy ranks, progress).
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
  enum { not_quiet, sent, received, roots_done, busy, progress, fields };
  std::uint64_t wave[fields] = {};
  std::uint64_t previous[fields] = {1};
  bool in_flight = false;
  bool stealing = true;
  set_remote_stealing(true);
  auto pause = std::chrono::microseconds(5);
  for (;;) {
    const bool moved = !rt.cfg.progress_thread && net.progress();
    if (!in_flight) {
      const bool root_done = rt.root_done.load(std::memory_order_acquire);
      // Counts first, then quiescence: a batch counted as received before a
      // quiet verdict has been handled (it was in an inbound ring).
      wave[sent] = net.batches_sent();
      wave[received] = net.batches_received();
      const bool quiet = quiescent_once(rt, signature) && quiescent_once(rt, signature);
      wave[not_quiet] = quiet && wave[sent] == net.batches_sent() &&
                                wave[received] == net.batches_received()
                            ? 0
                            : 1;
      wave[roots_done] = root_done ? 1 : 0;
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

// --progress-thread: drives the network continuously while the job runs.
class progress_thread {
 public:
  explicit progress_thread(network& net)
      : thread_([this, &net] {
          while (!stop_.load(std::memory_order_acquire))
            if (!net.progress()) std::this_thread::yield();
        }) {}
  ~progress_thread() {
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

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
  rt.root_done.store(false);
  rt.root_error = nullptr;
  rt.group.exit.store(false);
  struct root_frame {
    inline_task task;
    runtime_state* rt;
  } frame{root, &rt};
  root_frame* fp = &frame;
  if (g_info.rank == 0) rt.schedulers[0]->spawn_private(inline_task::make([fp] {
    try {
      fp->task();
    } catch (...) {
      fp->rt->root_error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(fp->rt->root_mu);
      fp->rt->root_done.store(true, std::memory_order_release);
    }
    fp->rt->root_cv.notify_one();
  }));
  if (g_info.rank != 0) rt.root_done.store(true);  // the root runs on rank 0 only
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
  rt.group.exit.store(true, std::memory_order_release);
  for (auto& s : rt.schedulers) s->notify();
  for (auto& t : threads) t.join();
  // Every rank's cores have stopped before any rank may start the next run:
  // otherwise a fast rank's next root could send to cores still finishing
  // this run, which would then run next-run messages in this one.
  if (rt.net != nullptr) rt.net->with_transport([](transport& t) { t.barrier(); });
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
  transport& net = obtain_transport(cfg.transport);
  check_job_consistency(net, cfg);
  g_info = process_info{};
  ++g_init_epoch;
  g_info.rank = net.rank();
  g_info.ranks = net.ranks();
  g_info.local_cores = cfg.cores;
  g_info.total_cores = cfg.cores * net.ranks();
  g_info.rank_base = cfg.cores * net.rank();
  g_info.block_bytes = cfg.block_bytes;
  g_rt = rt.release();
  g_rt->heap = std::make_unique<global_heap>(static_cast<std::size_t>(cfg.heap_mb) << 20, cfg.cores,
                                             static_cast<std::size_t>(cfg.block_bytes));
  if (net.ranks() > 1)
    g_rt->net = std::make_unique<network>(
        net, static_cast<std::size_t>(cfg.network_bytes), 4,
        static_cast<std::size_t>(cfg.cores) * static_cast<std::size_t>(cfg.buffers_per_core) *
            static_cast<std::size_t>(cfg.aggregation_bytes));
  build_cores(*g_rt);
  make_event_table(cfg.cores);
  g_rt->default_gce.reset(global_completion_event::make_default());
  reset_barrier(cfg.cores);
  install_overflow_handler(static_cast<std::size_t>(cfg.stack_kb) * 1024);
  if (cfg.verbose && g_info.rank == 0)
    std::fprintf(stderr, "shoal: configuration (%d ranks, transport %s)\n%s", net.ranks(),
                 net.name(), cfg.describe().c_str());
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
  free_event_table();
  g_rt->aggregators.clear();
  g_rt->stealers.clear();
  g_rt->net.reset();
  g_rt->schedulers.clear();
  g_rt->heap.reset();
  delete g_rt;
  g_rt = nullptr;
  g_info = process_info{};
}

}  // namespace shoal
