// Graph500 inputs and validation, shared by `shoal bfs` and the plain-MPI
// baseline (shoal-baseline-bfs). No shoal here: plain C++.
//
// Graphs are undirected; an input edge {u, v} may be a self-loop or a
// duplicate (both are legal input and must be handled). Vertex ids are
// 0 .. vertices-1.
//
// The Kronecker generator follows the Graph500 specification (2^scale
// vertices, edgefactor * 2^scale edges, initiator A=0.57 B=0.19 C=0.19
// D=0.05, random vertex relabelling, shuffled edge order) and is
// counter-based: edge i depends only on (seed, scale, edgefactor, i), so any
// slice [first, last) can be generated independently by any core or rank and
// the union of the slices is always the same edge list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace shoal_apps::bfs {

struct edge {
  std::int64_t u;
  std::int64_t v;
};

/// The graph and search-key options both the shoal app and the baseline take.
struct graph_options {
  int scale = 16;          ///< --scale: 2^scale vertices
  int edgefactor = 16;     ///< --edgefactor: edges per vertex
  std::uint64_t seed = 1;  ///< --seed: generator and root choice
  std::string file;        ///< --graph FILE: edge list or Matrix Market instead of Kronecker
  int roots = 64;          ///< --roots: number of search keys
  std::int64_t root = -1;  ///< --root V: one given search key instead
};

/// Declares --scale, --edgefactor, --seed, --graph, --roots, --root on `cmd`
/// with their ranges (a bad value is a CLI11 error naming the flag).
void add_graph_options(CLI::App& cmd, graph_options& o);

/// Kronecker graph size for `o` (o.file empty).
std::int64_t kronecker_vertices(const graph_options& o);
std::int64_t kronecker_edge_count(const graph_options& o);

/// Appends edges [first, last) of the Kronecker edge list of `o` to `out`.
void kronecker_edges(const graph_options& o, std::int64_t first, std::int64_t last,
                     std::vector<edge>& out);

/// A graph read from a file: whitespace-separated "u v" pairs per line (lines
/// starting with # or % are comments), or Matrix Market coordinate format
/// (header "%%MatrixMarket matrix coordinate ...", 1-based ids, a size line,
/// optional values ignored). Throws shoal_apps::input_error naming the file,
/// the line and what was wrong (missing, unreadable, malformed, truncated,
/// vertex id out of range or negative).
struct edge_list {
  std::int64_t vertices = 0;
  std::vector<edge> edges;
};
edge_list read_graph_file(const std::string& path);

/// Throws shoal_apps::input_error when a graph of `vertices` and `edges` would
/// not fit in this machine's memory with `ranks` processes (an estimate of the
/// bytes the app needs, compared with physical memory), naming the flag.
void check_fits_in_memory(std::int64_t vertices, std::int64_t edges, int ranks);

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
