// `shoal randomwalk`: graph random walk (GMT section V.C). V/2 walkers start
// at distinct vertices of a random graph and each takes L random steps, each
// to a random neighbour of its vertex (plain/walk_problem.hpp defines the
// graph and the steps, counter-based, so every implementation takes exactly
// the same walks).
//
//   shoal randomwalk [--scale s | --vertices n] [--edgefactor d] [--length L] [--seed x]
//                    [--impl channel|sequential] [--json]
//
// Implementations: channel (walkers migrate to the owner of their vertex on
// a typed channel, walk_channel.cpp) and sequential (one core walks every
// walk in turn on a compressed-row graph; the reference of the benchmark
// ratio). Validation, untimed, on rank 0 after every run: the number of
// finished walks (V/2), the number of steps (exactly V/2 * L) and the sum of
// every walk's digest of (walker, end vertex, hash of the path) equal to a
// second sequential walk on adjacency lists built from the edge list by
// other code (walk_reference); equal digests mean every walk visited the same
// vertices, each reached along an edge of the input.
#include <shoal/shoal.hpp>

#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "common/app.hpp"
#include "randomwalk/plain/walk_problem.hpp"
#include "randomwalk/walk_channel.hpp"

namespace shoal_apps {

namespace {

using randomwalk::walk_problem;
using randomwalk::walk_run;
using randomwalk::walk_totals;

/// `--impl sequential`: the walks one after the other on one core (rank 0).
walk_run run_sequential(const walk_problem& p) {
  walk_run r;
  if (shoal::myrank() != 0) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const randomwalk::csr_graph g = randomwalk::build_graph(p);
  const auto t1 = std::chrono::steady_clock::now();
  r.totals = randomwalk::walk_sequential(p, g);
  const auto t2 = std::chrono::steady_clock::now();
  r.construction_s = std::chrono::duration<double>(t1 - t0).count();
  r.seconds = std::chrono::duration<double>(t2 - t1).count();
  return r;
}

std::string show(const walk_totals& t) {
  return fmt::format("{} walks, {} steps, digest {:016x}", t.finished, t.steps, t.digest);
}

void validate(const walk_problem& p, const walk_totals& got, report& out) {
  const walk_totals expected = randomwalk::walk_reference(p);
  if (got.finished != p.walkers || got.steps != p.total_steps()) {
    out.set_validated(false, fmt::format("expected {} walks of {} steps ({} steps), got {}",
                                         p.walkers, p.length, p.total_steps(), show(got)));
    return;
  }
  const bool ok = got == expected;
  out.set_validated(ok, ok ? "every walk equal to a sequential walk (L steps along input edges)"
                           : fmt::format("the sequential reference found {}, this run {}",
                                         show(expected), show(got)));
}

void fill_report(const walk_problem& p, const walk_run& r, report& out) {
  out.set_problem(p.describe());
  out.set_time(r.seconds);
  const double rate = r.seconds > 0 ? static_cast<double>(r.totals.steps) / r.seconds : 0.0;
  out.set_rate(rate / 1e6, "Msteps/s");
  out.set("steps_per_s", rate);
  out.set("vertices", p.vertices);
  out.set("edges", p.edges);
  out.set("walkers", p.walkers);
  out.set("length", p.length);
  out.set("steps", r.totals.steps);
  if (r.construction_s >= 0) out.set("construction_s", r.construction_s);
  validate(p, r.totals, out);
}

void run_randomwalk(const randomwalk::walk_options& o, run_context& ctx) {
  const walk_problem p = randomwalk::make_problem(o, shoal::ranks());
  const walk_run r = ctx.impl == "sequential" ? run_sequential(p) : randomwalk::walk_channel(p);
  if (shoal::myrank() == 0) fill_report(p, r, ctx.out);
}

}  // namespace

app_spec randomwalk_app() {
  return {"randomwalk",
          "graph random walk (GMT): V/2 walkers take L random steps each on a random graph",
          {"channel", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<randomwalk::walk_options>();
            randomwalk::add_walk_options(cmd, *o);
            return [o](run_context& ctx) { run_randomwalk(*o, ctx); };
          }};
}

}  // namespace shoal_apps
