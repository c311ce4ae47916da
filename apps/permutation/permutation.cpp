// `shoal permutation`: Active Pebbles' Permutation (section 4.3) on shoal.
//
//   shoal permutation [--elements N] [--seed s] [--impl channel|sequential] [--json]
//
// Three arrays of N elements, data, perm and data_perm, block-distributed
// over every core of the job; data and perm are seeded random permutations
// of [0, N) (plain/permutation_problem.hpp). The timed phase makes
// data_perm[perm[data[i]]] = i for every i:
//   channel     Active Pebbles: one phase of dependent messages on two typed
//               channels (distributed.cpp). The default.
//   sequential  one loop on core 0 over the same arrays held in one process
//               (sequential.cpp): the reference for the speedup.
// Validation, untimed, on every run: every slot of data_perm was written
// once and holds data^-1(perm^-1(j)) (the inverses: a path independent of
// the timed one), and a sample of i satisfies data_perm[perm[data[i]]] = i
// through the forward functions (for the channel impl, a message round trip
// to each slot's owner).
#include <shoal/shoal.hpp>

#include <memory>
#include <string>

#include <fmt/format.h>

#include "common/app.hpp"
#include "permutation/impls.hpp"

namespace shoal_apps {

namespace {

struct app_options {
  permutation::permutation_options problem;
  permutation::test_hooks hooks;
  std::string termination = "phases";
};

void run_permutation(const app_options& o, run_context& ctx) {
  permutation::check_options(o.problem);
  const bool sequential = ctx.impl == "sequential";
  shoal::run([&] {
    const permutation::run_outcome r = sequential
                                           ? permutation::run_sequential(o.problem, o.hooks)
                                           : permutation::run_distributed(
                                                 o.problem, o.hooks,
                                                 o.termination == "depth"
                                                     ? permutation::termination::depth
                                                     : permutation::termination::phases);
    const std::string layout = sequential
                                   ? "one loop on one core"
                                   : fmt::format("block-distributed over {} cores", shoal::cores());
    permutation::fill_report(ctx.out, o.problem, layout, r.seconds, r.tally);
    if (!sequential) ctx.out.set("termination", o.termination);
  });
}

}  // namespace

app_spec permutation_app() {
  return {"permutation",
          "Active Pebbles Permutation: data_perm[perm[data[i]]] = i by dependent messages "
          "(elements/s)",
          {"channel", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<app_options>();
            permutation::add_permutation_options(cmd, o->problem);
            cmd.add_option("--termination", o->termination,
                           "how the channel run ends its phase: phases (two channels, each "
                           "ended by counting waves) or depth (one channel, depth-two "
                           "termination: end_phase_depth(2), no counting)")
                ->check(CLI::IsMember({"phases", "depth"}))
                ->capture_default_str();
            cmd.add_flag("--inject-fault-for-test", o->hooks.inject_fault)
                ->group("");  // hidden: stores one wrong i, so validation must fail
            return [o](run_context& ctx) { run_permutation(*o, ctx); };
          }};
}

}  // namespace shoal_apps
