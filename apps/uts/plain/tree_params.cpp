// Named trees, parameter checks and descriptions of tree_params.hpp.
#include "uts/plain/tree_params.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

namespace shoal_apps::uts {
namespace {

tree_params geometric(tree_shape shape, int gen_mx, double b0, std::uint32_t seed) {
  tree_params p;
  p.type = tree_type::geometric;
  p.shape = shape;
  p.gen_mx = gen_mx;
  p.b0 = b0;
  p.seed = seed;
  return p;
}

tree_params binomial(double b0, double q, int m, std::uint32_t seed) {
  tree_params p;
  p.type = tree_type::binomial;
  p.b0 = b0;
  p.q = q;
  p.m = m;
  p.seed = seed;
  return p;
}

tree_params hybrid(tree_shape shape, int gen_mx, double b0, double q, int m, std::uint32_t seed) {
  tree_params p = geometric(shape, gen_mx, b0, seed);
  p.type = tree_type::hybrid;
  p.q = q;
  p.m = m;
  return p;
}

// The sample workloads published with the UTS benchmark: parameters
// and the tree size, leaf count and depth published next to them.
std::vector<named_tree> make_named_trees() {
  using s = tree_shape;
  return {
      {"T1", geometric(s::fixed, 10, 4, 19), {4130071, 3305118, 10}},
      {"T2", geometric(s::cyclic, 16, 6, 502), {4117769, 2342762, 81}},
      {"T3", binomial(2000, 0.124875, 8, 42), {4112897, 3599034, 1572}},
      {"T4", hybrid(s::linear, 16, 6, 0.234375, 4, 1), {4132453, 3108986, 134}},
      {"T5", geometric(s::linear, 20, 4, 34), {4147582, 2181318, 20}},
      {"T1L", geometric(s::fixed, 13, 4, 29), {102181082, 81746377, 13}},
      {"T2L", geometric(s::cyclic, 23, 7, 220), {96793510, 53791152, 67}},
      {"T3L", binomial(2000, 0.200014, 5, 7), {111345631, 89076904, 17844}},
      {"T1XL", geometric(s::fixed, 15, 4, 29), {1635119272, 1308100063, 15}},
  };
}

bool uses_binomial(const tree_params& p) { return p.type != tree_type::geometric; }
bool uses_geometric(const tree_params& p) { return p.type != tree_type::binomial; }

std::string check_binomial(const tree_params& p) {
  if (!(p.q >= 0 && p.q <= 1)) return fmt::format("--q {}: must be in [0, 1]", p.q);
  if (p.m < 0) return fmt::format("--m {}: must be at least 0", p.m);
  const double expected = p.q * std::min(p.m, max_children);
  if (expected >= 1)
    return fmt::format(
        "--q {} with --m {}: a node has q * m = {} children on average, so the expected "
        "tree is infinite: q * m must be below 1",
        p.q, p.m, expected);
  return "";
}

std::string check_geometric(const tree_params& p) {
  if (p.gen_mx < 1) return fmt::format("--gen-mx {}: must be at least 1", p.gen_mx);
  if (p.shape == tree_shape::expdec && p.gen_mx < 2)
    return fmt::format(
        "--gen-mx {}: the expdec shape divides by ln(gen_mx), so it must be at least 2", p.gen_mx);
  if (p.type == tree_type::hybrid && !(p.shift >= 0 && std::isfinite(p.shift)))
    return fmt::format("--shift {}: must be a finite number at least 0", p.shift);
  return "";
}

/// b_d of tree_rules::branching, repeated here so the estimate needs no
/// tree_rules (tree_params is below it).
double expected_branching(const tree_params& p, std::int64_t depth) {
  if (depth == 0) return p.b0;
  const double d = static_cast<double>(depth);
  const double g = p.gen_mx;
  switch (p.shape) {
    case tree_shape::expdec:
      return p.b0 * std::pow(d, -std::log(p.b0) / std::log(g));
    case tree_shape::cyclic:
      return depth > 5 * std::int64_t{p.gen_mx}
                 ? 0.0
                 : std::pow(p.b0, std::sin(2.0 * std::numbers::pi * d / g));
    case tree_shape::fixed:
      return depth < p.gen_mx ? p.b0 : 0.0;
    case tree_shape::linear:
      break;
  }
  return p.b0 * (1.0 - d / g);
}

/// Mean of min(X, max_children), X geometric with mean b: the sum over
/// k = 1 .. max_children of P(X >= k) = r^k, r = b / (1 + b).
double mean_geometric_children(double b) {
  if (!(b > 0)) return 0;
  const double r = b / (1.0 + b);
  return r == 1.0 ? max_children : r * (1.0 - std::pow(r, max_children)) / (1.0 - r);
}

/// The deepest level a geometric shape can reach (expdec has none).
std::int64_t last_geometric_depth(const tree_params& p) {
  switch (p.shape) {
    case tree_shape::cyclic:
      return 5 * std::int64_t{p.gen_mx};
    case tree_shape::fixed:
    case tree_shape::linear:
      return p.gen_mx;
    case tree_shape::expdec:
      break;
  }
  return std::int64_t{1} << 40;
}

}  // namespace

double expected_nodes(const tree_params& p) {
  const double binomial_subtree = 1.0 / (1.0 - p.q * std::min(p.m, max_children));
  if (p.type == tree_type::binomial) return 1.0 + std::floor(p.b0) * binomial_subtree;
  // Level by level: nodes expected at depth d times their mean children.
  const double shift_depth = p.type == tree_type::hybrid ? std::ceil(p.shift * p.gen_mx) : 1e300;
  const std::int64_t last = last_geometric_depth(p);
  constexpr std::int64_t max_steps = std::int64_t{1} << 22;
  double total = 0;
  double level = 1;
  std::int64_t d = 0;
  for (; d <= last && d < max_steps; ++d) {
    if (static_cast<double>(d) >= shift_depth) return total + level * binomial_subtree;
    total += level;
    if (total > 1e30 || level < 1e-12) return total;
    level *= mean_geometric_children(expected_branching(p, d));
  }
  // A very deep tree: count the levels not walked at the last level's size.
  return d > last ? total : total + level * static_cast<double>(last - d + 1);
}

const std::vector<named_tree>& named_trees() {
  static const std::vector<named_tree> trees = make_named_trees();
  return trees;
}

const named_tree* find_named_tree(const std::string& name) {
  for (const named_tree& t : named_trees())
    if (t.name == name) return &t;
  return nullptr;
}

std::string named_tree_list() {
  std::string s;
  for (const named_tree& t : named_trees()) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

std::string check_params(const tree_params& p) {
  if (!(p.b0 >= 0 && std::isfinite(p.b0)))
    return fmt::format("--b0 {}: must be a finite number at least 0", p.b0);
  if (p.type == tree_type::binomial && p.b0 >= 2147483648.0)
    return fmt::format("--b0 {}: the binomial root would have more than 2^31 - 1 children", p.b0);
  if (uses_binomial(p)) {
    std::string why = check_binomial(p);
    if (!why.empty()) return why;
  }
  if (uses_geometric(p)) {
    std::string why = check_geometric(p);
    if (!why.empty()) return why;
  }
  // Geometric trees have no q * m < 1 rule: their size follows b0 and gen_mx.
  const double nodes = expected_nodes(p);
  if (nodes > max_expected_nodes) {
    const bool binomial = p.type == tree_type::binomial;
    return fmt::format(
        "{} ({}): the expected tree has about {:.3g} nodes, more than the {:.0e} a run may "
        "search (the largest named tree, T1XL, has 1.6e9); lower {}",
        binomial ? fmt::format("--b0 {} with --q {} and --m {}", p.b0, p.q, p.m)
                 : fmt::format("--b0 {} with --gen-mx {}", p.b0, p.gen_mx),
        describe(p), nodes, max_expected_nodes, binomial ? "--b0, --q or --m" : "--b0 or --gen-mx");
  }
  return "";
}

bool parse_type(const std::string& text, tree_type& out) {
  for (tree_type t : {tree_type::binomial, tree_type::geometric, tree_type::hybrid}) {
    if (type_name(t) == text) {
      out = t;
      return true;
    }
  }
  return false;
}

bool parse_shape(const std::string& text, tree_shape& out) {
  for (tree_shape s :
       {tree_shape::linear, tree_shape::expdec, tree_shape::cyclic, tree_shape::fixed}) {
    if (shape_name(s) == text) {
      out = s;
      return true;
    }
  }
  return false;
}

std::string type_name(tree_type t) {
  switch (t) {
    case tree_type::binomial:
      return "binomial";
    case tree_type::geometric:
      return "geometric";
    case tree_type::hybrid:
      return "hybrid";
  }
  return "?";
}

std::string shape_name(tree_shape s) {
  switch (s) {
    case tree_shape::linear:
      return "linear";
    case tree_shape::expdec:
      return "expdec";
    case tree_shape::cyclic:
      return "cyclic";
    case tree_shape::fixed:
      return "fixed";
  }
  return "?";
}

std::string describe(const tree_params& p) {
  std::string s = type_name(p.type);
  if (uses_geometric(p)) s += fmt::format(" ({}), gen_mx {}", shape_name(p.shape), p.gen_mx);
  s += fmt::format(", b0 {}", p.b0);
  if (uses_binomial(p)) s += fmt::format(", q {}, m {}", p.q, p.m);
  if (p.type == tree_type::hybrid) s += fmt::format(", shift {}", p.shift);
  return s + fmt::format(", seed {}", p.seed);
}

}  // namespace shoal_apps::uts
