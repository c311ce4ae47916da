// PageRank's problem, shared by `shoal pagerank` and the plain-MPI baseline
// (shoal-baseline-pagerank): options, the input graph, the partition of the
// vertices, the out-edge rows each part builds, the sequential reference and
// the report. No shoal here: plain C++.
//
// The graph. Input edges come from the Graph500 Kronecker generator (--scale,
// --edgefactor, --seed; apps/common/plain/graph.hpp) or a file (--graph). Each
// input edge {u, v} is read as ONE directed link u -> v (the usual reading
// of PageRank benchmarks on Graph500 graphs: the generator's edge list as
// the nonzeros of a sparse matrix). Self-loops are dropped and duplicate
// links counted once, so the graph is a simple directed graph; its links
// ("arcs") are what an iteration traverses and what edges_per_s counts.
//
// The iteration (damping d = 0.85, n vertices, ranks summing to 1, r0 = 1/n):
//   r'[w] = (1-d)/n + d * (sum over links v->w of r[v]/outdeg(v) + D/n)
// where D is the rank of the dangling vertices (out-degree 0), spread
// uniformly over all vertices (the standard treatment, so the ranks keep
// summing to 1). After each iteration the L1 norm of the change,
// sum |r'[w] - r[w]|, is compared with --tolerance; the run stops below it
// or after --iterations iterations.
//
// Validation: a sequential PageRank (reference_pagerank: a pull over in-links
// built from the whole edge list, a different code path from the timed
// push) runs the same number of iterations; the largest absolute difference
// of the ranks scaled to sum n (mean 1) must be at most 1e-9 * n.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/plain/graph.hpp"
#include "common/plain/report.hpp"

namespace shoal_apps::pagerank {

using shoal_apps::edge;

inline constexpr double damping = 0.85;

/// The flags both the shoal app and the baseline take.
struct pagerank_options {
  graph_options graph;      ///< --scale, --edgefactor, --seed, --graph (roots unused)
  double tolerance = 1e-7;  ///< --tolerance: stop when the L1 change is below it
  int iterations = 100;     ///< --iterations: at most this many
  bool corrupt = false;     ///< hidden test hook: one increment of iteration 1 is lost
};

/// Declares the options on `cmd` with their ranges (a bad value is a CLI11
/// error naming the flag; the driver and the baseline exit 2 on it).
void add_pagerank_options(CLI::App& cmd, pagerank_options& o);

/// The input: n vertices and the whole input edge list (self-loops and
/// duplicates included), held by every process.
struct graph_input {
  std::int64_t vertices = 0;
  std::vector<edge> edges;
};

/// The input's size without generating it (the Kronecker formula, or the
/// file read, whose edges are kept in `file_edges`). Throws input_error for a
/// malformed file (file:line), a graph that does not fit in memory with
/// `ranks` processes each holding the whole edge list, or one of more than
/// 2^30 vertices.
struct input_size {
  std::int64_t vertices = 0;
  std::int64_t edges = 0;
  std::vector<edge> file_edges;
};
/// How a run lays out its vertex arrays, for the memory check: `workers` per
/// process (cores, or 1 for a rank of the baseline), each with a
/// vertex-sized combining array when `combining`, and `gatherers` vertex-sized
/// copies on the process that gathers the ranks (core 0 keeps one per core).
struct memory_shape {
  int ranks = 1;
  int workers = 1;
  int gatherers = 1;
  bool combining = false;
};
input_size size_input(const pagerank_options& o, const memory_shape& m);

/// Vertices in contiguous blocks over `parts` parts (cores or ranks): part p
/// owns [first(p), first(p) + count(p)). A link's target is stored packed,
/// part << bits | local index, so the inner loop finds both by a shift and a
/// mask.
class block_layout {
 public:
  block_layout() = default;
  block_layout(std::int64_t vertices, int parts);

  std::int64_t vertices() const noexcept { return vertices_; }
  int parts() const noexcept { return parts_; }
  std::int64_t first(int p) const noexcept;
  std::int64_t count(int p) const noexcept { return first(p + 1) - first(p); }
  int owner(std::int64_t v) const noexcept { return static_cast<int>(v / chunk_); }
  std::uint32_t pack(std::int64_t v) const noexcept {
    const int p = owner(v);
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(p) << bits_ |
                                      static_cast<std::uint64_t>(v - p * chunk_));
  }
  /// One more than the largest packed id.
  std::uint64_t packed_range() const noexcept {
    return static_cast<std::uint64_t>(parts_) << bits_;
  }
  /// Packed id of local index `l` of part `p`.
  std::uint64_t packed(int p, std::uint64_t l) const noexcept {
    return static_cast<std::uint64_t>(p) << bits_ | l;
  }
  int packed_owner(std::uint32_t x) const noexcept { return static_cast<int>(x >> bits_); }
  std::uint32_t packed_local(std::uint32_t x) const noexcept { return x & mask_; }

