// Graph500 validation of a BFS parent array, numbered as in the
// specification (and issue 4):
//   rule 1: the parent structure is a tree rooted at the key (parent[root]
//           is root, every parent is a vertex, no cycle, every reached
//           vertex leads to the root);
//   rule 2: each tree edge joins vertices whose levels differ by exactly one;
//   rule 3: every input edge joins vertices whose levels differ by at most
//           one, or neither end is reached;
//   rule 4: the tree spans the key's whole connected component (no input
//           edge has exactly one end reached);
//   rule 5: each vertex and its parent are joined by an input edge.
// Levels are derived from the parent chains, so rule 2 can only fail on a
// non-root vertex that is its own parent; rules 3 and 4 then prove that the
// levels are the true BFS distances.
#include <algorithm>

#include <fmt/format.h>

#include "bfs/plain/graph500.hpp"

namespace shoal_apps::bfs {

namespace {

constexpr std::int64_t unknown = -1;
constexpr std::int64_t on_path = -2;

/// Rule 1 and 2 checks that need no edge: parents in range, no self-parent.
std::string check_parents(std::int64_t vertices, std::int64_t root,
                          const std::vector<std::int64_t>& parent) {
  if (parent[static_cast<std::size_t>(root)] != root)
    return fmt::format("rule 1 (tree rooted at the key): parent of root {} is {}, not itself", root,
                       parent[static_cast<std::size_t>(root)]);
  for (std::int64_t v = 0; v < vertices; ++v) {
    const std::int64_t p = parent[static_cast<std::size_t>(v)];
    if (p == -1) continue;
    if (p < 0 || p >= vertices)
      return fmt::format("rule 1 (tree rooted at the key): parent of vertex {} is {}, not a vertex",
                         v, p);
    if (p == v && v != root)
      return fmt::format(
          "rule 2 (tree edges join levels differing by one): vertex {} is its own "
          "parent (levels differ by 0)",
          v);
  }
  return {};
}

/// Levels from the parent chains (rule 1: no cycle, every chain ends at the
/// root). Fills `level` (-1 for unreached); returns an error or "".
std::string compute_levels(std::int64_t vertices, std::int64_t root,
                           const std::vector<std::int64_t>& parent,
                           std::vector<std::int64_t>& level) {
  level.assign(static_cast<std::size_t>(vertices), unknown);
  level[static_cast<std::size_t>(root)] = 0;
  std::vector<std::int64_t> path;
  for (std::int64_t v = 0; v < vertices; ++v) {
    if (parent[static_cast<std::size_t>(v)] == -1 || level[static_cast<std::size_t>(v)] >= 0)
      continue;
    path.clear();
    std::int64_t x = v;
    while (level[static_cast<std::size_t>(x)] < 0) {
      if (level[static_cast<std::size_t>(x)] == on_path)
        return fmt::format("rule 1 (tree rooted at the key): vertex {} is on a cycle of parents",
                           x);
      if (parent[static_cast<std::size_t>(x)] == -1)
        return fmt::format(
            "rule 1 (tree rooted at the key): the parent chain of vertex {} reaches "
            "vertex {}, which is not in the tree",
            v, x);
      level[static_cast<std::size_t>(x)] = on_path;
      path.push_back(x);
      x = parent[static_cast<std::size_t>(x)];
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it)
      level[static_cast<std::size_t>(*it)] =
          level[static_cast<std::size_t>(parent[static_cast<std::size_t>(*it)])] + 1;
  }
  return {};
}

/// Rules 3 and 4 over every input edge; counts the component's edges and
/// marks the vertices whose tree edge is an input edge (for rule 5).
std::string check_edges(const std::vector<edge>& edges, const std::vector<std::int64_t>& parent,
                        const std::vector<std::int64_t>& level, std::vector<char>& tree_edge_seen,
                        std::int64_t& component_edges) {
  component_edges = 0;
  for (const edge& e : edges) {
    const std::int64_t lu = level[static_cast<std::size_t>(e.u)];
    const std::int64_t lv = level[static_cast<std::size_t>(e.v)];
    if (lu < 0 && lv < 0) continue;
    if (lu < 0 || lv < 0)
      return fmt::format(
          "rule 4 (tree spans the component): input edge ({}, {}) joins reached "
          "vertex {} and unreached vertex {}",
          e.u, e.v, lu < 0 ? e.v : e.u, lu < 0 ? e.u : e.v);
    if (lu - lv > 1 || lv - lu > 1)
      return fmt::format(
          "rule 3 (input edges join levels differing by at most one): edge ({}, {}) "
          "joins levels {} and {}",
          e.u, e.v, lu, lv);
    ++component_edges;
    if (parent[static_cast<std::size_t>(e.u)] == e.v)
      tree_edge_seen[static_cast<std::size_t>(e.u)] = 1;
    if (parent[static_cast<std::size_t>(e.v)] == e.u)
      tree_edge_seen[static_cast<std::size_t>(e.v)] = 1;
  }
  return {};
}

}  // namespace

validation validate_bfs_tree(const std::vector<edge>& edges, std::int64_t vertices,
                             std::int64_t root, const std::vector<std::int64_t>& parent) {
  validation r;
  if (static_cast<std::int64_t>(parent.size()) != vertices) {
    r.error =
        fmt::format("the parent array has {} entries for {} vertices", parent.size(), vertices);
    return r;
  }
  if (root < 0 || root >= vertices) {
    r.error = fmt::format("root {} is not a vertex of [0, {})", root, vertices);
    return r;
  }
  std::vector<std::int64_t> level;
  r.error = check_parents(vertices, root, parent);
  if (r.error.empty()) r.error = compute_levels(vertices, root, parent, level);
  std::vector<char> tree_edge_seen(static_cast<std::size_t>(vertices), 0);
  if (r.error.empty()) r.error = check_edges(edges, parent, level, tree_edge_seen, r.edges);
  if (!r.error.empty()) return r;
  for (std::int64_t v = 0; v < vertices; ++v) {
    const std::int64_t lv = level[static_cast<std::size_t>(v)];
    if (lv < 0) continue;
    ++r.reached;
    r.depth = std::max(r.depth, lv);
    if (v != root && tree_edge_seen[static_cast<std::size_t>(v)] == 0) {
      r.error = fmt::format(
          "rule 5 (tree edges are input edges): no input edge joins vertex {} and "
          "its parent {}",
          v, parent[static_cast<std::size_t>(v)]);
      return r;
    }
  }
  r.ok = true;
  return r;
}

}  // namespace shoal_apps::bfs
