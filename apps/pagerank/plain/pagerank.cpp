// PageRank's shared plain code: options, input size and memory check, the
// block layout, out-link rows, the sequential reference and the report.
#include "pagerank/plain/pagerank.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"

namespace shoal_apps::pagerank {

void add_pagerank_options(CLI::App& cmd, pagerank_options& o) {
  auto* scale = cmd.add_option("--scale", o.graph.scale, "Kronecker graph of 2^scale vertices")
                    ->check(CLI::Range(1, 40))
                    ->capture_default_str();
  auto* edgefactor =
      cmd.add_option("--edgefactor", o.graph.edgefactor, "edges per vertex of the Kronecker graph")
          ->check(CLI::Range(1, 1024))
          ->capture_default_str();
  auto* seed = cmd.add_option("--seed", o.graph.seed, "seed of the Kronecker generator")
                   ->check(unsigned_64_check())
                   ->capture_default_str();
  // A file fixes the graph: the generator's flags would be silently ignored.
  cmd.add_option("--graph", o.graph.file,
                 "read the graph from FILE (edge list \"u v\" per line, 0-based, or Matrix "
                 "Market coordinate; each line a link u -> v) instead of generating it")
      ->check(file_name_check())
      ->excludes(scale)
      ->excludes(edgefactor)
      ->excludes(seed);
  cmd.add_option("--tolerance", o.tolerance,
                 "stop once the L1 norm of an iteration's change of the ranks (summing to 1) "
                 "is below this (> 0)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double x = 0;
            const bool number = CLI::detail::lexical_cast(text, x);
            if (number && x > 0 && std::isfinite(x)) return {};
            return "must be a number > 0, got '" + text + "'";
          },
          "NUMBER > 0"))
      ->capture_default_str();
  cmd.add_option("--iterations", o.iterations, "at most this many iterations (>= 1)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  hide_from_help(cmd, cmd.add_flag("--corrupt-for-test", o.corrupt));  // proves validation fails
}

namespace {

/// Bytes a run needs on this machine: every process holds the whole edge
/// list (16 bytes an edge); the rows (4 bytes a link) and about six
/// vertex-sized arrays over the job; rank 0's reference (in-links, 4 bytes
/// a link and its sort, plus four vertex arrays) and the gathered ranks;
/// every worker's vertex-sized arrays (the ranks it gathers, and its
/// combining sums) and the gathering process's copies.
double bytes_needed(std::int64_t vertices, std::int64_t edges, const memory_shape& m) {
  const auto e = static_cast<double>(edges);
  const auto n = static_cast<double>(vertices);
  const double per_worker = 8.0 * n * (m.combining ? 2 : 1);
  return 16.0 * e * m.ranks + 4.0 * e + 12.0 * e + 48.0 * n + 8.0 * n * (m.ranks + 2) +
         per_worker * m.workers * m.ranks + 8.0 * n * m.gatherers;
}

void check_fits(std::int64_t vertices, std::int64_t edges, const memory_shape& m,
                const std::string& flag) {
  const int ranks = m.ranks;
  const double need = bytes_needed(vertices, edges, m);
  check_memory(
      need, 0.8,
      fmt::format("{}: a graph of {} vertices and {} edges needs about {} over {} "
                  "process{}",
                  flag, vertices, edges, human_bytes(need), ranks, ranks == 1 ? "" : "es"));
}

}  // namespace

input_size size_input(const pagerank_options& o, const memory_shape& m) {
  input_size s;
  std::string origin = "--scale";
  if (!o.graph.file.empty()) {
    edge_list list = read_graph_file(o.graph.file);
    add_mirrored_edges(list);  // PageRank follows links one way: a symmetric entry is two
    s.vertices = list.vertices;
    s.edges = static_cast<std::int64_t>(list.edges.size());
    s.file_edges = std::move(list.edges);
    origin = "--graph " + list.size_origin;
    check_fits(s.vertices, s.edges, m, origin);
  } else {
    s.vertices = kronecker_vertices(o.graph);
    s.edges = kronecker_edge_count(o.graph);
    check_fits(s.vertices, s.edges, m, "--scale/--edgefactor");
  }
  if (s.vertices > (std::int64_t{1} << 30))
    throw input_error(
        fmt::format("{}: {} vertices, more than the 2^30 this app takes", origin, s.vertices));
  if (s.vertices == 0)
    throw input_error(fmt::format("--graph {}: the graph has no vertex", o.graph.file));
  return s;
}

