// shoal::counting_set<K>: distributed counts of keys (ygm's counting_set),
// owner computes, with a top-k query.
//
//   auto words = shoal::counting_set<std::string>::create();   // one task
//   shoal::on_all_cores([words] {
//     for (const std::string& w : my_words) words.async_insert(w);   // count + 1
//     const auto top = words.top_k(10);   // collective: (key, count), largest first
//   });
//
// Partition, ordering, completion, collectives, creation, destruction,
// errors and costs are those of shoal::map<K, std::uint64_t>
// (containers/map.hpp), with one difference in transport: when K is
// trivially copyable, async_insert sends the bare key (sizeof(K) bytes, no
// record header) on a second, fixed-size channel whose receiving loop adds
// a whole batch of keys to the owner's table in one pass (the table grown
// first, once for the batch; each key's home slot computed once and
// prefetched 16 keys ahead: flat_table::update_each); other keys travel as
// map records.
// A key of the caller's own core is counted at once while the core's table
// is small (under 2^15 keys); past that it goes through the core's own
// aggregation buffer like a remote key, so that the batch loop's prefetches
// overlap the table's cache misses (a table larger than the cache waited on
// memory once per local insert: 1.5-2x the rate at 1 x 1, 1 x 2 and 2 x 1,
// 2^20 keys, interleaved A/B on the loaded development machine). Because
// bare keys travel on their own stream, async_insert is not ordered with
// the set's other operations from the same core (erase, visit): a barrier
// between them orders them (map's per-key order holds among the inserts).
//   async_insert(k)             count of k + 1;
//   async_erase(k)              forget k;
//   async_visit(k, f, args...)  f(const K&, std::uint64_t count, args...) on the
//                               owner, only if k has been counted;
//   for_all(f)                  f(const K&, std::uint64_t count) over this core's keys;
//   top_k(k)                    collective (every operation applied first): the
//                               k largest counts as (key, count), by count
//                               descending, ties by key ascending when K has <;
//                               k = 0 gives none, k above the number of keys all;
//   size()                      collective: distinct keys;
//   clear(), gather(root), gather_all(): collective, as for map ((key, count)
//                               sorted by key);
//   destroy()                   one task, once nothing is in flight.
// Costs of top_k: each core sorts its best min(k, local keys), then an
// allgatherv of those (at most k * cores entries) and a merge on every core.
#pragma once

#include "shoal/containers/detail/keyed.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace shoal {

namespace containers_detail {
struct counting_set_tag {
  static constexpr const char* name = "shoal::counting_set";
  static constexpr const char* create_name = "shoal::counting_set::create";
  static constexpr const char* destroy_name = "shoal::counting_set::destroy";
  static constexpr const char* insert_name = "shoal::counting_set::async_insert";
  static constexpr const char* erase_name = "shoal::counting_set::async_erase";
  static constexpr const char* reduce_name = "shoal::counting_set::async_insert";
  static constexpr const char* visit_name = "shoal::counting_set::async_visit";
};

/// Calls a count visitor F(const K&, count, args...) from the map's f(k, v, args...).
template <class F>
struct count_visitor {
  template <class K, class... A>
  void operator()(const K& k, std::uint64_t& c, A&... a) const {
    F{}(k, static_cast<std::uint64_t>(c), a...);
  }
};

struct add_counts {
  std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const noexcept { return a + b; }
};
}  // namespace containers_detail

template <class K, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
class counting_set {
  using engine =
      containers_detail::keyed<K, std::uint64_t, Hash, Eq, containers_detail::counting_set_tag>;
  using table_type = typename engine::table_type;
  static constexpr bool bare_keys = std::is_trivially_copyable_v<K> && alignof(K) <= 8;
  /// The core's table size from which its own keys go through its own
  /// aggregation buffer (the header: a table of 2^15 8-byte counts and
  /// keys, 512 KiB of slots, is about an L2 cache).
  static constexpr std::size_t self_batch_keys = std::size_t{1} << 15;

 public:
  counting_set() = default;

  /// Makes the set on every process (one task; blocking like make_channel).
  static counting_set create() {
    counting_set c(engine::create());
    if constexpr (bare_keys) c.e_.set_aux_channel(open_bare_channel(c.e_.id()));
    return c;
  }

  int owner(const K& k) const noexcept { return e_.owner(k); }

  void async_insert(const K& k) const {
    if constexpr (bare_keys) {
      containers_detail::part_of<engine>& p = e_.my_part();  // names a stale handle
      const int o = e_.owner(k);
      if (o != shoal::mycore() || p.table.size() >= self_batch_keys) {
        char* at = detail::tls_aggregator->reserve(e_.aux_channel(), o, sizeof(K));
        std::memcpy(at, &k, sizeof(K));
        containers_detail::pace();
        return;
      }
      if (!p.busy) {
        e_.guarded(p, [&] { ++p.table[k]; });
        return;
      }
    }
    e_.async_reduce(k, 1, containers_detail::add_counts{});
  }

