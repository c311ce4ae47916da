// Graph inputs shared by the graph apps (bfs, pagerank) and their plain-MPI
// baselines: the Graph500 Kronecker generator and the edge-list / Matrix
// Market reader. No shoal here: plain C++.
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

namespace shoal_apps {

struct edge {
  std::int64_t u;
  std::int64_t v;
};

/// The graph and search-key options the graph apps and their baselines take.
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

}  // namespace shoal_apps
