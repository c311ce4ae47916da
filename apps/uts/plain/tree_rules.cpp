// The geometric shapes' expected branching by depth and the inverse-CDF
// child count (tree_rules.hpp), as in the UTS reference code.
#include "uts/plain/tree_rules.hpp"

#include <algorithm>
#include <cmath>

namespace shoal_apps::uts {
namespace {

// Depths whose geometric constant is tabulated; deeper ones (only expdec
// trees and absurd gen_mx reach them) are computed per node.
constexpr std::int64_t max_table_depth = 1 << 16;

}  // namespace

tree_rules::tree_rules(const tree_params& p)
    : p_(p),
      root_children_(static_cast<int>(std::floor(p.b0))),
      binomial_children_(std::min(p.m, max_children)) {
  if (p.type == tree_type::binomial) return;
  const std::int64_t depths =
      std::min<std::int64_t>(5 * std::int64_t{p.gen_mx} + 2, max_table_depth);
  log_q_by_depth_.resize(static_cast<std::size_t>(depths));
  for (std::int64_t d = 0; d < depths; ++d)
    log_q_by_depth_[static_cast<std::size_t>(d)] = log_one_minus_p(static_cast<std::int32_t>(d));
}

tree_node tree_rules::root() const { return {root_state(p_.seed), 0}; }

double tree_rules::branching(std::int32_t depth) const {
  if (depth == 0) return p_.b0;
  const double d = depth;
  const double g = p_.gen_mx;
  switch (p_.shape) {
    case tree_shape::expdec:
      return p_.b0 * std::pow(d, -std::log(p_.b0) / std::log(g));
    case tree_shape::cyclic:
      if (depth > 5 * std::int64_t{p_.gen_mx}) return 0.0;
      return std::pow(p_.b0, std::sin(2.0 * 3.141592653589793 * d / g));
    case tree_shape::fixed:
      return depth < p_.gen_mx ? p_.b0 : 0.0;
    case tree_shape::linear:
      break;
  }
  return p_.b0 * (1.0 - d / g);
}

double tree_rules::log_one_minus_p(std::int32_t depth) const {
  const double b = branching(depth);
  if (!(b > 0)) return 1.0;  // no children expected (also guards linear beyond gen_mx)
  const double p = 1.0 / (1.0 + b);
  return std::log(1.0 - p);
}

int tree_rules::geometric_children(const tree_node& n) const {
  const double lq = static_cast<std::size_t>(n.depth) < log_q_by_depth_.size()
                        ? log_q_by_depth_[static_cast<std::size_t>(n.depth)]
                        : log_one_minus_p(n.depth);
  if (lq > 0) return 0;
  if (lq == 0) return max_children;  // b_d so large that 1 - p rounds to 1
  // Inverse of the geometric distribution's cumulative density at u.
  const double x = std::floor(std::log(1.0 - probability(n.state)) / lq);
  return x >= max_children ? max_children : static_cast<int>(x);
}

}  // namespace shoal_apps::uts