  void async_erase(const K& k) const { e_.async_erase(k); }

  template <class F, class... Args>
  void async_visit(const K& k, F, const Args&... args) const {
    static_assert(stateless_function<F>,
                  "shoal::counting_set::async_visit: the visitor must capture nothing (pass "
                  "values as arguments): it runs on the owner's core");
    e_.async_visit_if_exists(k, containers_detail::count_visitor<F>{}, args...);
  }

  template <class F>
  void for_all(F&& f) const {
    e_.for_all([&f](const K& k, std::uint64_t& c) { f(k, static_cast<std::uint64_t>(c)); });
  }

  std::vector<std::pair<K, std::uint64_t>> top_k(std::size_t k) const {
    shoal::barrier();
    std::vector<std::pair<K, std::uint64_t>> mine;
    e_.for_all([&mine](const K& key, std::uint64_t& c) { mine.emplace_back(key, c); });
    keep_best(mine, k);
    std::size_t n = 0;
    for (const auto& kc : mine) n += serializer<K>::size(kc.first) + sizeof(std::uint64_t);
    std::vector<char> bytes(n);
    byte_writer w(bytes.data());
    for (const auto& kc : mine) {
      serializer<K>::write(w, kc.first);
      w.put(kc.second);
    }
    const gathered<char> all = shoal::allgatherv(std::span<const char>(bytes));
    std::vector<std::pair<K, std::uint64_t>> merged;
    byte_reader r(all.values.data(), all.values.data() + all.values.size());
    while (r.left() != 0) {
      K key = serializer<K>::read(r);
      merged.emplace_back(std::move(key), r.get<std::uint64_t>("a count"));
    }
    keep_best(merged, k);
    return merged;
  }

  std::size_t local_size() const { return e_.local_size(); }
  std::size_t size() const { return e_.size(); }
  void clear() const { e_.clear(); }
  std::vector<std::pair<K, std::uint64_t>> gather(int root) const { return e_.gather(root); }
  std::vector<std::pair<K, std::uint64_t>> gather_all() const { return e_.gather_all(); }

  void destroy() {
    SHOAL_CHECK_ON_CORE("shoal::counting_set::destroy");
    (void)e_.my_part();  // names a second destroy()
    if constexpr (bare_keys) {
      shoal::drain_messages();
      detail::close_channel(e_.aux_channel());
      e_.set_aux_channel(0);
    }
    e_.destroy();
  }
  std::uint64_t id() const noexcept { return e_.id(); }

 private:
  explicit counting_set(engine e) : e_(e) {}

  /// Sorts by count descending (ties by key when K has <) and keeps k.
  static void keep_best(std::vector<std::pair<K, std::uint64_t>>& v, std::size_t k) {
    auto better = [](const auto& a, const auto& b) {
      if (a.second != b.second) return a.second > b.second;
      if constexpr (std::totally_ordered<K>) return a.first < b.first;
      return false;
    };
    const std::size_t keep = std::min(k, v.size());
    std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(keep), v.end(), better);
    v.resize(keep);
  }

  /// The bare-key channel's receive loop: the batch's keys are counted in
  /// one pass (or queued as count records while the part is busy).
  struct bare_receiver {
    std::uint64_t id;
  };
  static void count_op(table_type& t, byte_reader& r) { ++t[serializer<K>::read(r)]; }

  struct deliver_bare {
    void operator()(const bare_receiver& st, const char* data, std::uint32_t count) const {
      const std::uint64_t cid = st.id;
      auto& p =
          containers_detail::local_part<containers_detail::storage_of<engine>>(cid, engine::kind);
      auto key = [data](std::uint32_t i) {
        K k;
        std::memcpy(&k, data + std::size_t{i} * sizeof(K), sizeof(K));
        return k;
      };
      if (p.busy) [[unlikely]] {
        for (std::uint32_t i = 0; i < count; ++i)
          containers_detail::defer_op<engine>(p, &count_op, key(i));
        return;
      }
      containers_detail::busy_scope<engine> busy(cid, p);
      try {
        count_batch(p.table, key, count);
      } catch (const std::bad_alloc&) {
        containers_detail::fatal_out_of_memory<engine>(cid, p.table.size());
      }
    }
  };

  /// Counts `count` keys (key(i)) into t in one pass (flat_table: its
  /// batch loop, update_each).
  template <class Key>
  static void count_batch(table_type& t, const Key& key, std::uint32_t count) {
    if constexpr (requires { t.update_each(key, count, [](std::uint64_t&) {}); }) {
      t.update_each(key, count, [](std::uint64_t& c) { ++c; });
    } else {
      for (std::uint32_t i = 0; i < count; ++i) ++t[key(i)];
    }
  }

  static std::uint32_t open_bare_channel(std::uint64_t id) {
    return containers_detail::open_container_channel<engine, bare_receiver, deliver_bare>(
        bare_receiver{id}, sizeof(K));
  }

  engine e_;
};
static_assert(sizeof(counting_set<std::uint64_t>) == 16);

}  // namespace shoal
