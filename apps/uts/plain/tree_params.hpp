// What describes a UTS tree: its type, shape and parameters, the named trees
// of the UTS benchmark with their published counts, and the checks that turn
// impossible parameters into a clear error. No shoal here: plain C++.
//
// Tree types (UTS, Olivier et al. 2006):
// - binomial: the root has floor(b0) children; any other node has m
//   children with probability q, else none;
// - geometric: a node at depth d has floor(ln(1 - u) / ln(1 - p)) children,
//   u its probability, p = 1 / (1 + b_d), b_d the expected branching the
//   shape gives at depth d (b0 at the root);
// - hybrid: geometric while d < shift * gen_mx, binomial below.
// Every node but a binomial root has at most 100 children.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shoal_apps::uts {

enum class tree_type { binomial, geometric, hybrid };

/// Expected branching b_d of a geometric node at depth d > 0.
enum class tree_shape {
  linear,  ///< b0 * (1 - d / gen_mx)
  expdec,  ///< b0 * d^(-ln b0 / ln gen_mx)
  cyclic,  ///< b0^sin(2 pi d / gen_mx), and 0 beyond depth 5 * gen_mx
  fixed,   ///< b0 below depth gen_mx, else 0
};

/// Most children of any node but a binomial root.
inline constexpr int max_children = 100;

/// The parameters of a tree. Defaults are those of the UTS reference code.
struct tree_params {
  tree_type type = tree_type::geometric;
  tree_shape shape = tree_shape::linear;
  int gen_mx = 6;          ///< depth scale of the shapes
  double b0 = 4.0;         ///< root branching
  std::uint32_t seed = 0;  ///< root seed
  double q = 15.0 / 64.0;  ///< binomial: probability of having children
  int m = 4;               ///< binomial: number of children when any
  double shift = 0.5;      ///< hybrid: binomial from depth shift * gen_mx
};

/// What a search counts. Depth is the greatest depth of a node (root 0).
struct tree_counts {
  std::int64_t nodes = 0;
  std::int64_t leaves = 0;
  std::int64_t depth = 0;

  friend bool operator==(const tree_counts&, const tree_counts&) = default;
};

/// Adds `b` into `a`: sums of nodes and leaves, greatest depth.
inline void merge(tree_counts& a, const tree_counts& b) {
  a.nodes += b.nodes;
  a.leaves += b.leaves;
  if (b.depth > a.depth) a.depth = b.depth;
}

/// A tree of the UTS sample workloads with its published counts.
struct named_tree {
  std::string name;
  tree_params params;
  tree_counts published;
};

/// The named trees (T1 ... T5, T1L, T2L, T3L, T1XL), in the order they are listed.
const std::vector<named_tree>& named_trees();

/// The named tree called `name` (case-sensitive), or null.
const named_tree* find_named_tree(const std::string& name);

/// "T1, T2, ..." for messages.
std::string named_tree_list();

/// The expected number of nodes of a tree with `p` (the mean of each
/// level's child count, capped at max_children, summed level by level); may
/// be +inf or huge. `p` must pass the other checks of check_params.
double expected_nodes(const tree_params& p);

/// The largest expected tree a run may search: six times T1XL, about ten
/// minutes on one core; larger ones would run for hours or never end.
inline constexpr double max_expected_nodes = 1e10;

/// Why `p` cannot be searched (naming the flag), or "" when it can; this
/// includes an expected size over max_expected_nodes.
std::string check_params(const tree_params& p);

/// Parses a type or shape name; false when unknown.
bool parse_type(const std::string& text, tree_type& out);
bool parse_shape(const std::string& text, tree_shape& out);

std::string type_name(tree_type t);
std::string shape_name(tree_shape s);

/// One line with the parameters that matter for the tree's type, e.g.
/// "geometric (fixed), gen_mx 10, b0 4, seed 19".
std::string describe(const tree_params& p);

}  // namespace shoal_apps::uts
