// connected_components: label propagation over global arrays.
//
// The graph's edges and every vertex's label live in global arrays spread
// over all cores. Each round runs a forall over the edges, at each edge's
// home core: it reads both end points' labels (blocking delegates: the task
// suspends, others run) and, when they differ, lowers the larger one with an
// asynchronous delegate at the label's home, which also counts the change.
// shoal::finish waits for every delegate of the round, wherever it ran; the
// rounds stop when one changes nothing. Every label ends as the smallest
// vertex id of its component, which a sequential union-find checks.
//
//   example-connected-components [--vertices N] [--edges M]
//   mpirun -np 2 example-connected-components --cores 2
#include <shoal/shoal.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
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
    parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
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

// Lowers the label at `p` to `l` at its home core; counts a change.
void lower(shoal::global_ptr<i64> p, i64 l, shoal::global_ptr<i64> changes) {
  shoal::delegate::post(p.core(), [p, l, changes] {
    i64& mine = *p.local();
    if (l >= mine) return;
    mine = l;
    shoal::delegate::async_add(changes, i64{1});
  });
}

i64 flag(int argc, char** argv, const char* name, i64 fallback, i64 lo, i64 hi) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == name) {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (*end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr,
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
  std::vector<i64> result(static_cast<std::size_t>(n));
  int rounds = 0;
  shoal::run([&] {
    auto label = shoal::global_alloc<i64>(n);
    auto edges = shoal::global_alloc<edge>(std::max<i64>(m, 1));
    auto changes = shoal::global_alloc<i64>(1);
    shoal::forall(label, n, [](i64 i, i64& l) { l = i; });
    shoal::forall(edges, m, [n](i64 i, edge& e) { e = make_edge(i, n); });
    for (i64 changed = 1; changed != 0; ++rounds) {
      shoal::delegate::write(changes, i64{0});
      shoal::finish([=] {
        shoal::forall(edges, m, [label, changes](i64, edge& e) {
          const i64 lu = shoal::delegate::read(label + e.u);
          const i64 lv = shoal::delegate::read(label + e.v);
          if (lu < lv) lower(label + e.v, lu, changes);
          if (lv < lu) lower(label + e.u, lv, changes);
        });
      });
      changed = shoal::delegate::read(changes);
    }
    shoal::read_range(label, std::span<i64>(result));  // every label, in one bulk read
    shoal::global_free(changes);
    shoal::global_free(edges);
    shoal::global_free(label);
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
        "connected_components: %lld vertices, %lld edges, %lld components in %d rounds on %d "
        "cores, %lld labels differ from union-find: %s\n",
        static_cast<long long>(n), static_cast<long long>(m), static_cast<long long>(components),
        rounds, shoal::cores(), static_cast<long long>(wrong), status == 0 ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return status;
}
