// The sequential depth-first count (sequential_search.hpp).
#include "uts/plain/sequential_search.hpp"

#include <vector>

namespace shoal_apps::uts {

tree_counts search_sequential(const tree_rules& rules) {
  tree_counts tally;
  std::vector<tree_node> stack;
  stack.reserve(4096);
  stack.push_back(rules.root());
  while (!stack.empty()) {
    const tree_node n = stack.back();
    stack.pop_back();
    expand_node(rules, n, tally, [&stack](const tree_node& c) { stack.push_back(c); });
  }
  return tally;
}

}  // namespace shoal_apps::uts
