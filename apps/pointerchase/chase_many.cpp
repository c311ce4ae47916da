// `shoal pointerchase --chasers C`: many chasers at once (plain/chasers.hpp
// for the problem and its checks).
//
// A visit (t, s) is a target of a target channel (id s x N + t; the owner
// is t's, the local index s x targets + t mod targets), carrying the
// chaser's id. Its handler, on t's owner, records the least id that arrived
// and, below the last step, sends (succ(t), s + 1) with the same id: chains
// of dependent messages as in PointerChase, C of them at once, coalesced.
// The handler relays every arrival, duplicates included: only the library's
// reduction (--reduce dedup or min, keyed by the visit, at the source and at
// every routing hop) removes duplicates, so messages removed can be set
// against the duplicates the owners count (arrivals at a visit already
// reached). The phase ends with end_phase (counting: the chains are up to
// steps + 1 deep, times the hops of the routing).
#include "pointerchase/chase_many.hpp"

#include <shoal/shoal.hpp>

#include <chrono>
#include <concepts>
#include <vector>

#include "common/routed_traffic.hpp"

namespace shoal_apps::pointerchase {

namespace {

/// Visits as targets: id s x N + t -> (owner of t, s x per + t mod per).
struct visit_targets {
  std::uint64_t n = 1;    ///< targets in all
  std::uint64_t per = 1;  ///< targets per core
  shoal::target_location locate(std::uint64_t id) const noexcept {
    const std::uint64_t t = id % n;
    return {static_cast<int>(t / per), id / n * per + t % per};
  }
  const char* name() const noexcept { return "pointerchase visits (step x targets + target)"; }
};

/// One core's record of the run.
struct chase_state {
  chasers_problem problem;
  std::vector<std::uint32_t> least;  ///< per local visit: least chaser id arrived
  std::int64_t arrivals = 0;
  std::int64_t duplicates = 0;
  bool inject_fault = false;
};

shoal::per_core<chase_state> g_chase;

template <class R>
using visit_channel = shoal::target_channel<std::uint32_t, visit_targets, R, shoal::named_routing>;
template <class R>
thread_local visit_channel<R> t_visits;

/// A chaser's message arrived at visit `local` of this core. Handler
/// context (or the sender's, short-circuited).
template <class R>
struct on_visit {
  void operator()(std::uint64_t local, const std::uint32_t& id) const {
    chase_state& c = g_chase.local();
    ++c.arrivals;
    std::uint32_t& seen = c.least[local];
    if (seen != no_chaser) ++c.duplicates;
    if (id < seen) seen = id;
    const chasers_problem& p = c.problem;
    const auto per = static_cast<std::uint64_t>(p.targets_per_core);
    const auto s = static_cast<std::int64_t>(local / per);
    if (s >= p.steps) return;
    const std::uint64_t t = static_cast<std::uint64_t>(shoal::mycore()) * per + local % per;
    std::uint64_t next = p.succ(t);
    if (c.inject_fault && id == 0 && s == 0) next = (next + 1) % p.targets();  // lost its way
    t_visits<R>.send(p.visit_id(next, s + 1), id);
  }
};

/// Job-wide counts, filled on core 0.
struct chase_counts {
  chasers_tally tally;
  routed_traffic traffic;
  double seconds = 0;
};

template <class R>
void run_with(const chase_many_options& o, chase_counts& k) {
  const chasers_problem& p = o.problem;
  const visit_targets d{p.targets(), static_cast<std::uint64_t>(p.targets_per_core)};
  const shoal::target_channel_options co{
      .cache_slots = std::same_as<R, shoal::reduction::none> ? 0 : o.cache_slots};
  const auto ch = shoal::make_target_channel<std::uint32_t>(d, on_visit<R>{}, co, R{}, o.routing);
  const chasers_problem prob = p;
  const bool fault = o.inject_fault;
  shoal::on_all_cores([prob, fault] {
    chase_state& c = g_chase.local();
    c = chase_state{};
    c.problem = prob;
    c.least.assign(prob.visits_per_core(), no_chaser);
    c.inject_fault = fault;
  });
  shoal::on_all_cores([ch] { t_visits<R> = ch; });
  chase_counts* out = &k;  // dereferenced on core 0 only (the root's core)
  const bool exact = !std::same_as<R, shoal::reduction::drop_duplicates>;
  shoal::on_all_cores([out, exact] {
    const visit_channel<R>& ch = t_visits<R>;
    chase_state& c = g_chase.local();
    const chasers_problem& p = c.problem;
    mark_phase_traffic();
    shoal::barrier();
    const auto t0 = std::chrono::steady_clock::now();
    int sent = 0;
    for (std::int64_t id = shoal::mycore(); id < p.chasers; id += shoal::cores()) {
      ch.send(p.visit_id(p.start(static_cast<std::uint64_t>(id)), 0),
              static_cast<std::uint32_t>(id));
      if ((++sent & 63) == 0) shoal::yield();  // serve the others' chasers meanwhile
    }
    ch.end_phase();
    shoal::barrier();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Counts, then the check (untimed).
    chase_counts k{};
    k.traffic = sum_routed_traffic(ch);
    chasers_tally mine;
    mine.arrivals = c.arrivals;
    mine.duplicates = c.duplicates;
    check_core(p, shoal::mycore(), c.least, exact, mine);
    k.tally = shoal::allreduce(
        mine, [](const chasers_tally& a, const chasers_tally& b) { return a + b; });
    k.seconds = seconds;
    if (shoal::mycore() == 0) *out = k;
  });
  auto closing = ch;
  closing.close();
  shoal::on_all_cores([] {
    g_chase.local() = chase_state{};
    t_visits<R> = visit_channel<R>();
  });
}

}  // namespace

void run_chase_many(chase_many_options o, report& out) {
  o.problem.cores = shoal::cores();
  chase_counts k;
  if (o.reduce == "dedup")
    run_with<shoal::reduction::drop_duplicates>(o, k);
  else if (o.reduce == "min")
    run_with<shoal::reduction::min>(o, k);
  else
    run_with<shoal::reduction::none>(o, k);
  const bool reduced = o.reduce != "none";
  fill_chasers_report(out, o.problem, k.seconds, k.tally, reduced);
  out.set("routing", o.routing_name);
  out.set("reduce", o.reduce);
  report_routed_traffic(out, k.traffic);
}

}  // namespace shoal_apps::pointerchase
