// `shoal permutation`: Active Pebbles' Permutation (section 4.3) on shoal.
//
//   shoal permutation [--elements N] [--seed s] [--impl channel|sequential]
//                     [--termination phases|depth] [--routing direct|hypercube|node]
//                     [--reduce none|dedup] [--cache-slots n] [--json]
//
// Three arrays of N elements, data, perm and data_perm, block-distributed
// over every core of the job; data and perm are seeded random permutations
// of [0, N) (plain/permutation_problem.hpp). The timed phase makes
// data_perm[perm[data[i]]] = i for every i:
//   channel     Active Pebbles: one phase of dependent messages on two typed
//               channels (distributed.cpp). The default.
//   sequential  one loop on core 0 over the same arrays held in one process
//               (sequential.cpp): the reference for the speedup.
// --routing hypercube|node or --reduce dedup (or --channels target) run the
// channel impl on the library's target channels (routed.cpp): pebbles
// addressed to elements, routed between processes and reduced at the
// source and every hop; with
// --termination depth the phase ends in 2h rounds, h the most hops a value
// takes. The report then carries the reduction's counts (messages removed)
// beside the duplicates the app counted itself (a permutation has none);
// --stats adds the values forwarded at hops and the MPI messages and bytes.
// Validation, untimed, on every run: every slot of data_perm was written
// once and holds data^-1(perm^-1(j)) (the inverses: a path independent of
// the timed one), and a sample of i satisfies data_perm[perm[data[i]]] = i
// through the forward functions (for the channel impl, a message round trip
// to each slot's owner).
#include <shoal/shoal.hpp>

#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "permutation/impls.hpp"

namespace shoal_apps {

namespace {

struct app_options {
  permutation::permutation_options problem;
  permutation::test_hooks hooks;
  std::string termination = "phases";
  std::string routing = "direct";
  std::string reduce = "none";
  std::uint32_t cache_slots = 4096;
  std::string channels = "auto";                  ///< --channels: auto, typed or target
  const CLI::Option* cache_slots_flag = nullptr;  ///< refused without --reduce dedup
};

/// The routed run's counts into the report.
void report_routed(report& out, const app_options& o, const permutation::routed_counts& k) {
  out.set("routing", o.routing);
  out.set("reduce", o.reduce);
  report_routed_traffic(out, k.traffic);
  out.set("arrivals", k.arrivals);
  out.set("duplicate_arrivals", k.duplicates);
  out.set(
      "duplicate_fraction",
      k.arrivals == 0 ? 0.0 : static_cast<double>(k.duplicates) / static_cast<double>(k.arrivals));
  if (o.termination == "depth") out.set("termination_depth", k.depth);
}

void run_permutation(const app_options& o, run_context& ctx) {
  permutation::check_options(o.problem);
  const bool sequential = ctx.impl == "sequential";
  const bool routed = o.channels == "target" ||
                      (o.channels == "auto" && (o.routing != "direct" || o.reduce != "none"));
  if (o.channels == "typed" && (o.routing != "direct" || o.reduce != "none"))
    throw input_error(
        fmt::format("--channels typed: --routing {} --reduce {} need target "
                    "channels (--channels auto or target)",
                    o.routing, o.reduce));
  // The channel impl's flags, refused off their defaults with --impl sequential.
  const auto channel_only = [sequential](std::string_view flag, const std::string& value,
                                         std::string_view fallback, std::string_view what) {
    if (sequential && value != fallback)
      throw input_error(
          fmt::format("{} {}: {} --impl channel only, not --impl sequential", flag, value, what));
  };
  channel_only("--channels", o.channels, "auto", "applies to");
  channel_only("--termination", o.termination, "phases", "applies to");
  refuse_unused(o.cache_slots_flag, o.reduce == "dedup", "--reduce dedup");
  channel_only("--routing", o.routing, "direct", "routing applies to");
  channel_only("--reduce", o.reduce, "none", "reductions apply to");
  const permutation::termination how =
      o.termination == "depth" ? permutation::termination::depth : permutation::termination::phases;
  const permutation::route_choice route{shoal::named_routing::from_name(o.routing),
                                        o.reduce == "dedup", o.cache_slots};
  permutation::routed_counts counts;
  shoal::run([&] {
    const permutation::run_outcome r =
        sequential ? permutation::run_sequential(o.problem, o.hooks)
        : routed   ? permutation::run_routed(o.problem, o.hooks, how, route, counts)
                   : permutation::run_distributed(o.problem, o.hooks, how);
    const std::string layout = sequential
                                   ? "one loop on one core"
                                   : fmt::format("block-distributed over {} cores", shoal::cores());
    permutation::fill_report(ctx.out, o.problem, layout, r.seconds, r.tally);
    if (!sequential) ctx.out.set("termination", o.termination);
    if (routed) report_routed(ctx.out, o, counts);
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
            cmd.add_option("--routing", o->routing,
                           "how pebbles travel between processes (--impl channel): direct, "
                           "hypercube (log2 P hops, peers one bit away) or node (through one "
                           "process per node; processes per node from the launcher); anything "
                           "but direct uses the library's target channels")
                ->check(CLI::IsMember({"direct", "hypercube", "node"}))
                ->capture_default_str();
            cmd.add_option("--reduce", o->reduce,
                           "message reduction (--impl channel): none, or dedup (a target "
                           "channel drops a pebble for a target that already has one staged, "
                           "at the source and every hop; a permutation has no duplicates, so "
                           "this measures the cache's cost)")
                ->check(CLI::IsMember({"none", "dedup"}))
                ->capture_default_str();
            cmd.add_option("--channels", o->channels,
                           "what the channel impl sends on: typed (channels addressed to cores, "
                           "prefetching handlers), target (the library's target channels, "
                           "addressed to elements) or auto (target when --routing or --reduce "
                           "asks for it, else typed)")
                ->check(CLI::IsMember({"auto", "typed", "target"}))
                ->capture_default_str();
            o->cache_slots_flag =
                cmd.add_option("--cache-slots", o->cache_slots,
                               "slots of each core's reduction cache (--reduce dedup)")
                    ->check(CLI::Range(1U, shoal::max_cache_slots))
                    ->capture_default_str();
            // Hidden: stores one wrong i, so validation must fail.
            hide_from_help(cmd, cmd.add_flag("--inject-fault-for-test", o->hooks.inject_fault));
            return [o](run_context& ctx) { run_permutation(*o, ctx); };
          }};
}

}  // namespace shoal_apps
