// `shoal intsort`: the NAS Parallel Benchmarks IS (integer sort) on shoal.
//
//   shoal intsort [--class S|W|A|B] [--impl block|key|sequential] [--json]
//
// 2^n keys of NPB's generator, ranked 10 times (timed, after one untimed
// iteration, as NPB does), with NPB's partial verification every iteration
// (the published ranks of 5 test keys) and its full verification at the end
// (every key placed at its rank; the result must be sorted). The report
// gives the class and mops (NPB's 10 * keys / time / 1e6).
//
// The implementations (--impl); in both shoal ones every core ranks a
// contiguous key range with about the same number of keys, and the keys
// travel to it on a typed channel (rank_spmd.hpp):
//   block       the default: a core stages the keys per destination and
//               sends them 15 to a 64-byte channel value; about 1.5x the
//               throughput of `key` (less work per key on both sides).
//   key         one bare 32-bit channel value per key (Grappa's way).
//   sequential  NPB's serial algorithm on one core (the root task): a
//               reference for the tests.
#include <shoal/shoal.hpp>

#include <memory>
#include <string>

#include "common/app.hpp"
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
  return intsort::fault_kind::none;
}

intsort::route_kind route_of(const std::string& impl) {
  if (impl == "run") return intsort::route_kind::run;
  if (impl == "key") return intsort::route_kind::key;
  return intsort::route_kind::block;
}

/// Runs on every rank; fills the report on rank 0, where the root runs.
void run_intsort(const app_options& opts, run_context& ctx) {
  const intsort::is_class& c = intsort::find_class(opts.class_name);
  if (ctx.impl != "sequential") intsort::check_shape(c, shoal::cores(), "--cores");
  const intsort::fault_kind fault = parse_fault(opts.fault);
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
          "NAS Parallel Benchmarks IS: bucket sort of NPB keys, ranked 10 times (Mop/s)",
          {"block", "run", "key", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto opts = std::make_shared<app_options>();
            cmd.add_option("--class", opts->class_name,
                           "NPB problem class: S (2^16 keys), W (2^20), A (2^23) or B (2^25)")
                ->transform(CLI::IsMember({"S", "W", "A", "B"}, CLI::ignore_case))
                ->capture_default_str();
            // For the tests: makes one verification fail, to prove it can.
            cmd.add_option("--inject-fault", opts->fault, "break a verification (tests)")
                ->check(CLI::IsMember({"none", "partial", "full"}))
                ->group("");
            return [opts](run_context& ctx) { run_intsort(*opts, ctx); };
          }};
}

}  // namespace shoal_apps
