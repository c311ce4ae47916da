// `shoal pointerchase`: Active Pebbles' PointerChase (section 4.2) on shoal.
//
//   shoal pointerchase [--rounds n] [--seed s] [--hold-us t] [--routing r] [--json]
//   shoal pointerchase --chasers C [--targets n] [--steps s] [--seed s]
//                      [--routing direct|hypercube|node] [--reduce none|dedup|min]
//                      [--cache-slots n] [--json]
//
// A token makes --rounds laps of a random ring of every core of the job
// (plain/ring.hpp): each arrival runs a message handler that checks the
// token against ring order and relays it to the ring successor as one small
// closure message, flushed at once (shoal::flush), so it never waits for
// aggregation: the time per hop is the latency of one dependent message.
// As in Active Pebbles there is no loop: control lives in the handler.
// --routing hypercube|node puts the token on a target channel (one target
// per core) routed between processes: a hop to another process may take
// several messages (messages_per_hop in the report).
// Core 0 starts the token and times the run until the last hop, which ends
// on core 0, tells it; then every core's checks are summed (allreduce).
//
// --chasers C runs the throughput form instead (chase_many.cpp): C chains
// of dependent messages at once over a random successor function of
// targets, where chains meet, so that the library's routing and message
// reductions (--routing, --reduce) have hops to take and duplicates to
// remove; the report sets messages removed against the duplicates counted.
//
// Idle cores (--idle auto, a CPU per core) spin for 50 us, then yield the
// CPU until 20 ms, then sleep on a futex (src/tasks/scheduler.cpp). --hold-us
// keeps the token on each core that long (busy; the time actually held is
// measured and subtracted from the reported latency), so the waiting cores
// reach the yielding (hold >= 50 us) or sleeping (>= 20 ms) stage: what
// waking them costs is the difference in latency_us_per_hop.
#include <shoal/shoal.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "pointerchase/chase_many.hpp"
#include "pointerchase/plain/ring.hpp"

