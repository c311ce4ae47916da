// The engine behind map, set and counting_set: a hash-partitioned table of
// K -> V over every core of the job, operated on by messages to the key's
// owner (owner computes). The public contract is in containers/map.hpp.
#pragma once

#include "shoal/collective.hpp"
#include "shoal/containers/detail/flat_table.hpp"
#include "shoal/containers/detail/ops.hpp"
#include "shoal/parallel.hpp"
#include "shoal/runtime.hpp"
#include "shoal/serialize.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace shoal {

/// A key type a hash-partitioned container accepts with hash `Hash`.
template <class K, class Hash>
concept hashable_with = std::is_default_constructible_v<Hash> && requires(const K& k) {
  { Hash{}(k) } -> std::convertible_to<std::size_t>;
};

/// A visitor or reduction: a type with no state (a lambda that captures
/// nothing, or an empty function object). It is rebuilt on the owner's core,
/// where a capture (above all a reference or pointer to the sender's
/// memory) would mean nothing; pass what it needs as arguments instead.
template <class F>
concept stateless_function =
    std::is_empty_v<F> && std::is_default_constructible_v<F> && std::is_trivially_copyable_v<F>;

/// An argument a visitor receives on the owner: serializable, not a pointer
/// (the sender's pointer means nothing on the owner's process).
template <class A>
concept visit_argument = serializable<std::decay_t<A>> && !std::is_pointer_v<std::decay_t<A>>;

}  // namespace shoal

namespace shoal::containers_detail {

/// std::hash<std::string>'s value for a std::string or any view of one
/// (the standard makes the two hashes equal), so that a table keyed by
/// std::string can be searched with a std::string_view.
struct transparent_string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

/// The end of every container's destroy(): waits for the operations in
/// flight, closes the container's channel and drops every core's part (the
/// registry keeps a tombstone, so a stale handle is named).
inline void retire_container(std::uint64_t id, std::uint32_t channel) {
  shoal::drain_messages();
  shoal::detail::close_channel(channel);
  shoal::on_all_cores([id] { registry::instance().forget(id); });
}

template <class K, class V, class Hash, class Eq, class Tag>
class keyed {
  static_assert(hashable_with<K, Hash>,
                "shoal container: the key type K has no hash (specialise std::hash<K>, or pass a "
                "Hash type as a template argument)");
  static_assert(serializable<K>,
                "shoal container: the key type K is not serializable (specialise "
                "shoal::serializer<K>, see shoal/serialize.hpp)");
  static_assert(serializable<V>,
                "shoal container: the value type V is not serializable (specialise "
                "shoal::serializer<V>, see shoal/serialize.hpp)");
  static_assert(std::is_default_constructible_v<V>,
                "shoal container: the value type V must be default-constructible");

 public:
  using key_type = K;
  using value_type = V;
  /// std::string keys with the default hash and equality: the owner looks
  /// a received key up as a view of the record's bytes (transparent_string_hash),
  /// building a std::string only for a key it inserts. Reading each key
  /// into a std::string first cost a malloc and a free per operation (a
  /// 16-character key is past the small-string buffer): with them, about
  /// 40% of map<std::string, V>'s instructions.
  static constexpr bool string_keys = std::is_same_v<K, std::string> &&
                                      std::is_same_v<Hash, std::hash<std::string>> &&
                                      std::is_same_v<Eq, std::equal_to<std::string>>;
  /// Open addressing for bytes-copyable keys and values (flat_table.hpp),
  /// std::unordered_map for the rest.
  using table_type = std::conditional_t<
      std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<V> &&
          std::is_default_constructible_v<K>,
      flat_table<K, V, Hash, Eq>,
      std::conditional_t<
          string_keys, std::unordered_map<std::string, V, transparent_string_hash, std::equal_to<>>,
          std::unordered_map<K, V, Hash, Eq>>>;
  static constexpr const char* kind = Tag::name;
  static std::size_t elements(const table_type& t) noexcept { return t.size(); }

  keyed() = default;

