// `shoal cc`: connected components of an undirected graph (Kronecker or a
// file, the graph inputs of bfs) on shoal's containers, validated against a
// sequential union-find (plain/union_find.hpp).
//
//   shoal cc [--impl unionfind|labelprop] [--scale S --edgefactor F --seed s | --graph FILE]
//
// The edge list is cut into one slice per core (Kronecker: each core
// generates its own; a file: every process reads it, each core takes its
// slice). Timed, after the slices are in place:
//   unionfind  every core async_unions its edges into one
//              shoal::disjoint_set<int64> (containers/disjoint_set.hpp),
//              then compress() points every vertex at its set's root, the
//              set's smallest vertex;
//   labelprop  label propagation over shoal::array<int64> (containers/
//              array.hpp), one label per vertex, first its own id: in each
//              round every core, for each of its edges {u, v}, visits u's
//              label on its owner, which offers it to v's owner (and the same
//              from v to u); a smaller label replaces the larger. Rounds end
//              with a barrier; the loop stops after a round that lowered no
//              label, when every component carries its smallest vertex.
// Both name a component by its smallest vertex; a vertex with no edge (or
// only self-loops) is a component of its own. Validation (untimed): every
// vertex's label is gathered to core 0 and compared with the sequential
// union-find's. Bad input exits 2 with the graph readers' messages (the file,
// the line, what was wrong) or the memory check's.
#include <shoal/containers/array.hpp>
#include <shoal/containers/disjoint_set.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cc/plain/union_find.hpp"
#include "common/app.hpp"
#include "common/plain/graph.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/text_input.hpp"
#include "common/same_input.hpp"