 private:
  std::int64_t vertices_ = 0;
  int parts_ = 1;
  std::int64_t chunk_ = 1;
  int bits_ = 0;
  std::uint32_t mask_ = 0;
};

/// The out-links of one part's vertices: row l (local index) holds the
/// packed targets of vertex first(part) + l, sorted, without duplicates or
/// self-loops.
struct out_rows {
  std::vector<std::uint64_t> offsets;  ///< count + 1 row starts
  std::vector<std::uint32_t> targets;  ///< packed (block_layout::pack)
  std::int64_t arcs() const noexcept { return static_cast<std::int64_t>(targets.size()); }
};

/// The push of one part: calls f(target, share) for every out-link of the
/// first `count` rows, share = rank[v] / out-degree(v), target as stored
/// (packed). `drop_first` skips the very first link (the test hook that loses
/// one increment). Inlined into each push loop.
template <class F>
void for_each_share(const out_rows& rows, const double* rank, std::size_t count, bool drop_first,
                    F&& f) {
  const std::uint64_t* offsets = rows.offsets.data();
  const std::uint32_t* targets = rows.targets.data();
  for (std::size_t v = 0; v < count; ++v) {
    std::uint64_t i = offsets[v];
    const std::uint64_t end = offsets[v + 1];
    if (i == end) continue;
    const double share = rank[v] / static_cast<double>(end - i);
    if (drop_first) {
      ++i;
      drop_first = false;
    }
    for (; i < end; ++i) f(targets[i], share);
  }
}

/// Sorts each row of a compressed-row array (`offsets`: rows + 1 starts into
/// `values`), drops the duplicates within each row and closes the gaps;
/// `offsets` and `values` are updated (values shrunk to fit).
void sort_and_dedupe_rows(std::vector<std::uint64_t>& offsets, std::vector<std::uint32_t>& values);

/// Builds part `part`'s rows from the whole edge list (every edge scanned;
/// those whose source the part owns kept).
out_rows build_out_rows(const std::vector<edge>& edges, const block_layout& layout, int part);

/// Links of the simple directed graph of `edges` (self-loops and duplicates
/// dropped), and how many vertices have none out.
struct graph_counts {
  std::int64_t arcs = 0;
  std::int64_t dangling = 0;
};

/// Sequential PageRank of the whole edge list, exactly `iterations`
/// iterations (pull form over in-links). Fills `counts` when not null.
std::vector<double> reference_pagerank(std::int64_t vertices, const std::vector<edge>& edges,
                                       int iterations, graph_counts* counts = nullptr);

/// Sequential PageRank by the push of the distributed run over one part's
/// rows (block_layout(n, 1)): iterations until the L1 change is below
/// `tolerance` or `max_iterations`. The `--impl sequential` of the app.
struct sequential_result {
  std::vector<double> rank;
  int iterations = 0;
  double l1 = 0;
};
sequential_result push_pagerank(const out_rows& rows, std::int64_t vertices, double tolerance,
                                int max_iterations, bool drop_first);

/// The `k` highest ranks as (vertex, rank), highest first (ties: lower vertex first).
std::vector<std::pair<std::int64_t, double>> top_ranks(const std::vector<double>& rank, int k);

/// Largest |a[i] - b[i]| (same sizes).
double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b);

/// What a run measured.
struct outcome {
  std::int64_t vertices = 0;
  std::int64_t input_edges = 0;
  std::int64_t arcs = 0;      ///< links per iteration (edges_per_s counts these)
  std::int64_t dangling = 0;  ///< vertices without out-links
  int iterations = 0;         ///< iterations run
  double l1_change = 0;       ///< L1 norm of the last iteration's change
  double time_s = 0;          ///< the iterations
  double construction_s = 0;  ///< the distributed out-link rows
  double max_difference = 0;  ///< against the reference, ranks scaled to sum n
  double rank_sum = 0;        ///< sum of the ranks (1 up to rounding)
  std::vector<std::pair<std::int64_t, double>> top;  ///< top_ranks(rank, 5)
};

/// Fills the report: problem, time, rate (Medges/s), iterations,
/// edges_per_s, the validation against the bound 1e-9 * n.
void fill_report(report& r, const pagerank_options& o, const outcome& out);

}  // namespace shoal_apps::pagerank
