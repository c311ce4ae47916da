// `shoal chma`: concurrent hash-map access (GMT section V.D). A pool of
// strings (up to 20 characters) populates a distributed hash map; W tasks
// each take L steps: look an input string up and, when present, insert its
// reverse (plain/chma_problem.hpp defines the workload and proves that its
// final map does not depend on how the tasks interleave).
//
//   shoal chma [--pool-size P | --pool FILE] [--populate N] [--tasks W] [--length L]
//              [--seed x] [--impl channel|split-phase|sequential|map] [--json]
//
// Implementations: channel (the map sharded over every core; each task
// migrates with its accesses, one typed-channel message each,
// map_migrate.cpp), split-phase (the same map; tasks stay on their core and
// each access is a request and a reply, map_split_phase.cpp) and sequential
// (one key_set, the tasks one after another on one core: the reference of
// the benchmark ratio), and map (the same tasks on shoal::set and
// shoal::array, each access a chain of container operations,
// map_container.cpp).
// Validation, untimed, on rank 0 after every run: the same schedule on a
// std::unordered_set<std::string>; the final maps must have equal sizes,
// digests and numbers of lookups and inserts and, up to 2^16 keys, equal
// keys one by one.
#include <shoal/shoal.hpp>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "chma/map_runs.hpp"
#include "chma/plain/chma_problem.hpp"
#include "common/app.hpp"
#include "common/plain/mix.hpp"
#include "common/plain/text_input.hpp"
#include "common/same_input.hpp"

namespace shoal_apps {

namespace {

using chma::chma_problem;
using chma::map_totals;
using chma::str_key;

/// Runs whose map can hold at most this many keys (populate + steps) also
/// compare it key by key.
constexpr std::int64_t element_check_keys = std::int64_t{1} << 16;

struct run_outcome {
  map_totals totals;
  double seconds = 0;
  bool have_keys = false;  // keys collected (a small map): check them one by one
  std::vector<str_key> keys;
};

std::string show(const map_totals& t) {
  return fmt::format("{} keys, digest {:016x}, {} lookups, {} inserts", t.keys, t.digest, t.lookups,
                     t.inserts);
}

/// The first key that differs between the sorted key lists, or "".
std::string first_difference(std::vector<str_key> got, const std::vector<std::string>& want) {
  std::vector<std::string> g;
  g.reserve(got.size());
  for (const str_key& k : got) g.emplace_back(k.view());
  std::sort(g.begin(), g.end());
  const auto [a, b] = std::mismatch(g.begin(), g.end(), want.begin(), want.end());
  if (a == g.end() && b == want.end()) return "";
  if (b == want.end() || (a != g.end() && *a < *b))
    return fmt::format("this run holds \"{}\", the reference does not", *a);
  return fmt::format("the reference holds \"{}\", this run does not", *b);
}

void validate(const chma_problem& p, const run_outcome& got, report& out) {
  const bool small = got.have_keys;
  const chma::reference_result ref = chma::run_reference(p, small);
  if (got.totals != ref.totals) {
    out.set_validated(false, fmt::format("the sequential reference found {}, this run {}",
                                         show(ref.totals), show(got.totals)));
    return;
  }
  if (small) {
    const std::string diff = first_difference(got.keys, ref.keys);
    if (!diff.empty()) {
      out.set_validated(false, diff);
      return;
    }
  }
  out.set_validated(true, small ? "final map equal, key by key, to a sequential run"
                                : "final map's size and digest equal to a sequential run");
}

void fill_report(const chma_problem& p, const run_outcome& r, report& out) {
  out.set_problem(p.describe());
  out.set_time(r.seconds);
  const double rate = r.seconds > 0 ? static_cast<double>(r.totals.accesses()) / r.seconds : 0.0;
  out.set_rate(rate / 1e6, "Maccesses/s");
  out.set("accesses_per_s", rate);
  out.set("pool", p.pool.size());
  out.set("populate", p.populate);
  out.set("tasks", p.tasks);
  out.set("length", p.length);
  out.set("lookups", r.totals.lookups);
  out.set("inserts", r.totals.inserts);
  out.set("keys", r.totals.keys);
  validate(p, r, out);
}

run_outcome run_impl(const std::string& impl, const chma_problem& p) {
  run_outcome r;
  // Collecting the keys costs a message each: only for maps that surely are small.
  r.have_keys = p.populate + p.steps() <= element_check_keys;
  if (impl == "sequential") {
    if (shoal::myrank() != 0) return r;
    chma::sequential_result s = chma::run_sequential(p, r.have_keys);
    r.totals = s.totals;
    r.seconds = s.seconds;
    r.keys = std::move(s.keys);
  } else {
    chma::channel_result c = impl == "split-phase" ? chma::run_split_phase(p, r.have_keys)
                             : impl == "map"       ? chma::run_on_containers(p, r.have_keys)
                                                   : chma::run_migrate(p, r.have_keys);
    r.totals = c.totals;
    r.seconds = c.seconds;
    r.keys = std::move(c.keys);
  }
  return r;
}

/// A digest of the pool, string by string in order (every byte of a key).
std::uint64_t pool_digest(const chma_problem& p) {
  std::uint64_t h = mix64(p.pool.size());
  for (const chma::str_key& k : p.pool)
    for (const std::uint64_t w : k.words) h = mix64(h ^ w);
  return h;
}

void run_chma(const chma::chma_options& o, run_context& ctx) {
  const chma_problem p = chma::make_problem(o, shoal::ranks());
  if (!o.pool_file.empty())  // each process read it: the same pool everywhere
    check_same_input_on_every_rank(pool_digest(p), "--pool " + printable(o.pool_file, 200));
  const run_outcome r = run_impl(ctx.impl, p);
  if (shoal::myrank() == 0) fill_report(p, r, ctx.out);
}

}  // namespace

app_spec chma_app() {
  return {"chma",
          "concurrent hash-map access (GMT): W tasks look strings up and insert their reverses",
          {"channel", "split-phase", "sequential", "map"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<chma::chma_options>();
            chma::add_chma_options(cmd, *o);
            return [o](run_context& ctx) { run_chma(*o, ctx); };
          }};
}

}  // namespace shoal_apps
