// Graph500 BFS set-up and validation, shared by `shoal bfs` and the plain-MPI
// baseline (shoal-baseline-bfs): the memory estimate, the choice of search
// keys and the specification's validation of a search tree. The graph itself
// comes from common/plain/graph.hpp. No shoal here: plain C++.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/plain/graph.hpp"

namespace shoal_apps::bfs {

/// Throws shoal_apps::input_error when a graph of `vertices` and `edges` would
/// not fit in this machine's memory with `ranks` processes (an estimate of the
/// bytes the app needs, compared with physical memory), naming `origin`: the
/// flags, or for a file what set its size ("--graph FILE:LINE: vertex id N").
void check_fits_in_memory(std::int64_t vertices, std::int64_t edges, int ranks,
                          const std::string& origin = "--scale/--edgefactor");

/// `count` distinct search keys chosen at random (from `seed`) among vertices
/// whose degree (self-loops excluded) is > 0, in a deterministic order. Fewer
/// when fewer such vertices exist. `has_edge[v]` says whether v has degree > 0.
std::vector<std::int64_t> choose_roots(const std::vector<bool>& has_edge, int count,
                                       std::uint64_t seed);

/// Graph500 validation of one search (the specification's five rules):
/// parent[root] == root; the parent structure is a tree rooted at `root`
/// (no cycles; every reached vertex leads to root); each tree edge joins
/// vertices whose levels differ by exactly one; every input edge joins
/// vertices whose levels differ by at most one, or neither end is reached;
/// the tree spans root's whole connected component; each vertex and its
/// parent are joined by an input edge. parent[v] == -1 marks unreached.
struct validation {
  bool ok = false;
  std::string error;         ///< first violated rule, with the vertex, when !ok
  std::int64_t reached = 0;  ///< vertices in the tree
  std::int64_t depth = 0;    ///< greatest level
  std::int64_t edges = 0;    ///< input edges within the component, duplicates and
                             ///< self-loops counted as they appear (TEPS numerator)
};
validation validate_bfs_tree(const std::vector<edge>& edges, std::int64_t vertices,
                             std::int64_t root, const std::vector<std::int64_t>& parent);

}  // namespace shoal_apps::bfs
