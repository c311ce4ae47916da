// `shoal intsort`: the NAS Parallel Benchmarks IS (integer sort) on shoal.
//
//   shoal intsort [--class S|W|A|B] [--impl run|block|key|sequential] [--json]
//
// 2^n keys of NPB's generator, ranked 10 times (timed, after one untimed
// iteration, as NPB does), with NPB's partial verification every iteration
// (the published ranks of 5 test keys) and its full verification at the end
// (every key placed at its rank; the result must be sorted). The report
// gives the class and mops (NPB's 10 * keys / time / 1e6).
//
// The implementations (--impl); in the three shoal ones every core ranks a
// contiguous key range with about the same number of keys, and the keys
// travel to it on a typed channel (rank_spmd.hpp), each as the index of its
// counter in the ranking core's histogram. A core stages its keys per
// destination (240 at a time) and then, for another core:
//   run         the default: sends the staged run whole as bare 32-bit
//               values (channel::send_run: one reserve and copy per batch
//               piece), and the receiver counts each batch whole
//               (deliver_run); against the former `block` default,
//               1.06-1.16x at 2 x 1 and about 1.2x at 1 x 2 on the AMD
//               machine, loaded (bench/results/quiet_checks.md, hrun).
//   block       sends them 15 to a 64-byte channel value (one
//               channel::send per 15 keys); about 1.5x the throughput of
//               `key` (less work per key on both sides).
//   key         one channel::send per key, as bare 32-bit values handled
//               one by one (Grappa's way).
//   sequential  NPB's serial algorithm on one core (the root task): a
//               reference for the tests.
#include <shoal/shoal.hpp>

#include <memory>
#include <string>

#include "common/app.hpp"
#include "common/plain/hidden_option.hpp"
#include "intsort/plain/npb_is.hpp"
#include "intsort/rank_spmd.hpp"

namespace shoal_apps {

namespace {

struct app_options {
  std::string class_name = "S";
  std::string fault = "none";
};

intsort::fault_kind parse_fault(const std::string& f) {
  if (f == "partial") return intsort::fault_kind::partial;
  if (f == "full") return intsort::fault_kind::full;
  if (f == "overflow") return intsort::fault_kind::overflow;
  return intsort::fault_kind::none;
}

intsort::route_kind route_of(const std::string& impl) {
  if (impl == "block") return intsort::route_kind::block;
  if (impl == "key") return intsort::route_kind::key;
  return intsort::route_kind::run;
}

/// Runs on every rank; fills the report on rank 0, where the root runs.
void run_intsort(const app_options& opts, run_context& ctx) {
  const intsort::is_class& c = intsort::find_class(opts.class_name);
  if (ctx.impl != "sequential") intsort::check_shape(c, shoal::cores(), "--cores");
  const intsort::fault_kind fault = parse_fault(opts.fault);
  if (fault == intsort::fault_kind::overflow && ctx.impl == "sequential")
    throw input_error(
        "--inject-fault overflow: the sequential impl counts in 32 bits; "
        "use a parallel --impl (run, block or key)");
  shoal::run([&] {
    const intsort::is_outcome o =
        ctx.impl == "sequential"
            ? intsort::run_sequential(c, fault == intsort::fault_kind::none ? "" : opts.fault)
            : intsort::run_channel(c.name, route_of(ctx.impl), fault);
    intsort::fill_report(ctx.out, c, o);
  });
}

}  // namespace

app_spec intsort_app() {
  return {"intsort",
          "NAS Parallel Benchmarks IS: bucket sort of NPB keys, ranked 10 times (Mop/s).\n"
          "--impl run (default): keys staged per core, each run sent whole by\n"
          "channel::send_run and counted a batch at a time; block: the staged keys 15 to a\n"
          "64-byte channel value; key: one channel send per key; sequential: NPB's serial\n"
          "algorithm on one core.",
          {"run", "block", "key", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto opts = std::make_shared<app_options>();
            cmd.add_option("--class", opts->class_name,
                           "NPB problem class: S (2^16 keys), W (2^20), A (2^23) or B (2^25)")
                ->transform(CLI::IsMember({"S", "W", "A", "B"}, CLI::ignore_case))
                ->capture_default_str();
            // For the tests: makes one verification fail, to prove it can.
            hide_from_help(
                cmd, cmd.add_option("--inject-fault", opts->fault, "break a verification (tests)")
                         ->check(CLI::IsMember({"none", "partial", "full", "overflow"})));
            return [opts](run_context& ctx) { run_intsort(*opts, ctx); };
          }};
}

}  // namespace shoal_apps
