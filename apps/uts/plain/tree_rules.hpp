// How many children a UTS node has: the branching rules of tree_params.hpp
// applied to a node's generator state and depth, with the per-depth
// constants of the geometric shapes computed once. No shoal here.
//
// The arithmetic is the UTS reference's, operation for operation (double
// precision, same order), so that counts match the published ones exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "uts/plain/sha1_rng.hpp"
#include "uts/plain/tree_params.hpp"

namespace shoal_apps::uts {

/// A node of a search: its generator state and depth (root 0). Trivially
/// copyable, 24 bytes: tasks carry it.
struct tree_node {
  rng_state state;
  std::int32_t depth;
};

class tree_rules {
 public:
  /// `p` must pass check_params().
  explicit tree_rules(const tree_params& p);

  /// The root of the tree.
  tree_node root() const;

  /// Number of children of `n` (0 for a leaf). Thread-safe.
  int num_children(const tree_node& n) const {
    if (geometric_at(n.depth)) return geometric_children(n);
    if (n.depth == 0 && p_.type == tree_type::binomial) return root_children_;
    return probability(n.state) < p_.q ? binomial_children_ : 0;
  }

  /// Child `i` of `n`.
  static tree_node child(const tree_node& n, int i) {
    return {child_state(n.state, static_cast<std::uint32_t>(i)), n.depth + 1};
  }

  const tree_params& params() const noexcept { return p_; }

 private:
  bool geometric_at(std::int32_t depth) const {
    return p_.type == tree_type::geometric ||
           (p_.type == tree_type::hybrid && depth < p_.shift * p_.gen_mx);
  }
  int geometric_children(const tree_node& n) const;
  /// ln(1 - p) at `depth`, p = 1 / (1 + b_depth); +1 marks b_depth <= 0.
  double log_one_minus_p(std::int32_t depth) const;
  double branching(std::int32_t depth) const;

  tree_params p_;
  int root_children_;
  int binomial_children_;
  std::vector<double> log_q_by_depth_;  // log_one_minus_p for small depths
};

/// Counts `n` into `tally` and calls push(child) for each of its children:
/// the step every search (sequential or parallel) takes per node.
template <class Push>
inline void expand_node(const tree_rules& rules, const tree_node& n, tree_counts& tally,
                        Push&& push) {
  ++tally.nodes;
  if (n.depth > tally.depth) tally.depth = n.depth;
  const int k = rules.num_children(n);
  if (k == 0) {
    ++tally.leaves;
    return;
  }
  for (int i = 0; i < k; ++i) push(tree_rules::child(n, i));
}

}  // namespace shoal_apps::uts
