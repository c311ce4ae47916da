// Breaking one Graph500 rule on purpose: each corruption keeps the rules
// checked before it intact, so validation must name exactly that rule.
#include "bfs/corrupt.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "common/app.hpp"

namespace shoal_apps::bfs {

namespace {

/// Levels of a valid tree (-1 for unreached), from the parent chains.
std::vector<std::int64_t> levels_of(const std::vector<std::int64_t>& parent, std::int64_t root) {
  std::vector<std::int64_t> level(parent.size(), -1);
  level[static_cast<std::size_t>(root)] = 0;
  std::vector<std::int64_t> path;
  for (std::size_t v = 0; v < parent.size(); ++v) {
    if (parent[v] < 0) continue;
    path.clear();
    for (auto x = static_cast<std::int64_t>(v); level[static_cast<std::size_t>(x)] < 0;
         x = parent[static_cast<std::size_t>(x)])
      path.push_back(x);
    for (auto it = path.rbegin(); it != path.rend(); ++it)
      level[static_cast<std::size_t>(*it)] =
          level[static_cast<std::size_t>(parent[static_cast<std::size_t>(*it)])] + 1;
  }
  return level;
}

[[noreturn]] void cannot(int rule) {
  throw input_error(fmt::format(
      "--corrupt-for-test {}: this search tree offers no way to break that rule; use a larger "
      "graph",
      rule));
}

/// Rule 3: re-hang x under a neighbour q on its own level, so x drops one
/// level and the input edge to its old parent spans two levels.
bool break_levels(std::vector<std::int64_t>& parent, const std::vector<edge>& edges,
                  const std::vector<std::int64_t>& level) {
  for (const edge& e : edges) {
    const std::int64_t lu = level[static_cast<std::size_t>(e.u)];
    if (e.u == e.v || lu < 1 || level[static_cast<std::size_t>(e.v)] != lu) continue;
    parent[static_cast<std::size_t>(e.u)] = e.v;
    return true;
  }
  return false;
}

/// Rule 5: give x a parent on the right level that is not its neighbour.
bool break_tree_edge(std::vector<std::int64_t>& parent, const std::vector<edge>& edges,
                     const std::vector<std::int64_t>& level) {
  int tries = 0;
  for (std::size_t x = 0; x < parent.size() && tries < 16; ++x) {
    if (level[x] < 2) continue;
    ++tries;
    std::unordered_set<std::int64_t> near;
    for (const edge& e : edges) {
      if (e.u == static_cast<std::int64_t>(x)) near.insert(e.v);
      if (e.v == static_cast<std::int64_t>(x)) near.insert(e.u);
    }
    for (std::size_t q = 0; q < parent.size(); ++q) {
      if (level[q] != level[x] - 1 || near.count(static_cast<std::int64_t>(q)) != 0) continue;
      parent[x] = static_cast<std::int64_t>(q);
      return true;
    }
  }
  return false;
}

/// A reached vertex other than the root, preferring one without children
/// when `leaf` (cutting a leaf off leaves every other chain intact).
std::int64_t pick_vertex(const std::vector<std::int64_t>& parent, std::int64_t root, bool leaf) {
  std::vector<char> has_child(parent.size(), 0);
  for (std::size_t v = 0; v < parent.size(); ++v)
    if (parent[v] >= 0 && static_cast<std::int64_t>(v) != root)
      has_child[static_cast<std::size_t>(parent[v])] = 1;
  for (std::size_t v = 0; v < parent.size(); ++v)
    if (parent[v] >= 0 && static_cast<std::int64_t>(v) != root && !(leaf && has_child[v] != 0))
      return static_cast<std::int64_t>(v);
  return -1;
}

}  // namespace

void corrupt_parent_array(std::vector<std::int64_t>& parent, const std::vector<edge>& edges,
                          std::int64_t root, int rule) {
  const std::vector<std::int64_t> level = levels_of(parent, root);
  const std::int64_t x = pick_vertex(parent, root, rule == 4);
  switch (rule) {
    case 1:  // the root's parent is not the root
      parent[static_cast<std::size_t>(root)] = x >= 0 ? x : -1;
      return;
    case 2:  // a vertex is its own parent: a tree edge within one level
      if (x < 0) cannot(rule);
      parent[static_cast<std::size_t>(x)] = x;
      return;
    case 3:
      if (!break_levels(parent, edges, level)) cannot(rule);
      return;
    case 4:  // a leaf cut off: its input edge to the tree leaves the component unspanned
      if (x < 0) cannot(rule);
      parent[static_cast<std::size_t>(x)] = -1;
      return;
    case 5:
      if (!break_tree_edge(parent, edges, level)) cannot(rule);
      return;
    default:
      cannot(rule);
  }
}

}  // namespace shoal_apps::bfs