block_layout::block_layout(std::int64_t vertices, int parts)
    : vertices_(vertices),
      parts_(parts),
      chunk_(std::max<std::int64_t>(1, (vertices + parts - 1) / parts)),
      bits_(std::bit_width(static_cast<std::uint64_t>(chunk_ - 1))),
      mask_(static_cast<std::uint32_t>((std::uint64_t{1} << bits_) - 1)) {}

std::int64_t block_layout::first(int p) const noexcept {
  return std::min(static_cast<std::int64_t>(p) * chunk_, vertices_);
}

out_rows build_out_rows(const std::vector<edge>& edges, const block_layout& layout, int part) {
  const std::int64_t first = layout.first(part);
  const std::int64_t count = layout.count(part);
  const std::int64_t last = first + count;
  out_rows r;
  r.offsets.assign(static_cast<std::size_t>(count) + 1, 0);
  for (const edge& e : edges)
    if (e.u >= first && e.u < last && e.u != e.v)
      ++r.offsets[static_cast<std::size_t>(e.u - first) + 1];
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i)
    r.offsets[i + 1] += r.offsets[i];
  std::vector<std::uint64_t> at(r.offsets.begin(), r.offsets.end() - 1);
  r.targets.resize(r.offsets.back());
  for (const edge& e : edges)
    if (e.u >= first && e.u < last && e.u != e.v)
      r.targets[at[static_cast<std::size_t>(e.u - first)]++] = layout.pack(e.v);
  sort_and_dedupe_rows(r.offsets, r.targets);
  return r;
}

void sort_and_dedupe_rows(std::vector<std::uint64_t>& offsets, std::vector<std::uint32_t>& values) {
  const std::size_t rows = offsets.size() - 1;
  std::uint64_t out = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto b = values.begin() + static_cast<std::ptrdiff_t>(offsets[i]);
    const auto e = values.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]);
    std::sort(b, e);
    const auto u = std::unique(b, e);
    offsets[i] = out;
    out = static_cast<std::uint64_t>(
        std::copy(b, u, values.begin() + static_cast<std::ptrdiff_t>(out)) - values.begin());
  }
  offsets[rows] = out;
  values.resize(out);
  values.shrink_to_fit();
}

std::vector<double> reference_pagerank(std::int64_t vertices, const std::vector<edge>& edges,
                                       int iterations, graph_counts* counts) {
  const auto n = static_cast<std::size_t>(vertices);
  // In-links: sources of each target, by counting sort on the target; then
  // each row sorted and deduplicated; out-degrees counted from what is left.
  std::vector<std::uint64_t> start(n + 1, 0);
  for (const edge& e : edges)
    if (e.u != e.v) ++start[static_cast<std::size_t>(e.v) + 1];
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::uint32_t> sources(start[n]);
  {
    std::vector<std::uint64_t> at(start.begin(), start.end() - 1);
    for (const edge& e : edges)
      if (e.u != e.v)
        sources[at[static_cast<std::size_t>(e.v)]++] = static_cast<std::uint32_t>(e.u);
  }
  std::vector<std::uint32_t> outdeg(n, 0);
  std::uint64_t kept = 0;
  for (std::size_t w = 0; w < n; ++w) {
    const auto b = sources.begin() + static_cast<std::ptrdiff_t>(start[w]);
    const auto e = sources.begin() + static_cast<std::ptrdiff_t>(start[w + 1]);
    std::sort(b, e);
    const auto u = std::unique(b, e);
    start[w] = kept;
    for (auto it = b; it != u; ++it) {
      ++outdeg[*it];
      sources[kept++] = *it;
    }
  }
  start[n] = kept;
  sources.resize(kept);
  std::int64_t dangling_count = 0;
  for (std::uint32_t d : outdeg) dangling_count += d == 0 ? 1 : 0;
  if (counts != nullptr) *counts = {static_cast<std::int64_t>(kept), dangling_count};

  const double inv_n = 1.0 / static_cast<double>(vertices);
  std::vector<double> rank(n, inv_n), share(n), next(n);
  for (int it = 0; it < iterations; ++it) {
    double dangling = 0;
    for (std::size_t v = 0; v < n; ++v) {
      if (outdeg[v] == 0)
        dangling += rank[v];
      else
        share[v] = rank[v] / outdeg[v];
    }
    const double base = (1.0 - damping) * inv_n + damping * dangling * inv_n;
    for (std::size_t w = 0; w < n; ++w) {
      double sum = 0;
      for (std::uint64_t i = start[w]; i < start[w + 1]; ++i) sum += share[sources[i]];
      next[w] = base + damping * sum;
    }
    rank.swap(next);
  }
  return rank;
}

