// shoal::disjoint_set<T>: distributed union-find (ygm's disjoint_set),
// owner computes, with asynchronous unions and collective path compression.
//
//   auto ds = shoal::disjoint_set<std::uint64_t>::create();    // one task
//   shoal::on_all_cores([ds] {
//     for (auto [a, b] : my_edges) ds.async_union(a, b);
//     const auto roots = ds.find_all();   // collective: (item, root), sorted by item
//   });
//   ds.destroy();
//
// Representation: each item's parent lives on the item's owner (the hash
// partition of shoal::map); an item never recorded is its own parent. The
// forest keeps parent(x) <= x (T ordered by <), so it never has a cycle,
// and a set's root is its smallest item.
//
// async_union(a, b) starts a chain of messages (Rem's algorithm with
// splicing, one owner per step): at the owner of u, for a step (u, v) with
// u > v: if u is a root it takes v as parent and the chain ends; otherwise,
// with parent p, u takes min(p, v) as parent and the step (p, v) (or
// (v, p), the larger first) goes to p's owner; a step with u < v is passed
// to v's owner swapped; u == v ends it. Each step's larger item is smaller
// than the last's, so a chain ends after at most the depth of the two trees.
// Concurrent unions are safe: an edge only ever joins items that end in the
// same set. async_insert(x) records x as a singleton (unions record theirs).
//
// Completion: shoal::barrier() (SPMD) or shoal::drain_messages() (one task)
// after the unions, as for map. Collective (SPMD, every call begins with a
// barrier): compress() points every item at its root (pointer jumping:
// rounds of one message per non-root item, until a round changes nothing,
// ceil(log2 depth) + 1 rounds); find_all(): compress(), then every (item,
// root) on every core, sorted by item; num_sets(): compress(), then the
// number of roots; size(): the items; clear(). Local: for_all(f) runs
// f(const T& item, const T& parent) over this core's items. T is
// serializable, hashable and totally ordered. Errors name
// "shoal::disjoint_set #<id>" (use after destroy, exhausted heap, ...).
#pragma once

#include "shoal/containers/detail/keyed.hpp"

#include <concepts>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace shoal {

namespace containers_detail {
struct disjoint_set_tag {
  static constexpr const char* name = "shoal::disjoint_set";
  static constexpr const char* create_name = "shoal::disjoint_set::create";
  static constexpr const char* destroy_name = "shoal::disjoint_set::destroy";
  static constexpr const char* insert_name = "shoal::disjoint_set::async_insert";
  static constexpr const char* erase_name = "shoal::disjoint_set::async_erase";
  static constexpr const char* reduce_name = "shoal::disjoint_set::async_union";
  static constexpr const char* visit_name = "shoal::disjoint_set::async_union";
};
}  // namespace containers_detail

template <class T, class Hash = std::hash<T>, class Eq = std::equal_to<T>>
class disjoint_set {
  static_assert(std::totally_ordered<T>,
                "shoal::disjoint_set<T>: T must be totally ordered (a set's root is its smallest "
                "item)");

  /// An item's record: (recorded, parent); a default one (false) means
  /// "its own parent".
  using node = std::pair<bool, T>;
  using engine = containers_detail::keyed<T, node, Hash, Eq, containers_detail::disjoint_set_tag>;

  static const T& parent_of(const T& x, const node& n) { return n.first ? n.second : x; }

  /// One step (u, v) of a union, on u's owner.
  struct union_step {
    void operator()(const T& u, node& nu, const T& v, const engine& e) const {
      if (!nu.first) nu = node{true, u};
      if (u == v) return;
      if (u < v) {
        e.async_visit(v, union_step{}, u, e);
        return;
      }
      const T p = nu.second;
      if (p == u) {  // a root: v < u becomes its parent
        nu.second = v;
        e.async_insert_if_missing(v, node{true, v});
        return;
      }
      if (v < p) nu.second = v;  // splice: u's new parent joins the set anyway
      if (p == v) return;
      if (p < v) {
        e.async_visit(v, union_step{}, p, e);
      } else {
        e.async_visit(p, union_step{}, v, e);
      }
    }
  };

  /// Pointer jumping, on the owner of p = parent(x): tells x its grandparent.
  struct ask_grandparent {
    void operator()(const T& p, node& np, const T& x, const engine& e) const {
      const T gp = parent_of(p, np);
      if (!(gp == p)) e.async_visit_if_exists(x, take_parent{}, gp);
    }
  };
  struct take_parent {
    void operator()(const T&, node& nx, const T& gp) const {
      if (gp < nx.second) {
        nx.second = gp;
        ++t_changes;
      }
    }
  };
  inline static thread_local std::uint64_t t_changes = 0;

 public:
  disjoint_set() = default;
  static disjoint_set create() { return disjoint_set(engine::create()); }

  void async_insert(const T& x) const { e_.async_insert_if_missing(x, node{true, x}); }
  void async_union(const T& a, const T& b) const { e_.async_visit(a, union_step{}, b, e_); }

  template <class F>
  void for_all(F&& f) const {
    e_.for_all([&f](const T& x, node& n) { f(x, parent_of(x, n)); });
  }

  void compress() const {
    for (;;) {
      shoal::barrier();
      t_changes = 0;
      shoal::barrier();
      const engine e = e_;
      e_.for_all([&e](const T& x, node& n) {
        if (!(n.second == x)) e.async_visit_if_exists(n.second, ask_grandparent{}, x, e);
      });
      shoal::barrier();
      if (shoal::allreduce_sum(t_changes) == 0) return;
    }
  }

  std::vector<std::pair<T, T>> find_all() const {
    compress();
    std::vector<std::pair<T, T>> out;
    for (auto& [x, n] : e_.gather_all()) out.emplace_back(x, parent_of(x, n));
    return out;
  }

  std::size_t num_sets() const {
    compress();
    std::uint64_t roots = 0;
    e_.for_all([&roots](const T& x, node& n) { roots += parent_of(x, n) == x ? 1 : 0; });
    return static_cast<std::size_t>(shoal::allreduce_sum(roots));
  }

  std::size_t size() const { return e_.size(); }
  std::size_t local_size() const { return e_.local_size(); }
  void clear() const { e_.clear(); }
  void destroy() { e_.destroy(); }
  std::uint64_t id() const noexcept { return e_.id(); }

 private:
  explicit disjoint_set(engine e) : e_(e) {}
  engine e_;
};

}  // namespace shoal
