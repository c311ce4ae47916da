// Options, sizes, the graph and the sequential walks of `shoal randomwalk`
// (walk_problem.hpp says what the problem is).
#include "randomwalk/plain/walk_problem.hpp"

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"

namespace shoal_apps::randomwalk {

void add_walk_options(CLI::App& cmd, walk_options& o) {
  auto* scale = cmd.add_option("--scale", o.scale, "graph of 2^scale vertices")
                    ->check(CLI::Range(1, 31))
                    ->capture_default_str();
  cmd.add_option("--vertices", o.vertices,
                 "graph of exactly this many vertices (2 .. 2^31), instead of --scale")
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 31))
      ->excludes(scale);
  cmd.add_option("--edgefactor", o.edgefactor,
                 "undirected edges generated per vertex (each vertex's degree is at least this)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd.add_option("--length", o.length, "steps of each walk (L)")->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the graph, the start vertices and every step")
      ->check(unsigned_64_check())
      ->capture_default_str();
  hide_from_help(cmd, cmd.add_option("--inject-fault", o.corrupt_walker,
                                     "testing: send this walker astray on its first step "
                                     "(validation must fail)"));
}

std::string walk_problem::describe() const {
  return fmt::format("{} vertices, {} edges, {} walkers x {} steps", vertices, edges, walkers,
                     length);
}

namespace {

/// Throws when the graph copies would not fit: each process holds its share
/// of the graph (both directions of each edge: 8 bytes, plus offsets) and
/// rank 0 the reference's whole graph twice over (CSR, adjacency lists).
void check_graph_fits(std::int64_t vertices, std::int64_t edges, int ranks) {
  const double graph = 8.0 * static_cast<double>(edges) + 8.0 * static_cast<double>(vertices);
  const double lists = 8.0 * static_cast<double>(edges) + 32.0 * static_cast<double>(vertices);
  const double need = 2 * graph + lists;  // the shoal copy, the CSR and the lists on one machine
  check_memory(need, 0.7,
               fmt::format("--scale/--vertices/--edgefactor: a graph of {} vertices and {} edges "
                           "needs about {} ({} process{})",
                           vertices, edges, human_bytes(need), ranks, ranks == 1 ? "" : "es"),
               "lower them");
}
}  // namespace

namespace {
/// The most steps (walkers x length) a run may take: hours on one core.
constexpr double max_walk_steps = 1099511627776.0;  // 2^40
}  // namespace

walk_problem make_problem(const walk_options& o, int ranks) {
  constexpr std::int64_t max_vertices = std::int64_t{1} << 31;
  const std::int64_t v = o.vertices > 0 ? o.vertices : std::int64_t{1} << o.scale;
  if (o.vertices != 0 && (o.vertices < 2 || o.vertices > max_vertices))
    throw input_error(
        fmt::format("--vertices {}: out of range; expected 2 .. {}", o.vertices, max_vertices));
  if (o.length < 1 || o.length > 0xffffffffLL)
    throw input_error(
        fmt::format("--length {}: out of range; expected 1 .. 4294967295 steps", o.length));
  walk_problem p;
  p.vertices = static_cast<std::uint32_t>(v);
  p.edgefactor = o.edgefactor;
  p.edges = v * o.edgefactor;
  p.walkers = static_cast<std::uint32_t>(v / 2);
  p.length = static_cast<std::uint32_t>(o.length);
  p.seed = o.seed;
  if (o.corrupt_walker >= p.walkers)
    throw input_error(fmt::format("--inject-fault {}: no such walker (there are {})",
                                  o.corrupt_walker, p.walkers));
  p.corrupt_walker = o.corrupt_walker;
  check_graph_fits(v, p.edges, ranks);
  // Every step is checked again by the sequential reference: a run past the
  // bound would take days, so it is refused rather than left to be killed.
  const double steps = static_cast<double>(p.walkers) * static_cast<double>(p.length);
  if (steps > max_walk_steps)
    throw input_error(fmt::format(
        "--length {} with {} walkers ({} vertices / 2): {:.3g} steps, more than the 2^40 "
        "({:.3g}) a run may take; lower --length or --scale/--vertices",
        o.length, p.walkers, v, steps, max_walk_steps));
  return p;
}

csr_graph build_graph(const walk_problem& p) {
  csr_graph g;
  g.offsets.assign(std::size_t{p.vertices} + 1, 0);
  // Degrees, then a prefix sum, then the edges in edge order (u side first).
  for (std::int64_t i = 0; i < p.edges; ++i) {
    ++g.offsets[static_cast<std::size_t>(i / p.edgefactor) + 1];
    ++g.offsets[std::size_t{edge_target(p, i)} + 1];
  }
  for (std::size_t x = 0; x < p.vertices; ++x) g.offsets[x + 1] += g.offsets[x];
  g.neighbors.resize(static_cast<std::size_t>(2 * p.edges));
  std::vector<std::int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  for (std::int64_t i = 0; i < p.edges; ++i) {
    const auto u = static_cast<std::uint32_t>(i / p.edgefactor);
    const std::uint32_t v = edge_target(p, i);
    g.neighbors[static_cast<std::size_t>(next[u]++)] = v;
    g.neighbors[static_cast<std::size_t>(next[v]++)] = u;
  }
  return g;
}

walk_totals walk_sequential(const walk_problem& p, const csr_graph& g) {
  walk_totals t;
  const start_vertices start(p);
  for (std::uint32_t w = 0; w < p.walkers; ++w) {
    std::uint32_t x = start(w);
    std::uint64_t h = first_hash(x);
    for (std::uint32_t s = 0; s < p.length; ++s) {
      const std::int64_t first = g.offsets[x];
      const auto degree = static_cast<std::uint32_t>(g.offsets[x + 1] - first);
      x = g.neighbors[static_cast<std::size_t>(first + choice(p.seed, w, s, degree))];
      if (s == 0 && w == p.corrupt_walker) x = astray(p, x);
      h = next_hash(h, x);
    }
    t.steps += p.length;
    ++t.finished;
    t.digest += walk_digest(w, x, h);
  }
  return t;
}

}  // namespace shoal_apps::randomwalk

namespace shoal_apps::randomwalk {

walk_totals walk_reference(const walk_problem& p) {
  // Adjacency lists filled straight from the edge list, a different path
  // from build_graph's counting sort and from the cores' shares.
  std::vector<std::vector<std::uint32_t>> adjacent(p.vertices);
  for (std::int64_t i = 0; i < p.edges; ++i) {
    const auto u = static_cast<std::uint32_t>(i / p.edgefactor);
    const std::uint32_t v = edge_target(p, i);
    adjacent[u].push_back(v);
    adjacent[v].push_back(u);
  }
  walk_totals t;
  const start_vertices start(p);
  for (std::uint32_t w = 0; w < p.walkers; ++w) {
    std::uint32_t x = start(w);
    std::uint64_t h = first_hash(x);
    std::uint32_t s = 0;
    for (; s < p.length; ++s) {
      const std::vector<std::uint32_t>& out = adjacent[x];
      x = out[choice(p.seed, w, s, static_cast<std::uint32_t>(out.size()))];
      h = next_hash(h, x);
    }
    t.steps += s;
    ++t.finished;
    t.digest += walk_digest(w, x, h);
  }
  return t;
}

}  // namespace shoal_apps::randomwalk
