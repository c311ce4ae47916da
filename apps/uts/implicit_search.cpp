// The implicit and sequential searches (implicit_search.hpp): the policy that
// plugs tree generation into work_stealing_search.hpp, and the timed runs.
#include "uts/implicit_search.hpp"

#include "uts/plain/sequential_search.hpp"
#include "uts/plain/tree_rules.hpp"
#include "uts/work_stealing_search.hpp"

namespace shoal_apps::uts {
namespace {

// Nodes are generated as they are expanded: a node is its SHA-1 state and
// depth, and its children are pushed onto the core's stack.
struct implicit_policy {
  using node = tree_node;
  struct core_state {
    tree_counts tally;
  };

  static bool is_leaf(const tree_node& n) { return process_tree().num_children(n) == 0; }
  static void expand(const tree_node& n, core_search<implicit_policy>& cs) {
    expand_node(process_tree(), n, cs.state.tally, [&cs](const tree_node& c) { cs.stack.push(c); });
  }
};

}  // namespace

search_result run_implicit(const tree_params& p) {
  set_process_tree(p);
  reset_search<implicit_policy>();
  search_result r;
  r.seconds = timed_run([] { search_from<implicit_policy>(process_tree().root(), -1); });
  shoal::run([&r] {
    r.counts =
        sum_over_cores<tree_counts>([] { return searches<implicit_policy>.local().state.tally; });
  });
  reset_search<implicit_policy>();
  return r;
}

search_result run_sequential(const tree_params& p) {
  set_process_tree(p);
  search_result r;
  r.seconds = timed_run([&r] { r.counts = search_sequential(process_tree()); });
  return r;
}

}  // namespace shoal_apps::uts
