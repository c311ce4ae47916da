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

#include <cstddef>
#include <cstdint>
#include <istream>
#include <span>
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
/// (banner "%%MatrixMarket matrix coordinate pattern|integer|real
/// general|symmetric|skew-symmetric" on line 1, 1-based ids, a size line,
/// values checked and ignored). Throws shoal_apps::input_error naming the
/// file, the line and what was wrong (missing, unreadable, a directory,
/// malformed, a misplaced or misspelled banner, truncated, a line longer than
/// max_line_bytes, vertex id out of range or negative).
struct edge_list {
  std::int64_t vertices = 0;
  /// The edges as stored; 0-based.
  std::vector<edge> edges;
  /// A symmetric or skew-symmetric Matrix Market file: each stored edge
  /// (u, v) with u != v also stands for (v, u) (add_mirrored_edges adds them;
  /// an undirected consumer such as BFS need not).
  bool symmetric = false;
  /// What set the vertex count, for messages: "FILE:LINE: vertex id N" or
  /// "FILE:LINE: the size line (R x C)".
  std::string size_origin;
};

/// Reads `path` (the value of --graph; an empty name is refused).
edge_list read_graph_file(const std::string& path);
/// The same reader on a stream or a buffer (no runtime needed: for tests and
/// fuzz targets); `name` starts every message.
edge_list read_graph(std::istream& in, const std::string& name);
edge_list read_graph_buffer(const char* data, std::size_t size, const std::string& name);

/// Makes a symmetric list directed: appends (v, u) for every stored (u, v)
/// with u != v, then clears `symmetric`. For consumers that follow links in
/// one direction (PageRank).
void add_mirrored_edges(edge_list& g);

/// A 64-bit digest of `g` (vertex count, symmetry, every edge in order):
/// equal for equal lists, different otherwise but for odds of 2^-64. The
/// apps compare it between processes, which each read the file themselves.
std::uint64_t digest_of(const edge_list& g);
/// The same digest of a list held as its parts.
std::uint64_t digest_of(std::int64_t vertices, bool symmetric, std::span<const edge> edges);

}  // namespace shoal_apps