namespace shoal_apps {

namespace {

struct cc_options {
  graph_options graph;
  bool corrupt = false;
};

struct input {
  graph_options graph;
  bool from_file = false;
  std::int64_t vertices = 0;
  std::int64_t edges = 0;
  std::vector<edge> file_edges;  // --graph: the whole list, on every process
};
input g_in;  // set on every process before shoal::run

/// Each local core's slice of the edge list (index: local core).
std::vector<std::vector<edge>> g_slices;

struct outcome {
  std::vector<std::int64_t> labels;  // core 0 (rank 0): every vertex's label
  std::int64_t rounds = 0;
};
outcome g_out;

int local_core() { return shoal::mycore() % (shoal::cores() / shoal::ranks()); }

/// This core's slice of the edge list: edges [first, last) of the input.
void load_slice() {
  const auto p = static_cast<std::int64_t>(shoal::cores());
  const auto c = static_cast<std::int64_t>(shoal::mycore());
  const std::int64_t first = g_in.edges * c / p;
  const std::int64_t last = g_in.edges * (c + 1) / p;
  std::vector<edge>& mine = g_slices[static_cast<std::size_t>(local_core())];
  mine.clear();
  if (g_in.from_file) {
    mine.assign(g_in.file_edges.begin() + first, g_in.file_edges.begin() + last);
  } else {
    kronecker_edges(g_in.graph, first, last, mine);
  }
}

const std::vector<edge>& my_slice() { return g_slices[static_cast<std::size_t>(local_core())]; }

// ---- --impl unionfind ----

using vertex_sets = shoal::disjoint_set<std::int64_t>;

struct item_root {
  std::int64_t item;
  std::int64_t root;
};

double components_by_union_find() {
  auto sets = vertex_sets::create();
  const auto t0 = std::chrono::steady_clock::now();
  shoal::on_all_cores([sets] {
    for (const edge& e : my_slice()) sets.async_union(e.u, e.v);
    sets.compress();  // begins with a barrier: every union applied
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  shoal::on_all_cores([sets] {
    std::vector<item_root> mine;
    sets.for_all([&mine](const std::int64_t& x, const std::int64_t& root) {
      mine.push_back({x, root});
    });
    const auto all = shoal::gatherv(std::span<const item_root>(mine), 0);
    if (shoal::mycore() != 0) return;
    g_out.labels.resize(static_cast<std::size_t>(g_in.vertices));
    std::iota(g_out.labels.begin(), g_out.labels.end(), std::int64_t{0});
    for (const item_root& r : all.values) g_out.labels[static_cast<std::size_t>(r.item)] = r.root;
  });
  sets.destroy();
  return seconds;
}

// ---- --impl labelprop ----

using labels_array = shoal::array<std::int64_t>;

/// Labels this core lowered since the run began (visitors run on the
/// owner's thread). Never reset: a round's change count is the difference
/// of two totals, so a visit of the next round that arrives early is not
/// lost by a reset.
thread_local std::uint64_t tls_lowered = 0;

/// On the owner of `to`: lowers its label to `offered` if that is smaller.
struct take_smaller {
  void operator()(std::uint64_t, std::int64_t& label, std::int64_t offered) const {
    if (offered < label) {
      label = offered;
      ++tls_lowered;
    }
  }
};
/// On the owner of an edge's one end: offers its label to the other end.
struct offer_label {
  void operator()(std::uint64_t, std::int64_t& label, std::uint64_t to, labels_array a) const {
    a.async_visit(to, take_smaller{}, label);
  }
};

double components_by_label_propagation() {
  auto labels = labels_array::create(static_cast<std::uint64_t>(g_in.vertices));
  const auto t0 = std::chrono::steady_clock::now();
  shoal::on_all_cores([labels] {
    labels.for_all([](std::uint64_t v, std::int64_t& l) { l = static_cast<std::int64_t>(v); });
    shoal::barrier();
    std::uint64_t before = shoal::allreduce_sum(tls_lowered);
    std::int64_t rounds = 0;
    for (;;) {
      for (const edge& e : my_slice()) {
        if (e.u == e.v) continue;
        labels.async_visit(static_cast<std::uint64_t>(e.u), offer_label{},
                           static_cast<std::uint64_t>(e.v), labels);
        labels.async_visit(static_cast<std::uint64_t>(e.v), offer_label{},
                           static_cast<std::uint64_t>(e.u), labels);
      }
      shoal::barrier();  // every offer of the round, and what it lowered, applied
      ++rounds;
      const std::uint64_t after = shoal::allreduce_sum(tls_lowered);
      if (after == before) break;
      before = after;
    }
    if (shoal::mycore() == 0) g_out.rounds = rounds;
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  shoal::on_all_cores([labels] {
    auto all = labels.gather(0);
    if (shoal::mycore() == 0) g_out.labels = std::move(all);
  });
  labels.destroy();
  return seconds;
}

// ---- the run ----

void load_input(const graph_options& o) {
  g_in = {};
  g_in.graph = o;
  std::string origin = "--scale/--edgefactor";
  if (!o.file.empty()) {
    edge_list list = read_graph_file(o.file);
    check_same_input_on_every_rank(digest_of(list), "--graph " + printable(o.file, 200));
    g_in.from_file = true;
    g_in.vertices = list.vertices;
    g_in.edges = static_cast<std::int64_t>(list.edges.size());
    g_in.file_edges = std::move(list.edges);
    origin = "--graph " + list.size_origin;
  } else {
    g_in.vertices = kronecker_vertices(o);
    g_in.edges = kronecker_edge_count(o);
  }
  // Per process: the slices (16 bytes an edge, shared among the ranks), a
  // file's whole list, labels (8 bytes a vertex, shared) and, on rank 0, the
  // whole list, the gathered labels and the reference's three arrays.
  const double e = static_cast<double>(g_in.edges);
  const double v = static_cast<double>(g_in.vertices);
  const double need = 16.0 * e / shoal::ranks() + (g_in.from_file ? 16.0 * e : 0.0) +
                      8.0 * v / shoal::ranks() + 16.0 * e + 40.0 * v;
  check_memory(need * shoal::ranks(), 0.8,
               fmt::format("{}: a graph of {} vertices and {} edges needs about {} of memory",
                           origin, g_in.vertices, g_in.edges, human_bytes(need * shoal::ranks())),
               "use a smaller --scale or --edgefactor, or more machines");
}

/// The whole edge list on rank 0 (empty elsewhere), for the reference.
std::vector<edge> whole_edge_list() {
  if (shoal::myrank() != 0) return {};
  if (g_in.from_file) return std::move(g_in.file_edges);
  std::vector<edge> all;
  kronecker_edges(g_in.graph, 0, g_in.edges, all);
  return all;
}

void run_cc(const cc_options& o, run_context& ctx) {
  load_input(o.graph);
  g_out = {};
  g_slices.assign(static_cast<std::size_t>(shoal::cores() / shoal::ranks()), {});
  double seconds = 0;
  shoal::run([&] {
    shoal::on_all_cores([] { load_slice(); });
    seconds =
        ctx.impl == "labelprop" ? components_by_label_propagation() : components_by_union_find();
  });
  g_slices.clear();
  if (shoal::myrank() != 0) return;
  report& out = ctx.out;
  out.set_problem(g_in.from_file ? fmt::format("--graph {}", o.graph.file)
                                 : fmt::format("Kronecker scale {}, edgefactor {}, seed {}",
                                               o.graph.scale, o.graph.edgefactor, o.graph.seed));
  out.set_time(seconds);
  out.set_rate(static_cast<double>(g_in.edges) / seconds / 1e6, "M edges/s");
  out.set("vertices", g_in.vertices);
  out.set("edges", g_in.edges);
  if (ctx.impl == "labelprop") out.set("rounds", g_out.rounds);
  // Validation: the same edges through a sequential union-find.
  if (o.corrupt &&
      g_out.labels.size() > 1) {  // the check must see it: a label that cannot be right
    std::int64_t& last = g_out.labels.back();
    last = last == 0 ? g_in.vertices - 1 : 0;
  }
  const std::vector<std::int64_t> reference =
      cc::component_labels(g_in.vertices, whole_edge_list());
  const std::int64_t found = cc::count_components(g_out.labels);
  const std::int64_t expected = cc::count_components(reference);
  out.set("components", found);
  std::int64_t wrong = 0;
  for (std::size_t v = 0; v < reference.size(); ++v)
    if (v >= g_out.labels.size() || g_out.labels[v] != reference[v]) ++wrong;
  out.set_validated(wrong == 0 && g_out.labels.size() == reference.size(),
                    fmt::format("{} components ({} expected), {} of {} vertices labelled "
                                "differently from a sequential union-find",
                                found, expected, wrong, reference.size()));
}

}  // namespace

app_spec cc_app() {
  return {"cc",
          "connected components (Kronecker or file graph) by disjoint_set or label "
          "propagation over array, validated",
          {"unionfind", "labelprop"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<cc_options>();
            add_graph_options(cmd, o->graph);
            // The search keys of the graph options mean nothing here.
            cmd.remove_option(cmd.get_option("--roots"));
            cmd.remove_option(cmd.get_option("--root"));
            // Without search keys the seed only drives the generator: a file excludes it.
            cmd.get_option("--graph")->excludes(
                cmd.get_option("--seed")->description("seed of the Kronecker generator"));
            hide_from_help(cmd, cmd.add_flag("--corrupt", o->corrupt,
                                             "spoil one label before validation (tests)"));
            return [o](run_context& ctx) { run_cc(*o, ctx); };
          }};
}

}  // namespace shoal_apps