  /// Makes the container on every process of the job (empty). Call from a
  /// task; blocks until every process has its operation channel.
  static keyed create() {
    SHOAL_CHECK_ON_CORE(Tag::create_name);
    keyed c;
    c.id_ = registry::new_id();
    c.channel_ = open_op_channel<keyed, op_receiver<keyed>, find_keyed_part<keyed>>(
        op_receiver<keyed>{c.id_});
    return c;
  }

  /// The core that owns `k`: the mixed hash scaled to [0, cores()) by a
  /// multiply-high (its top bits), not a division, which cost more than
  /// the rest of a remote operation's sending side together.
  int owner(const K& k) const noexcept {
    return static_cast<int>(scale_hash(mix_hash(static_cast<std::uint64_t>(Hash{}(k))),
                                       static_cast<std::uint64_t>(shoal::cores())));
  }

  void async_insert(const K& k, const V& v) const {
    route(
        Tag::insert_name, &op_insert, k, [&](table_type& t) { t.insert_or_assign(k, v); }, k, v);
  }

  void async_insert_if_missing(const K& k, const V& v) const {
    route(
        Tag::insert_name, &op_insert_if_missing, k, [&](table_type& t) { t.try_emplace(k, v); }, k,
        v);
  }

  void async_erase(const K& k) const {
    route(
        Tag::erase_name, &op_erase, k, [&](table_type& t) { t.erase(k); }, k);
  }

  template <class Op>
  void async_reduce(const K& k, const V& v, Op) const {
    static_assert(stateless_function<Op>,
                  "async_reduce: the operation must capture nothing (a captureless lambda or an "
                  "empty function object): it runs on the owner's core");
    static_assert(std::is_invocable_r_v<V, const Op&, const V&, const V&>,
                  "async_reduce: the operation must be callable as V(const V&, const V&)");
    route(
        Tag::reduce_name, &op_reduce<Op>, k, [&](table_type& t) { reduce_into(t, k, v, Op{}); }, k,
        v);
  }

  template <class F, class... Args>
  void async_visit(const K& k, F, const Args&... args) const {
    check_visitor<F, Args...>();
    route(
        Tag::visit_name, &op_visit<true, F, std::decay_t<Args>...>, k,
        [&](table_type& t) {
          visit_now<true, F>(t, K(k), std::tuple<std::decay_t<Args>...>{args...});
        },
        k, args...);
  }

  template <class F, class... Args>
  void async_visit_if_exists(const K& k, F, const Args&... args) const {
    check_visitor<F, Args...>();
    route(
        Tag::visit_name, &op_visit<false, F, std::decay_t<Args>...>, k,
        [&](table_type& t) {
          visit_now<false, F>(t, K(k), std::tuple<std::decay_t<Args>...>{args...});
        },
        k, args...);
  }

  /// f(const K&, bool present, args...) on k's owner: whether k is there,
  /// without inserting it (a lookup whose answer travels on as f's
  /// further messages).
  template <class F, class... Args>
  void async_contains(const K& k, F, const Args&... args) const {
    static_assert(stateless_function<F>,
                  "async_contains: the function must capture nothing (a captureless lambda or an "
                  "empty function object): it runs on the owner's core; pass values as arguments");
    static_assert((visit_argument<Args> && ...),
                  "async_contains: every argument must be serializable and not a pointer");
    static_assert(std::is_invocable_v<const F&, const K&, bool, std::decay_t<Args>&...>,
                  "async_contains: the function must be callable as f(const K&, bool, args...)");
    route(
        Tag::visit_name, &op_contains<F, std::decay_t<Args>...>, k,
        [&](table_type& t) { contains_now<F>(t, k, std::tuple<std::decay_t<Args>...>{args...}); },
        k, args...);
  }

