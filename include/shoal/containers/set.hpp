// shoal::set<K>: a distributed hash set over every core of the job (ygm's
// set, Grappa's GlobalHashSet), owner computes.
//
//   auto s = shoal::set<std::string>::create();       // one task
//   s.async_insert("x");   s.async_erase("y");
//   s.async_visit("x", [](const std::string& k, int tag) { ... }, 3);
//   shoal::barrier();      // SPMD: every operation above applied
//   std::vector<std::string> all = s.gather_all();    // collective, sorted
//
// Partition, transport, ordering, completion, collectives, creation,
// destruction, errors and costs are those of shoal::map (containers/map.hpp):
// a set is a map from K to an empty member (one byte on the wire).
//   async_insert(k)              add k (no effect if present);
//   async_erase(k)               remove k;
//   async_visit(k, f, args...)   f(const K&, args...) on the owner, only if k
//                                is in the set (f captures nothing);
//   async_contains(k, f, args...) f(const K&, bool present, args...) on the
//                                owner, present or not (a lookup; f sends
//                                the answer on);
//   for_all(f)                   f(const K&) over this core's members;
//   size(), clear(), gather(root), gather_all() (sorted when K has <):
//                                collective, as for map;
//   destroy()                    one task, once nothing is in flight.
// No async_reduce: a set has no value to reduce.
#pragma once

#include "shoal/containers/detail/keyed.hpp"

#include <functional>
#include <vector>

namespace shoal {

namespace containers_detail {
struct set_tag {
  static constexpr const char* name = "shoal::set";
  static constexpr const char* create_name = "shoal::set::create";
  static constexpr const char* destroy_name = "shoal::set::destroy";
  static constexpr const char* insert_name = "shoal::set::async_insert";
  static constexpr const char* erase_name = "shoal::set::async_erase";
  static constexpr const char* reduce_name = "shoal::set::async_reduce";
  static constexpr const char* visit_name = "shoal::set::async_visit";
};
/// A set's value: nothing.
struct set_member {};

/// Calls a member visitor F(const K&, args...) from the map's f(k, v, args...).
template <class F>
struct set_visitor {
  template <class K, class... A>
  void operator()(const K& k, set_member&, A&... a) const {
    F{}(k, a...);
  }
};
}  // namespace containers_detail

template <class K, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
class set {
  using engine = containers_detail::keyed<K, containers_detail::set_member, Hash, Eq,
                                          containers_detail::set_tag>;

 public:
  set() = default;
  static set create() { return set(engine::create()); }

  int owner(const K& k) const noexcept { return e_.owner(k); }
  void async_insert(const K& k) const { e_.async_insert_if_missing(k, {}); }
  void async_erase(const K& k) const { e_.async_erase(k); }
  template <class F, class... Args>
  void async_visit(const K& k, F, const Args&... args) const {
    static_assert(stateless_function<F>,
                  "shoal::set::async_visit: the visitor must capture nothing (pass values as "
                  "arguments): it runs on the owner's core");
    e_.async_visit_if_exists(k, containers_detail::set_visitor<F>{}, args...);
  }
  /// f(const K&, bool present, args...) on k's owner (map's async_contains).
  template <class F, class... Args>
  void async_contains(const K& k, F f, const Args&... args) const {
    e_.async_contains(k, f, args...);
  }
  template <class F>
  void for_all(F&& f) const {
    e_.for_all([&f](const K& k, containers_detail::set_member&) { f(k); });
  }
  std::size_t local_size() const { return e_.local_size(); }
  std::size_t size() const { return e_.size(); }
  void clear() const { e_.clear(); }
  std::vector<K> gather(int root) const { return keys(e_.gather(root)); }
  std::vector<K> gather_all() const { return keys(e_.gather_all()); }
  void destroy() { e_.destroy(); }
  std::uint64_t id() const noexcept { return e_.id(); }

 private:
  explicit set(engine e) : e_(e) {}
  static std::vector<K> keys(std::vector<std::pair<K, containers_detail::set_member>> all) {
    std::vector<K> out;
    out.reserve(all.size());
    for (auto& kv : all) out.push_back(std::move(kv.first));
    return out;
  }
  engine e_;
};

}  // namespace shoal
