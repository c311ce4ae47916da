// Distributed CSR construction: routing arcs to their owners, then rows.
#include "bfs/construct.hpp"

#include <algorithm>
#include <atomic>

#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

std::vector<edge> g_file_edges;

namespace {

constexpr std::int64_t chunk_edges = std::int64_t{1} << 16;

/// Sends arc x->y to the owner of x (or keeps it when that is this core).
template <class V>
void route(core_state<V>& st, const shoal::channel<arc<V>>& ch, std::uint64_t x, std::uint64_t y) {
  const int owner = st.dist.owner(x);
  const arc<V> a{static_cast<V>(st.dist.local(x)), static_cast<V>(st.dist.pack(y))};
  if (owner == st.me) {
    st.arcs.push_back(a);
    return;
  }
  ch.send(owner, a);
}

/// This core's slice of the input, in chunks, routed arc by arc.
template <class V>
void route_slice(core_state<V>& st, const graph_shape& shape, const shoal::channel<arc<V>>& ch) {
  const std::int64_t c = st.me;
  const std::int64_t n = shoal::cores();
  const std::int64_t lo = shape.edges / n * c + shape.edges % n * c / n;
  const std::int64_t hi = shape.edges / n * (c + 1) + shape.edges % n * (c + 1) / n;
  graph_options o;
  o.scale = shape.scale;
  o.edgefactor = shape.edgefactor;
  o.seed = shape.seed;
  std::vector<edge> chunk;
  yield_every pacing;
  for (std::int64_t a = lo; a < hi; a += chunk_edges) {
    const std::int64_t b = std::min(hi, a + chunk_edges);
    chunk.clear();
    if (shape.from_file)
      chunk.assign(g_file_edges.begin() + a, g_file_edges.begin() + b);
    else
      kronecker_edges(o, a, b, chunk);
    for (const edge& e : chunk) {
      if (e.u == e.v) continue;  // a self-loop never changes a search
      route(st, ch, static_cast<std::uint64_t>(e.u), static_cast<std::uint64_t>(e.v));
      route(st, ch, static_cast<std::uint64_t>(e.v), static_cast<std::uint64_t>(e.u));
      pacing.tick();
    }
  }
}

/// Counting sort of the inbox into rows; each row sorted, duplicates dropped.
template <class V>
void fill_rows(core_state<V>& st) {
  const auto n = static_cast<std::size_t>(st.dist.local_count(st.me));
  static std::atomic<std::uint64_t> graphs{0};
  st.graph_id = graphs.fetch_add(1, std::memory_order_relaxed) + 1;
  st.offsets.assign(n + 1, 0);
  for (const arc<V>& a : st.arcs) ++st.offsets[static_cast<std::size_t>(a.local) + 1];
  for (std::size_t i = 0; i < n; ++i) st.offsets[i + 1] += st.offsets[i];
  std::vector<std::uint64_t> at(st.offsets.begin(), st.offsets.end() - 1);
  st.adj.resize(st.arcs.size());
  for (const arc<V>& a : st.arcs) st.adj[at[a.local]++] = a.other;
  std::vector<arc<V>>().swap(st.arcs);
  std::uint64_t out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto first = st.adj.begin() + static_cast<std::ptrdiff_t>(st.offsets[i]);
    const auto last = st.adj.begin() + static_cast<std::ptrdiff_t>(st.offsets[i + 1]);
    std::sort(first, last);
    const auto unique_end = std::unique(first, last);
    st.offsets[i] = out;
    out += static_cast<std::uint64_t>(
        std::copy(first, unique_end, st.adj.begin() + static_cast<std::ptrdiff_t>(out)) -
        (st.adj.begin() + static_cast<std::ptrdiff_t>(out)));
  }
  st.offsets[n] = out;
  st.adj.resize(out);
  st.adj.shrink_to_fit();
}

}  // namespace

template <class V>
void build_graph(const graph_shape& shape, std::int64_t block) {
  // Reset every core before any core routes, so no arriving arc is lost.
  const std::int64_t vertices = shape.vertices;
  const std::int64_t arcs_per_core = 2 * shape.edges / shoal::cores() + 1024;
  shoal::on_all_cores([vertices, block, arcs_per_core] {
    core_state<V>& st = g_state<V>.local();
    st.dist = vertex_distribution(vertices, shoal::cores(), block);
    st.me = shoal::mycore();
    st.arcs.clear();
    st.arcs.reserve(static_cast<std::size_t>(arcs_per_core + arcs_per_core / 16));
  });
  auto ch =
      shoal::make_channel<arc<V>>([](const arc<V>& a) { g_state<V>.local().arcs.push_back(a); });
  shoal::on_all_cores([shape, ch] {
    core_state<V>& st = g_state<V>.local();
    route_slice(st, shape, ch);
    ch.end_phase();  // every core's arcs are in their owners' inboxes
    fill_rows(st);
  });
  ch.close();
}

template void build_graph<std::uint32_t>(const graph_shape&, std::int64_t);
template void build_graph<std::uint64_t>(const graph_shape&, std::int64_t);

}  // namespace shoal_apps::bfs
