// `shoal uts`: Unbalanced Tree Search (Olivier et al. 2006; Grappa section 6
// for the in-memory variant). Counts the nodes, leaves and depth of a random
// tree defined by the SHA-1 splittable generator, and checks them against the
// published counts of a named tree or against a sequential search.
//
//   shoal uts --tree T1                       implicit search, all cores
//   shoal uts --tree T3 --impl in-memory      build in global memory, traverse
//   shoal uts --type binomial --b0 100 --q 0.2 --m 4 --seed 7 --impl sequential
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "uts/implicit_search.hpp"
#include "uts/in_memory_tree.hpp"
#include "uts/plain/sequential_search.hpp"
#include "uts/plain/tree_params.hpp"

namespace shoal_apps {
namespace {

using uts::tree_params;

/// Storage for the command line, owned by the runner.
struct uts_options {
  std::string tree;
  std::string type = "geometric";
  std::string shape = "linear";
  tree_params params;  // numeric parameters, UTS reference defaults
  std::int64_t seed = 0;
  CLI::Option* tree_flag = nullptr;
  std::vector<CLI::Option*> custom;  // flags that describe a tree of one's own
  std::vector<CLI::Option*> geometric_only;  // --shape, --gen-mx: no use to a binomial tree
  std::vector<CLI::Option*> binomial_only;   // --q, --m: no use to a geometric tree
  CLI::Option* shift_flag = nullptr;         // hybrid trees only
};

void declare_options(CLI::App& cmd, uts_options& o) {
  o.tree_flag = cmd.add_option("--tree", o.tree,
                               "named tree of the UTS sample workloads: " + uts::named_tree_list() +
                                   " (T1 when no tree parameter is given)");
  tree_params& p = o.params;
  o.custom = {
      cmd.add_option("--type", o.type, "tree type: binomial, geometric or hybrid")
          ->capture_default_str(),
      cmd.add_option("--shape", o.shape, "geometric shape: linear, expdec, cyclic or fixed")
          ->capture_default_str(),
      cmd.add_option("--gen-mx", p.gen_mx, "geometric depth scale")->capture_default_str(),
      cmd.add_option("--b0", p.b0, "root branching factor")->capture_default_str(),
      cmd.add_option("--seed", o.seed, "root seed, 0 .. 2^32 - 1")->capture_default_str(),
      cmd.add_option("--q", p.q, "binomial: probability that a node has children")
          ->capture_default_str(),
      cmd.add_option("--m", p.m, "binomial: children of a node that has any")
          ->capture_default_str(),
      cmd.add_option("--shift", p.shift, "hybrid: binomial from depth shift * gen_mx")
          ->capture_default_str(),
  };
  o.geometric_only = {o.custom[1], o.custom[2]};
  o.binomial_only = {o.custom[5], o.custom[6]};
  o.shift_flag = o.custom[7];
}

/// Refuses a tree flag the chosen --type does not use (it would be ignored).
void check_flags_apply(const uts_options& o, uts::tree_type type) {
  std::vector<const CLI::Option*> unused;
  if (type == uts::tree_type::binomial)
    unused.insert(unused.end(), o.geometric_only.begin(), o.geometric_only.end());
  if (type == uts::tree_type::geometric)
    unused.insert(unused.end(), o.binomial_only.begin(), o.binomial_only.end());
  if (type != uts::tree_type::hybrid) unused.push_back(o.shift_flag);
  for (const CLI::Option* f : unused)
    if (f->count() > 0)
      throw input_error(
          fmt::format("{}: does not apply to a {} tree (--type {}), so it would be "
                      "ignored",
                      f->get_name(), o.type, o.type));
}

/// The tree the command line asks for.
struct chosen_tree {
  std::string name;  ///< a named tree, or "custom"
  tree_params params;
  const uts::named_tree* named = nullptr;
};

chosen_tree choose_named(const std::string& name) {
  const uts::named_tree* t = uts::find_named_tree(name);
  if (t == nullptr)
    throw input_error(
        fmt::format("--tree {}: unknown tree (known trees: {})", name, uts::named_tree_list()));
  return {t->name, t->params, t};
}

chosen_tree choose_custom(const uts_options& o) {
  chosen_tree c{"custom", o.params, nullptr};
  if (!uts::parse_type(o.type, c.params.type))
    throw input_error(
        fmt::format("--type {}: unknown tree type (binomial, geometric, hybrid)", o.type));
  if (!uts::parse_shape(o.shape, c.params.shape))
    throw input_error(
        fmt::format("--shape {}: unknown shape (linear, expdec, cyclic, fixed)", o.shape));
  check_flags_apply(o, c.params.type);
  if (o.seed < 0 || o.seed > 0xffffffffLL)
    throw input_error(fmt::format("--seed {}: must be in [0, 4294967295] (4 bytes)", o.seed));
  c.params.seed = static_cast<std::uint32_t>(o.seed);
  const std::string why = uts::check_params(c.params);
  if (!why.empty()) throw input_error(why);
  return c;
}

chosen_tree choose_tree(const uts_options& o) {
  const CLI::Option* custom_given = nullptr;
  for (const CLI::Option* f : o.custom)
    if (f->count() > 0 && custom_given == nullptr) custom_given = f;
  if (o.tree_flag->count() > 0) {
    if (custom_given != nullptr)
      throw input_error(
          fmt::format("--tree {} and {}: give a named tree or tree parameters, "
                      "not both",
                      o.tree, custom_given->get_name()));
    return choose_named(o.tree);
  }
  return custom_given != nullptr ? choose_custom(o) : choose_named("T1");
}

std::string show_counts(const uts::tree_counts& c) {
  return fmt::format("{} nodes, {} leaves, depth {}", c.nodes, c.leaves, c.depth);
}

/// Validation verdict on rank 0: published counts of a named tree, else an
/// untimed sequential search of the same tree.
void validate(const chosen_tree& t, const std::string& impl, const uts::tree_counts& got,
              report& out) {
  if (t.named != nullptr) {
    const bool ok = got == t.named->published;
    out.set_validated(ok,
                      ok ? fmt::format("published counts of {}", t.name)
                         : fmt::format("expected the published {} of {}, got {}",
                                       show_counts(t.named->published), t.name, show_counts(got)));
    return;
  }
  if (impl == "sequential") {
    out.set_validated(true,
                      "this is the sequential reference (a custom tree has no published counts)");
    return;
  }
  const uts::tree_counts expected = uts::search_sequential(uts::tree_rules(t.params));
  const bool ok = got == expected;
  out.set_validated(ok, ok ? "equal to a sequential search"
                           : fmt::format("a sequential search found {}, this search {}",
                                         show_counts(expected), show_counts(got)));
}

void fill_report(const chosen_tree& t, const uts::search_result& r, run_context& ctx) {
  report& out = ctx.out;
  out.set_problem(fmt::format("{}: {}", t.name, uts::describe(t.params)));
  out.set_time(r.seconds);
  out.set_rate(r.seconds > 0 ? static_cast<double>(r.counts.nodes) / r.seconds / 1e6 : 0.0,
               "Mnodes/s");
  out.set("tree", t.name);
  out.set("nodes", r.counts.nodes);
  out.set("leaves", r.counts.leaves);
  out.set("depth", r.counts.depth);
  if (r.construction_s >= 0) out.set("construction_s", r.construction_s);
  validate(t, ctx.impl, r.counts, out);
}

void run_uts(const uts_options& o, run_context& ctx) {
  const chosen_tree t = choose_tree(o);
  uts::search_result r;
  if (ctx.impl == "implicit") {
    r = uts::run_implicit(t.params);
  } else if (ctx.impl == "in-memory") {
    r = uts::run_in_memory(t.params);
  } else {
    r = uts::run_sequential(t.params);
  }
  if (shoal::myrank() == 0) fill_report(t, r, ctx);
}

}  // namespace

app_spec uts_app() {
  return {"uts",
          "Unbalanced Tree Search: count a random SHA-1 tree (T1 ... or custom), work stealing",
          {"implicit", "in-memory", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<uts_options>();
            declare_options(cmd, *o);
            return [o](run_context& ctx) { run_uts(*o, ctx); };
          }};
}

}  // namespace shoal_apps
