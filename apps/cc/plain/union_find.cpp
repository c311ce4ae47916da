// Sequential union-find for the cc app's validation (union_find.hpp).
#include "cc/plain/union_find.hpp"

#include <numeric>
#include <utility>

namespace shoal_apps::cc {

namespace {

struct forest {
  std::vector<std::int64_t> parent;
  std::vector<std::int64_t> size;

  explicit forest(std::int64_t n)
      : parent(static_cast<std::size_t>(n)), size(static_cast<std::size_t>(n), 1) {
    std::iota(parent.begin(), parent.end(), std::int64_t{0});
  }
  std::int64_t find(std::int64_t x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      auto& p = parent[static_cast<std::size_t>(x)];
      p = parent[static_cast<std::size_t>(p)];  // halving: x skips to its grandparent
      x = p;
    }
    return x;
  }
  void join(std::int64_t a, std::int64_t b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (size[static_cast<std::size_t>(a)] < size[static_cast<std::size_t>(b)]) std::swap(a, b);
    parent[static_cast<std::size_t>(b)] = a;
    size[static_cast<std::size_t>(a)] += size[static_cast<std::size_t>(b)];
  }
};

}  // namespace

std::vector<std::int64_t> component_labels(std::int64_t vertices, const std::vector<edge>& edges) {
  forest f(vertices);
  for (const edge& e : edges) f.join(e.u, e.v);
  // Name each component by its smallest vertex: the first vertex seen (in
  // increasing order) of each root.
  const auto n = static_cast<std::size_t>(vertices);
  std::vector<std::int64_t> name_of_root(n, -1);
  std::vector<std::int64_t> labels(n);
  for (std::int64_t v = 0; v < vertices; ++v) {
    auto& name = name_of_root[static_cast<std::size_t>(f.find(v))];
    if (name < 0) name = v;
    labels[static_cast<std::size_t>(v)] = name;
  }
  return labels;
}

std::int64_t count_components(const std::vector<std::int64_t>& labels) {
  std::int64_t n = 0;
  for (std::size_t v = 0; v < labels.size(); ++v)
    if (labels[v] == static_cast<std::int64_t>(v)) ++n;
  return n;
}

}  // namespace shoal_apps::cc
