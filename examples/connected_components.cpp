// connected_components: union-find over a distributed disjoint set.
//
// SPMD: one task per core (on_all_cores) makes its share of the graph's
// edges (edge i on core i mod cores) and joins each edge's end points with
// async_union on one shoal::disjoint_set<int64>
// (include/shoal/containers/disjoint_set.hpp): each union is a chain of
// messages between the owners of the items it touches, none of which the
// task waits for. compress() is collective: it waits until every union has
// been applied, then points every item at its set's root, the set's
// smallest vertex. Each core then reads its part (for_all) and core 0
// gathers every (vertex, root); a vertex no edge touched is a component of
// its own. A sequential union-find checks every label.
//
//   example-connected-components [--vertices N] [--edges M]
//   mpirun -np 2 example-connected-components --cores 2
#include <shoal/containers/disjoint_set.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace {

using i64 = std::int64_t;

struct edge {
  i64 u;
  i64 v;
};

// Edge i of the graph: two pseudo-random end points. Below one edge per
// vertex the graph has many components of many sizes.
edge make_edge(i64 i, i64 n) {
  std::uint64_t x = static_cast<std::uint64_t>(i) * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL;
  x ^= x >> 29;
  const i64 u = static_cast<i64>(x % static_cast<std::uint64_t>(n));
  const i64 v = static_cast<i64>((x >> 20) % static_cast<std::uint64_t>(n));
  return {u, v};
}

i64 find(std::vector<i64>& parent, i64 x) {
  while (parent[static_cast<std::size_t>(x)] != x) {
    parent[static_cast<std::size_t>(x)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    x = parent[static_cast<std::size_t>(x)];
  }
  return x;
}

// The smallest vertex of each vertex's component, by union-find.
std::vector<i64> labels_sequential(i64 n, i64 m) {
  std::vector<i64> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), i64{0});
  for (i64 i = 0; i < m; ++i) {
    const edge e = make_edge(i, n);
    const i64 a = find(parent, e.u);
    const i64 b = find(parent, e.v);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);  // root = min id
  }
  std::vector<i64> label(static_cast<std::size_t>(n));
  for (i64 x = 0; x < n; ++x) label[static_cast<std::size_t>(x)] = find(parent, x);
  return label;
}

struct vertex_root {
  i64 vertex;
  i64 root;
};

std::vector<i64> result;  // core 0: every vertex's label

void join_edges(shoal::disjoint_set<i64> sets, i64 n, i64 m) {
  for (i64 i = shoal::mycore(); i < m; i += shoal::cores()) {
    const edge e = make_edge(i, n);
    sets.async_union(e.u, e.v);
  }
  sets.compress();  // every union applied, every item pointing at its root
  std::vector<vertex_root> mine;
  sets.for_all([&mine](const i64& x, const i64& root) { mine.push_back({x, root}); });
  const auto all = shoal::gatherv(std::span<const vertex_root>(mine), 0);
  if (shoal::mycore() != 0) return;
  result.resize(static_cast<std::size_t>(n));
  std::iota(result.begin(), result.end(), i64{0});  // untouched vertices: their own set
  for (const vertex_root& r : all.values) result[static_cast<std::size_t>(r.vertex)] = r.root;
}

i64 flag(int argc, char** argv, const char* name, i64 fallback, i64 lo, i64 hi) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == name) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (*end != '\0' || v < lo || v > hi) {
        std::fprintf(
            stderr,
            "example-connected-components: %s: expected an integer in [%lld, %lld], got '%s'\n",
            name, static_cast<long long>(lo), static_cast<long long>(hi), argv[i + 1]);
        std::exit(2);
      }
      return v;
    }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  const i64 n = flag(argc, argv, "--vertices", 20000, 1, i64{1} << 26);
  const i64 m = flag(argc, argv, "--edges", 16000, 0, i64{1} << 28);
  shoal::run([n, m] {
    auto sets = shoal::disjoint_set<i64>::create();
    shoal::on_all_cores([sets, n, m] { join_edges(sets, n, m); });
    sets.destroy();
  });
  int status = 0;
  if (shoal::myrank() == 0) {
    const std::vector<i64> expected = labels_sequential(n, m);
    i64 wrong = 0, components = 0;
    for (i64 x = 0; x < n; ++x) {
      wrong += result[static_cast<std::size_t>(x)] != expected[static_cast<std::size_t>(x)];
      components += expected[static_cast<std::size_t>(x)] == x;
    }
    status = wrong == 0 ? 0 : 1;
    std::printf(
        "connected_components: %lld vertices, %lld edges, %lld components on %d cores, %lld "
        "labels differ from a sequential union-find: %s\n",
        static_cast<long long>(n), static_cast<long long>(m), static_cast<long long>(components),
        shoal::cores(), static_cast<long long>(wrong), status == 0 ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return status;
}