  /// Sends operation `fn` with `operands` to k's owner; when that is the
  /// calling core, applies `direct` to its part at once, or queues the
  /// operation behind what is queued there when the part is busy.
  template <class Direct, class... Ts>
  void route(const char* what, op_fn<table_type> fn, const K& k, Direct&& direct,
             const Ts&... operands) const {
    // The lookup names a stale, destroyed or default handle and a call off
    // a shoal core before anything is sent (a cache hit: two compares).
    part_of<keyed>& p = my_part();
    const int o = owner(k);
    if (o == shoal::mycore()) {
      if (p.busy) {
        guarded(p, [&] { defer_op<keyed>(p, fn, operands...); });
      } else {
        busy_scope<keyed> busy(id_, p);
        guarded(p, [&] { direct(p.table); });
      }
      return;
    }
    send_op(what, channel_, o, fn, operands...);
    pace();
  }

  template <class F>
  void for_all(F&& f) const {
    part_of<keyed>& p = my_part();
    busy_scope<keyed> busy(id_, p);
    for (auto& [k, v] : p.table) f(k, v);
  }

  std::size_t local_size() const { return my_part().table.size(); }

  std::size_t size() const {
    shoal::barrier();
    return static_cast<std::size_t>(
        shoal::allreduce_sum(static_cast<std::uint64_t>(my_part().table.size())));
  }

  void clear() const {
    shoal::barrier();
    part_of<keyed>& p = my_part();
    SHOAL_CHECK(!p.busy, "{} #{:x}: clear() called from inside a for_all or visitor", kind, id_);
    p.table = table_type{};
    shoal::arrival_barrier();
  }

  std::vector<std::pair<K, V>> gather(int root) const {
    check_core(kind, id_, "gather", root);
    shoal::barrier();
    const std::vector<char> mine = serialize_local();
    // Every core has taken its snapshot before any leaves (a core that
    // leaves gatherv early could otherwise change a part not yet copied).
    shoal::arrival_barrier();
    const gathered<char> all = shoal::gatherv(std::span<const char>(mine), root);
    return parse_sorted(all.values);
  }

  std::vector<std::pair<K, V>> gather_all() const {
    shoal::barrier();
    const std::vector<char> mine = serialize_local();
    const gathered<char> all = shoal::allgatherv(std::span<const char>(mine));
    return parse_sorted(all.values);
  }

  void destroy() {
    SHOAL_CHECK_ON_CORE(Tag::destroy_name);
    if (id_ == 0) fatal_container(kind, id_, "destroy() on a default-constructed handle");
    (void)my_part();  // a second destroy() is named here
    retire_container(id_, channel_);
    id_ = 0;
    channel_ = 0;
  }

  std::uint64_t id() const noexcept { return id_; }
  explicit operator bool() const noexcept { return id_ != 0; }

  /// The calling core's part (for the containers built on this engine).
  part_of<keyed>& my_part() const { return local_part<storage_of<keyed>>(id_, kind); }

  template <class Fn>
  void guarded(part_of<keyed>& p, Fn&& fn) const {
    try {
      fn();
    } catch (const std::bad_alloc&) {
      fatal_out_of_memory<keyed>(id_, p.table.size());
    }
  }

  std::uint32_t channel() const noexcept { return channel_; }
  /// A second channel id for a container built on this engine (kept here,
  /// in what would be padding, so that handles stay 16 bytes).
  std::uint32_t aux_channel() const noexcept { return aux_channel_; }
  void set_aux_channel(std::uint32_t id) noexcept { aux_channel_ = id; }

 private:
  template <class F, class... Args>
  static constexpr void check_visitor() {
    static_assert(stateless_function<F>,
                  "async_visit: the visitor must capture nothing (a captureless lambda or an "
                  "empty function object): it runs on the owner's core, where a captured "
                  "reference or pointer would mean nothing; pass values as arguments");
    static_assert((visit_argument<Args> && ...),
                  "async_visit: every argument must be serializable and not a pointer");
    static_assert(std::is_invocable_v<const F&, const K&, V&, std::decay_t<Args>&...>,
                  "async_visit: the visitor must be callable as f(const K&, V&, args...)");
  }

  template <class Op>
  static void reduce_into(table_type& t, const K& k, const V& v, const Op& op) {
    auto [it, fresh] = t.try_emplace(k, v);
    if (!fresh) it->second = op(static_cast<const V&>(it->second), v);
  }