sequential_result push_pagerank(const out_rows& rows, std::int64_t vertices, double tolerance,
                                int max_iterations, bool drop_first) {
  const auto n = static_cast<std::size_t>(vertices);
  const double inv_n = 1.0 / static_cast<double>(vertices);
  sequential_result out;
  out.rank.assign(n, inv_n);
  std::vector<double> acc(n, 0.0);
  const std::uint64_t* offsets = rows.offsets.data();
  double dangling = 0;
  for (std::size_t v = 0; v < n; ++v)
    if (offsets[v + 1] == offsets[v]) dangling += out.rank[v];
  while (out.iterations < max_iterations) {
    // One part: a packed target is the vertex id.
    for_each_share(rows, out.rank.data(), n, drop_first,
                   [&acc](std::uint32_t t, double share) { acc[t] += share; });
    drop_first = false;
    const double base = (1.0 - damping) * inv_n + damping * dangling * inv_n;
    double l1 = 0;
    dangling = 0;
    for (std::size_t v = 0; v < n; ++v) {
      const double r = base + damping * acc[v];
      acc[v] = 0;
      l1 += std::fabs(r - out.rank[v]);
      out.rank[v] = r;
      if (offsets[v + 1] == offsets[v]) dangling += r;
    }
    ++out.iterations;
    out.l1 = l1;
    if (l1 < tolerance) break;
  }
  return out;
}

std::vector<std::pair<std::int64_t, double>> top_ranks(const std::vector<double>& rank, int k) {
  std::vector<std::pair<std::int64_t, double>> all;
  all.reserve(rank.size());
  for (std::size_t v = 0; v < rank.size(); ++v)
    all.emplace_back(static_cast<std::int64_t>(v), rank[v]);
  const auto keep = std::min(all.size(), static_cast<std::size_t>(std::max(k, 0)));
  const auto higher = [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                    higher);
  all.resize(keep);
  return all;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, std::fabs(a[i] - b[i]));
  if (a.size() != b.size()) m = std::numeric_limits<double>::infinity();
  return m;
}

void fill_report(report& r, const pagerank_options& o, const outcome& out) {
  const std::string graph = o.graph.file.empty() ? fmt::format("Kronecker scale {}, edgefactor {}",
                                                               o.graph.scale, o.graph.edgefactor)
                                                 : fmt::format("graph {}", o.graph.file);
  r.set_problem(fmt::format("{}: {} vertices, {} edges ({} links), {} iteration{}", graph,
                            out.vertices, out.input_edges, out.arcs, out.iterations,
                            out.iterations == 1 ? "" : "s"));
  const double edges_per_s =
      out.time_s > 0 ? static_cast<double>(out.arcs) * out.iterations / out.time_s : 0;
  r.set_time(out.time_s);
  r.set_rate(edges_per_s / 1e6, "Medges/s");
  r.set("iterations", out.iterations);
  r.set("edges_per_s", edges_per_s);
  r.set("converged", out.l1_change < o.tolerance);
  r.set("l1_change", out.l1_change);
  r.set("construction_s", out.construction_s);
  r.set("max_difference", out.max_difference);
  const double bound = 1e-9 * static_cast<double>(out.vertices);
  r.set("max_difference_bound", bound, false);
  r.set("tolerance", o.tolerance, false);
  r.set("damping", damping, false);
  r.set("scale", o.graph.file.empty() ? nlohmann::json(o.graph.scale) : nlohmann::json(nullptr),
        false);
  r.set("vertices", out.vertices, false);
  r.set("edges", out.arcs, false);
  r.set("input_edges", out.input_edges, false);
  r.set("dangling", out.dangling, false);
  r.set("rank_sum", out.rank_sum, false);
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [v, x] : out.top) top.push_back({{"vertex", v}, {"rank", x}});
  r.set("top_ranks", top, false);
  // NaN compares false: a run that produced NaN fails.
  const bool ok = out.max_difference <= bound;
  r.set_validated(ok, ok ? fmt::format("max |rank - sequential rank| = {:.3g} <= 1e-9 n = {:.3g} "
                                       "(ranks scaled to sum n), after {} iterations",
                                       out.max_difference, bound, out.iterations)
                         : fmt::format("max |rank - sequential rank| = {:.3g} > 1e-9 n = {:.3g} "
                                       "(ranks scaled to sum n), after {} iterations",
                                       out.max_difference, bound, out.iterations));
}

}  // namespace shoal_apps::pagerank
