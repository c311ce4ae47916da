// `shoal bfs`: Graph500 breadth-first search on shoal.
//
//   1. The input: a Kronecker graph (--scale, --edgefactor, --seed) or a
//      file (--graph), which every process reads.
//   2. Distributed CSR construction, timed (construct.hpp).
//   3. Search keys chosen on rank 0 among vertices with an edge (or --root).
//   4. For each key: a search by the chosen variant (--impl; search.hpp),
//      timed; the parent array gathered on rank 0 and checked there by the
//      five Graph500 rules against the whole input edge list (untimed).
//   5. The report: TEPS per search = input edges in the component / search
//      time; harmonic mean (TEPS, and the rate in MTEPS), min, median, max.
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "bfs/construct.hpp"
#include "bfs/corrupt.hpp"
#include "bfs/distribution.hpp"
#include "bfs/plain/graph500.hpp"
#include "bfs/plain/search_report.hpp"
#include "bfs/search.hpp"
#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/progress.hpp"
#include "common/plain/text_input.hpp"
#include "common/same_input.hpp"

namespace shoal_apps {

namespace {

using namespace shoal_apps::bfs;

struct bfs_options {
  graph_options graph;
  bool sender_filter = true;
  std::string reduce = "none";  ///< --reduce: none or min (async only)
  std::uint32_t cache_slots = 4096;
  std::string routing = "direct";  ///< --routing (async only)
  int corrupt_rule = 0;            ///< hidden test hook: break this rule in the first search
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Throws input_error when the parent array (8 bytes a vertex, in the
/// global heap) would not fit in --heap-mb: found before the input is spread
/// and the CSR built, not by global_alloc after that work.
void check_fits_in_heap(std::int64_t vertices, const std::string& origin) {
  const shoal::config& c = shoal::current_config();
  const double heap = static_cast<double>(c.heap_mb) * 1024.0 * 1024.0;
  const int cores_here = shoal::cores() / shoal::ranks();
  // Blocks are dealt round-robin: each core may hold one block more.
  const double need = 8.0 * static_cast<double>(vertices) / shoal::ranks() +
                      static_cast<double>(c.block_bytes) * cores_here;
  if (need <= heap) return;
  throw input_error(fmt::format(
      "{}: a graph of {} vertices needs about {} of global heap per process for its parent "
      "array, more than --heap-mb {} ({}); raise --heap-mb or use more processes{}",
      origin, vertices, human_bytes(need), c.heap_mb, human_bytes(heap),
      origin.starts_with("--graph") ? ", or number the vertices 0 .. vertices - 1 with no gaps"
                                    : ""));
}

/// The input's shape; reads --graph into g_file_edges (every process).
graph_shape load_input(const bfs_options& o) {
  graph_shape s;
  s.scale = o.graph.scale;
  s.edgefactor = o.graph.edgefactor;
  s.seed = o.graph.seed;
  std::string origin = "--scale/--edgefactor";
  if (!o.graph.file.empty()) {
    edge_list list = read_graph_file(o.graph.file);
    check_same_input_on_every_rank(digest_of(list), "--graph " + printable(o.graph.file, 200));
    s.from_file = true;
    s.vertices = list.vertices;
    s.edges = static_cast<std::int64_t>(list.edges.size());
    origin = "--graph " + list.size_origin;
    g_file_edges = std::move(list.edges);
  } else {
    s.vertices = kronecker_vertices(o.graph);
    s.edges = kronecker_edge_count(o.graph);
  }
  check_fits_in_memory(s.vertices, s.edges, shoal::ranks(), origin);
  check_fits_in_heap(s.vertices, origin);
  if (o.graph.root >= s.vertices)
    throw input_error(fmt::format("--root {}: no such vertex (the graph has {} vertices)",
                                  o.graph.root, s.vertices));
  return s;
}

/// The whole input edge list on rank 0, for validation and the key choice
/// (the Kronecker list generated in parallel on rank 0's cores); empty on
/// other ranks. Every rank calls it (it runs the job once).
std::vector<edge> whole_edge_list(const bfs_options& o, const graph_shape& s) {
  std::vector<edge> all;
  if (s.from_file) {
    if (shoal::myrank() == 0) all = std::move(g_file_edges);
    std::vector<edge>().swap(g_file_edges);
    return all;
  }
  if (shoal::myrank() == 0) all.resize(static_cast<std::size_t>(s.edges));
  constexpr std::int64_t piece = std::int64_t{1} << 18;
  shoal::run([&] {
    shoal::parallel_for(0, (s.edges + piece - 1) / piece, 1, [&](std::int64_t k) {
      std::vector<edge> part;
      kronecker_edges(o.graph, k * piece, std::min(s.edges, (k + 1) * piece), part);
      std::copy(part.begin(), part.end(), all.begin() + k * piece);
    });
  });
  return all;
}

std::vector<std::int64_t> search_keys(const bfs_options& o, const graph_shape& s,
                                      const std::vector<edge>& edges) {
  if (o.graph.root >= 0) return {o.graph.root};
  std::vector<bool> has_edge(static_cast<std::size_t>(s.vertices), false);
  for (const edge& e : edges) {
    if (e.u == e.v) continue;
    has_edge[static_cast<std::size_t>(e.u)] = true;
    has_edge[static_cast<std::size_t>(e.v)] = true;
  }
  return choose_roots(has_edge, o.graph.roots, o.graph.seed);
}

/// Every search, in the root task: timed, gathered and validated on rank 0
/// while the other cores wait (all in one run, so the cores, their buffers
/// and stacks stay warm from one search to the next).
template <class V>
search_results search_all(const bfs_options& o, variant v, const search_setup& setup,
                          std::int64_t vertices, const std::vector<std::int64_t>& keys,
                          const std::vector<edge>& edges) {
  search_results out;
  progress shown("bfs: roots", static_cast<std::int64_t>(keys.size()));
  std::vector<std::int64_t> parent;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::int64_t root = keys[k];
    const auto t0 = std::chrono::steady_clock::now();
    search<V>(v, setup, static_cast<std::uint64_t>(root));
    const double seconds = seconds_since(t0);
    parent.assign(static_cast<std::size_t>(vertices), -1);
    gather_parents<V>(&parent);
    if (k == 0 && o.corrupt_rule != 0) corrupt_parent_array(parent, edges, root, o.corrupt_rule);
    out.record(root, validate_bfs_tree(edges, vertices, root, parent), seconds);
    shown.update(static_cast<std::int64_t>(k + 1));
  }
  return out;
}

/// Whether vertex ids and packed ids (distribution.hpp) fit 32 bits, with
/// the largest value left free as core_state's `unreached`.
bool fits_32_bits(const graph_shape& s) {
  const vertex_distribution d(s.vertices, shoal::cores(), shoal::current_config().block_bytes / 8);
  constexpr std::uint64_t limit = std::uint64_t{1} << 32;
  return static_cast<std::uint64_t>(s.vertices) < limit && d.packed_range() < limit;
}

template <class V>
void run_with(const bfs_options& o, const graph_shape& s, run_context& ctx) {
  const variant v = variant_named(ctx.impl);
  double construction_s = 0;
  const std::int64_t block = shoal::current_config().block_bytes / 8;
  shoal::run([&] {
    const auto t0 = std::chrono::steady_clock::now();
    build_graph<V>(s, block);
    construction_s = seconds_since(t0);
  });
  const std::vector<edge> edges = whole_edge_list(o, s);
  std::vector<std::int64_t> keys;  // rank 0, where the root task runs
  if (shoal::myrank() == 0) keys = search_keys(o, s, edges);
  if (shoal::myrank() == 0 && keys.empty())
    throw input_error("the graph has no edge other than self-loops: no search key");
  search_results out;
  shoal::run([&] {
    search_setup setup{shoal::global_alloc<std::int64_t>(s.vertices), o.sender_filter,
                       o.reduce == "min", o.cache_slots,
                       shoal::named_routing::from_name(o.routing)};
    prepare_searches<V>(v, setup);
    out = search_all<V>(o, v, setup, s.vertices, keys, edges);
    finish_searches<V>();
    shoal::global_free(setup.parents);
  });
  g_state<V>.reset();  // the graph's memory, before the next app of a suite
  if (shoal::myrank() == 0) {
    fill_search_report(ctx.out, {o.graph, s.vertices, s.edges}, o.sender_filter, out,
                       construction_s);
    ctx.out.set("reduce", o.reduce);
    if (v == variant::hybrid) {
      const direction_counts d = take_direction_counts();
      const std::int64_t searches = std::max<std::int64_t>(d.searches, 1);
      ctx.out.set("edges_examined_per_search", d.edges_examined / searches);
      ctx.out.set("top_down_levels", d.top_down_levels, false);
      ctx.out.set("bottom_up_levels", d.bottom_up_levels, false);
    }
    if (o.routing != "direct") ctx.out.set("routing", o.routing);
    const reduction_counts r = last_reduction_counts();
    if (o.reduce == "min") {
      ctx.out.set("messages_removed", r.hits);
      ctx.out.set(
          "reduction_hit_rate",
          r.lookups == 0 ? 0.0 : static_cast<double>(r.hits) / static_cast<double>(r.lookups));
    }
    if (shoal::current_config().stats && (o.reduce != "none" || o.routing != "direct")) {
      // The runtime's --stats: the routed or reducing channel's counts over
      // every search, beside the runtime's counters.
      ctx.out.set("stats_reduction_lookups", r.lookups, false);
      ctx.out.set("stats_messages_removed", r.hits, false);
      ctx.out.set("stats_values_forwarded", r.forwarded, false);
      ctx.out.set("stats_mpi_messages", r.mpi_messages, false);
      ctx.out.set("stats_mpi_bytes", r.mpi_bytes, false);
    }
  }
}

}  // namespace

app_spec bfs_app() {
  return {"bfs", "Graph500 breadth-first search (Kronecker or file graph), validated",
          variant_names(), [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<bfs_options>();
            add_graph_options(cmd, o->graph);
            cmd.add_flag("--sender-filter,!--no-sender-filter", o->sender_filter,
                         "send each remote vertex at most once per search (default on)");
            cmd.add_option("--reduce", o->reduce,
                           "message reduction (--impl async): none, or min (a library target "
                           "channel keeps the least level per vertex before relaxations travel)")
                ->check(CLI::IsMember({"none", "min"}))
                ->capture_default_str();
            const CLI::Option* cache_slots =
                cmd.add_option("--cache-slots", o->cache_slots,
                               "slots of each core's reduction cache (--reduce min)")
                    ->check(CLI::Range(1U, shoal::max_cache_slots))
                    ->capture_default_str();
            cmd.add_option("--routing", o->routing,
                           "how relaxations travel between processes (--impl async): direct, "
                           "hypercube (log2 P hops, peers one bit away) or node (through one "
                           "process per node; processes per node from the launcher)")
                ->check(CLI::IsMember({"direct", "hypercube", "node"}))
                ->capture_default_str();

            // Hidden: breaks one rule after the first search.
            hide_from_help(
                cmd,
                cmd.add_option("--corrupt-for-test", o->corrupt_rule)->check(CLI::Range(1, 5)));
            return [o, cache_slots](run_context& ctx) {
              refuse_unused(cache_slots, o->reduce == "min", "--reduce min");
              if (o->routing != "direct" && ctx.impl != "async")
                throw input_error(
                    fmt::format("--routing {}: routing applies to --impl async only, not "
                                "--impl {}",
                                o->routing, ctx.impl));
              if (o->reduce != "none" && ctx.impl != "async")
                throw input_error(
                    fmt::format("--reduce {}: reductions apply to --impl async "
                                "only, not --impl {}",
                                o->reduce, ctx.impl));
              const graph_shape s = load_input(*o);
              if (fits_32_bits(s))
                run_with<std::uint32_t>(*o, s, ctx);
              else
                run_with<std::uint64_t>(*o, s, ctx);
            };
          }};
}

}  // namespace shoal_apps