  static void op_insert(table_type& t, byte_reader& r) {
    K k = serializer<K>::read(r);
    V v = serializer<V>::read(r);
    t.insert_or_assign(std::move(k), std::move(v));
  }
  static void op_insert_if_missing(table_type& t, byte_reader& r) {
    K k = serializer<K>::read(r);
    V v = serializer<V>::read(r);
    t.try_emplace(std::move(k), std::move(v));
  }
  static void op_erase(table_type& t, byte_reader& r) { t.erase(serializer<K>::read(r)); }
  template <class Op>
  static void op_reduce(table_type& t, byte_reader& r) {
    if constexpr (string_keys) {
      const std::string_view k = read_string_view(r);
      V v = serializer<V>::read(r);
      const auto it = t.find(k);
      if (it != t.end()) {
        it->second = Op{}(static_cast<const V&>(it->second), v);
      } else {
        t.emplace(std::string(k), std::move(v));
      }
    } else {
      K k = serializer<K>::read(r);
      V v = serializer<V>::read(r);
      reduce_into(t, k, v, Op{});
    }
  }
  template <bool Create, class F, class... Args>
  static void op_visit(table_type& t, byte_reader& r) {
    if constexpr (string_keys) {
      const std::string_view k = read_string_view(r);
      std::tuple<Args...> args{serializer<Args>::read(r)...};  // braced: read in order
      auto it = t.find(k);
      if (it == t.end()) {
        if constexpr (!Create) return;
        it = t.try_emplace(std::string(k)).first;
      }
      std::apply([&](Args&... a) { F{}(static_cast<const K&>(it->first), it->second, a...); },
                 args);
    } else {
      K k = serializer<K>::read(r);
      // Braced: the arguments are read in order.
      visit_now<Create, F>(t, std::move(k), std::tuple<Args...>{serializer<Args>::read(r)...});
    }
  }
  /// A std::string key of a record, in place (serialize.hpp's layout: a
  /// 32-bit length, then the characters).
  static std::string_view read_string_view(byte_reader& r) {
    const auto n = r.get<std::uint32_t>("std::string's length");
    return {r.skip(n, "std::string's characters"), n};
  }
  template <bool Create, class F, class... Args>
  static void visit_now(table_type& t, K k, std::tuple<Args...> args) {
    typename table_type::iterator it;
    if constexpr (Create) {
      it = t.try_emplace(std::move(k)).first;
    } else {
      it = t.find(k);
      if (it == t.end()) return;
    }
    std::apply([&](Args&... a) { F{}(static_cast<const K&>(it->first), it->second, a...); }, args);
  }

  template <class F, class... Args>
  static void op_contains(table_type& t, byte_reader& r) {
    K k = serializer<K>::read(r);
    contains_now<F>(t, k, std::tuple<Args...>{serializer<Args>::read(r)...});
  }
  template <class F, class... Args>
  static void contains_now(table_type& t, const K& k, std::tuple<Args...> args) {
    const bool present = t.find(k) != t.end();
    std::apply([&](Args&... a) { F{}(k, present, a...); }, args);
  }

  std::vector<char> serialize_local() const {
    part_of<keyed>& p = my_part();
    std::size_t n = 0;
    for (const auto& [k, v] : p.table) n += serializer<K>::size(k) + serializer<V>::size(v);
    std::vector<char> bytes(n);
    byte_writer w(bytes.data());
    for (const auto& [k, v] : p.table) {
      serializer<K>::write(w, k);
      serializer<V>::write(w, v);
    }
    return bytes;
  }

  static std::vector<std::pair<K, V>> parse_sorted(const std::vector<char>& bytes) {
    std::vector<std::pair<K, V>> out;
    byte_reader r(bytes.data(), bytes.data() + bytes.size());
    while (r.left() != 0) {
      K k = serializer<K>::read(r);
      V v = serializer<V>::read(r);
      out.emplace_back(std::move(k), std::move(v));
    }
    if constexpr (std::totally_ordered<K>)
      std::sort(out.begin(), out.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }

  std::uint64_t id_ = 0;
  std::uint32_t channel_ = 0;
  std::uint32_t aux_channel_ = 0;
};

}  // namespace shoal::containers_detail