namespace shoal_apps {

namespace {

using pointerchase::chase_tally;
using pointerchase::ring_seat;
using pointerchase::token;

/// What each core knows during a run.
struct seat_state {
  ring_seat seat;
  std::int64_t hold_ns = 0;                 ///< busy time per hop before relaying
  std::int64_t held_ns = 0;                 ///< --hold-us time actually spent here
  bool inject_fault = false;                ///< hidden test hook: skip a hop number
  shoal::completion_event* done = nullptr;  ///< core 0: the root's end of run
};

shoal::per_core<seat_state> g_seats;

/// Busy-waits `ns` nanoseconds (the --hold-us work of one hop); returns the
/// nanoseconds it took (more when the OS took the CPU away meanwhile).
std::int64_t hold(std::int64_t ns) {
  if (ns <= 0) return 0;
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::nanoseconds(ns);
  auto now = start;
  while (now < until) now = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
}

/// Ends the run: tells the root task on core 0. Handler context, any core.
void finish() {
  if (shoal::mycore() == 0) {
    g_seats.local().done->complete();
    return;
  }
  shoal::send(0, [] { g_seats.local().done->complete(); });
  shoal::flush();
}

/// --routing hypercube|node on the ring: one target per core (its seat).
struct seat_targets {
  shoal::target_location locate(std::uint64_t core) const noexcept {
    return {static_cast<int>(core), 0};
  }
  const char* name() const noexcept { return "pointerchase seats (one per core)"; }
};
using ring_channel =
    shoal::target_channel<token, seat_targets, shoal::reduction::none, shoal::named_routing>;
/// Every core's handle of the routed ring (default: closures, not routed).
thread_local ring_channel t_ring;

void relay(token t);

/// Hands the token to core `succ`, flushed at once: a closure message, or
/// on the routed ring a value of the target channel (a hop between
/// processes leaves when the hop's core flushes: at once, it is idle).
void pass(int succ, const token& n) {
  if (t_ring) {
    t_ring.send(static_cast<std::uint64_t>(succ), n);
    t_ring.flush();
    return;
  }
  shoal::send(succ, [n] { relay(n); });
  shoal::flush();
}

/// The token's arrival at this core: check it, relay it (flushed at once)
/// or end the run. Handler context.
void relay(token t) {
  seat_state& st = g_seats.local();
  st.seat.arrive(t);
  if (st.seat.last(t)) {
    finish();
    return;
  }
  st.held_ns += hold(st.hold_ns);
  token n = st.seat.next(t);
  if (st.inject_fault && n.hop == 2) n.hop = 3;  // a hop lost: validation must notice
  pass(st.seat.succ, n);
}

struct chase_options_all {
  pointerchase::chase_options chase;
  double hold_us = 0;
  bool inject_fault = false;
  pointerchase::chase_many_options many;  ///< --chasers C > 0
  /// Options of one form only, to refuse them in the other (the command
  /// line outlives the run).
  const CLI::Option* ring_only[2] = {nullptr, nullptr};  ///< --rounds, --hold-us
  const CLI::Option* many_only[2] = {nullptr, nullptr};  ///< --targets, --steps
  const CLI::Option* cache_slots = nullptr;              ///< refused without --reduce
};

/// Throws input_error when an option of the other form was given.
void check_form(const chase_options_all& o) {
  const bool many = o.many.problem.chasers != 0;
  for (const CLI::Option* opt : many ? o.ring_only : o.many_only) {
    if (opt != nullptr && opt->count() > 0)
      throw input_error(fmt::format("{}: applies to {} only", opt->get_name(),
                                    many ? "the token ring (no --chasers)" : "--chasers C > 0"));
  }
  refuse_unused(o.cache_slots, o.many.reduce != "none", "--reduce dedup or min");
}

/// Every core takes its seat in the ring. Blocking; root task.
void seat_all(const chase_options_all& o) {
  const std::int64_t rounds = o.chase.rounds;
  const std::uint64_t seed = o.chase.seed;
  const auto hold_ns = static_cast<std::int64_t>(o.hold_us * 1000.0);
  const bool fault = o.inject_fault;
  shoal::on_all_cores([rounds, seed, hold_ns, fault] {
    seat_state& st = g_seats.local();
    st = seat_state{};
    st.seat = pointerchase::make_seat(pointerchase::make_ring(shoal::cores(), seed),
                                      shoal::mycore(), rounds);
    st.hold_ns = hold_ns;
    st.inject_fault = fault;
  });
}

/// Sends the token on its laps and returns the seconds until its last hop.
/// Blocking; root task (core 0).
double chase() {
  seat_state& st = g_seats.local();
  shoal::completion_event done(1);
  st.done = &done;
  const token first = pointerchase::first_token(st.seat);
  const int succ = st.seat.succ;
  const auto t0 = std::chrono::steady_clock::now();
  pass(succ, first);
  done.wait();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.done = nullptr;
  return s;
}

/// Every core's checks, and the time spent holding the token, summed.
struct run_tally {
  chase_tally chase;
  std::int64_t held_ns = 0;
};

/// Every core's run_tally, summed. Blocking; root task.
run_tally tally_all() {
  run_tally total;
  run_tally* out = &total;  // dereferenced on core 0 only (the root's core)
  shoal::on_all_cores([out] {
    const seat_state& st = g_seats.local();
    const run_tally t =
        shoal::allreduce(run_tally{chase_tally::of(st.seat), st.held_ns},
                         [](const run_tally& a, const run_tally& b) {
                           return run_tally{a.chase + b.chase, a.held_ns + b.held_ns};
                         });
    if (shoal::mycore() == 0) *out = t;
  });
  return total;
}

/// --chasers C: the many-chasers form (chase_many.cpp).
void run_many(const chase_options_all& o, run_context& ctx) {
  pointerchase::chase_many_options m = o.many;
  m.problem.seed = o.chase.seed;
  m.problem.cores = shoal::cores();
  m.routing = shoal::named_routing::from_name(m.routing_name);
  m.inject_fault = o.inject_fault;
  pointerchase::check_chasers(m.problem);
  shoal::run([&] { pointerchase::run_chase_many(m, ctx.out); });
}

void run_pointerchase(const chase_options_all& o, run_context& ctx) {
  check_form(o);
  if (o.many.problem.chasers != 0) {
    run_many(o, ctx);
    return;
  }
  if (o.many.reduce != "none")
    throw input_error(
        fmt::format("--reduce {}: reductions apply to --chasers C > 0 only (one "
                    "token has no duplicates)",
                    o.many.reduce));
  pointerchase::check_options(o.chase);
  if (!(o.hold_us >= 0 && o.hold_us <= 1e6))
    throw input_error(
        fmt::format("--hold-us {}: out of range; expected a number in [0, 1000000]", o.hold_us));
  const bool routed = o.many.routing_name != "direct";
  const shoal::named_routing routing = shoal::named_routing::from_name(o.many.routing_name);
  shoal::run([&] {
    seat_all(o);
    ring_channel ring;
    if (routed) {
      // Every hop a message (no short-circuit), as on the closure ring.
      ring = shoal::make_target_channel<token>(
          seat_targets{}, [](std::uint64_t, const token& t) { relay(t); }, {.short_circuit = false},
          shoal::reduction::none{}, routing);
      shoal::on_all_cores([ring] { t_ring = ring; });
    }
    const double seconds = chase();
    const run_tally t = tally_all();
    if (routed) {
      std::int64_t forwarded = 0;
      std::int64_t* out = &forwarded;  // dereferenced on core 0 only
      shoal::on_all_cores([out] {
        const bool first = shoal::mycore() % shoal::local_cores() == 0;
        const auto f = shoal::allreduce_sum(
            first ? static_cast<std::int64_t>(t_ring.local_route_stats().forwarded) : 0);
        if (shoal::mycore() == 0) *out = f;
      });
      shoal::on_all_cores([] { t_ring = ring_channel(); });
      ring.close();
      const double hops = static_cast<double>(o.chase.rounds) * shoal::cores();
      ctx.out.set("routing", o.many.routing_name);
      ctx.out.set("values_forwarded", forwarded);
      ctx.out.set("messages_per_hop", (hops + static_cast<double>(forwarded)) / hops);
    }
    pointerchase::fill_report(ctx.out, o.chase, shoal::cores(), "core", seconds, t.chase);
    // --hold-us is work, not latency: take the time actually held (which
    // includes any preemption during the hold) out of the per-hop figure.
    const double hops = static_cast<double>(o.chase.rounds) * shoal::cores();
    const double per_hop_us = seconds * 1e6 / hops;
    ctx.out.set("hold_us", o.hold_us);
    if (o.hold_us > 0) {
      const double held_us = static_cast<double>(t.held_ns) / 1e3 / hops;
      ctx.out.set("latency_us_per_hop", per_hop_us - held_us);
      ctx.out.set("held_us_per_hop", held_us);
      ctx.out.set("raw_us_per_hop", per_hop_us);
    }
  });
}

}  // namespace

app_spec pointerchase_app() {
  return {
      "pointerchase",
      "Active Pebbles PointerChase: a token relayed around a random ring of all cores "
      "(latency per hop); --chasers C: C chains at once, routed and reduced (throughput)",
      {"closure"},
      [](CLI::App& cmd) -> runner {
        auto o = std::make_shared<chase_options_all>();
        pointerchase::add_chase_options(cmd, o->chase);
        o->ring_only[0] = cmd.get_option("--rounds");
        o->ring_only[1] =
            cmd.add_option("--hold-us", o->hold_us,
                           "busy time each core keeps the token before relaying it, taken out of "
                           "latency_us_per_hop: shows what waking idle (yielding or sleeping) "
                           "cores costs")
                ->capture_default_str();
        pointerchase::chase_many_options& m = o->many;
        m.problem.targets_per_core = 1024;
        m.problem.steps = 16;
        cmd.add_option("--chasers", m.problem.chasers,
                       "chasers at once on a random successor function of targets "
                       "(throughput, with routing and reductions); 0: the token ring")
            ->capture_default_str();
        o->many_only[0] =
            cmd.add_option("--targets", m.problem.targets_per_core, "targets per core (--chasers)")
                ->capture_default_str();
        o->many_only[1] =
            cmd.add_option("--steps", m.problem.steps, "steps each chaser makes (--chasers)")
                ->capture_default_str();
        cmd.add_option("--routing", m.routing_name,
                       "how the token (ring) or the chasers' messages travel between "
                       "processes: direct, hypercube (log2 P hops, peers one bit away) or "
                       "node (through one process per node; processes per node from the "
                       "launcher); on the ring anything but direct puts the token on a "
                       "routed target channel")
            ->check(CLI::IsMember({"direct", "hypercube", "node"}))
            ->capture_default_str();
        cmd.add_option("--reduce", m.reduce,
                       "message reduction keyed by (target, step) at the source and every "
                       "hop (--chasers): none, dedup (keep one) or min (keep the least "
                       "chaser id)")
            ->check(CLI::IsMember({"none", "dedup", "min"}))
            ->capture_default_str();
        o->cache_slots = cmd.add_option("--cache-slots", m.cache_slots,
                                        "slots of each core's reduction cache (--reduce)")
                             ->check(CLI::Range(1U, shoal::max_cache_slots))
                             ->capture_default_str();
        // Hidden: loses one hop, so validation must fail.
        hide_from_help(cmd, cmd.add_flag("--inject-fault-for-test", o->inject_fault));
        return [o](run_context& ctx) { run_pointerchase(*o, ctx); };
      }};
}

}  // namespace shoal_apps
