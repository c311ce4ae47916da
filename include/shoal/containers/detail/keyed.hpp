// The engine behind map, set and counting_set: a hash-partitioned table of
// K -> V over every core of the job, operated on by messages to the key's
// owner (owner computes). The public contract is in containers/map.hpp.
#pragma once

#include "shoal/collective.hpp"
#include "shoal/containers/detail/flat_table.hpp"
#include "shoal/containers/detail/ops.hpp"
#include "shoal/containers/detail/string_hash.hpp"
#include "shoal/containers/detail/string_table.hpp"
#include "shoal/parallel.hpp"
#include "shoal/runtime.hpp"
#include "shoal/serialize.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <deque>
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

/// A std::string holding a received key for as long as a visitor that
/// takes it as const std::string& runs (string_table.hpp keeps no
/// std::string). One per nesting depth on the core's thread, kept between
/// uses so that no key allocates once the strings have grown: a visitor
/// may apply an operation of another container directly on its core,
/// whose visitor needs its own (a deque: growing it moves no string).
class key_scratch {
 public:
  explicit key_scratch(std::string_view k) {
    if (depth_ == pool_.size()) pool_.emplace_back();
    s_ = &pool_[depth_++];
    s_->assign(k);
  }
  ~key_scratch() { --depth_; }
  key_scratch(const key_scratch&) = delete;
  key_scratch& operator=(const key_scratch&) = delete;
  const std::string& get() const noexcept { return *s_; }

 private:
  static inline thread_local std::deque<std::string> pool_;
  static inline thread_local std::size_t depth_ = 0;
  std::string* s_;
};

/// Whether T travels as sizeof(T) bytes: its serializer's size() is that
/// constant (the built-in serializer of trivially copyable types). A
/// packed record (ops.hpp) of such keys and values is read by memcpy when
/// its first operation reads back as its bytes (keyed::apply_run checks),
/// else through the serializers per operation (a call per read, not
/// inlined: ~300 against 172 instructions per operation, map_u64_reduce
/// at 2 x 1, callgrind).
template <class T>
constexpr bool travels_as_bytes() {
  if constexpr (requires {
                  typename std::integral_constant<std::size_t, serializer<T>::size(T{})>;
                }) {
    return serializer<T>::size(T{}) == sizeof(T);
  } else {
    return false;
  }
}

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
  /// std::string keys with the default hash and equality travel as
  /// hashed_key (hash computed once, on the sender) into a string_table
  /// (keys inline, no std::string per element or per record): the owner
  /// neither hashes nor allocates for a key it has. With
  /// std::unordered_map and a rehash on the owner, map<std::string,
  /// uint64_t>'s async_reduce of 16-byte keys cost ~1150 instructions per
  /// operation at 1 x 2, about half of them in malloc and free.
  static constexpr bool string_keys = std::is_same_v<K, std::string> &&
                                      std::is_same_v<Hash, std::hash<std::string>> &&
                                      std::is_same_v<Eq, std::equal_to<std::string>>;
  /// Open addressing for bytes-copyable keys and values (flat_table.hpp)
  /// and for std::string keys (string_table.hpp), std::unordered_map for
  /// the rest.
  using table_type = std::conditional_t<
      std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<V> &&
          std::is_default_constructible_v<K>,
      flat_table<K, V, Hash, Eq>,
      std::conditional_t<string_keys, string_table<V>, std::unordered_map<K, V, Hash, Eq>>>;
  /// A key as the operations carry it: hashed_key for std::string keys,
  /// else the key itself (key_ref: as the sender holds it, no copy).
  using key_arg = std::conditional_t<string_keys, hashed_key, K>;
  using key_ref = std::conditional_t<string_keys, hashed_key, const K&>;
  static constexpr bool flat = std::is_same_v<table_type, flat_table<K, V, Hash, Eq>>;
  /// Flat tables of keys and values that travel as their bytes pack
  /// their insert, insert_if_missing and reduce operations (ops.hpp's
  /// packed records: [K][V] per operation, or [K] while a run's values are
  /// all the same; 16 or 8 bytes for 8-byte keys and values against 24 in
  /// records of their own), and apply a packed record in one pass of
  /// flat_table::upsert_each (the table grown once, each key's home slot
  /// prefetched 16 operations ahead), as counting_set's bare keys.
  /// packed_bytes: a [K][V] pair's bytes; 0: no packing.
  static constexpr std::size_t packed_bytes =
      flat && travels_as_bytes<K>() && travels_as_bytes<V>() ? sizeof(K) + sizeof(V) : 0;
  /// From this many elements in a core's part (flat and string tables), the
  /// core's operations on its own keys go through its own aggregation
  /// buffer, as remote ones do, rather than being applied at once, so that
  /// the owner's batch loop prefetches them too (a part larger than the
  /// cache waited on memory once per direct operation). Every kind of
  /// operation, from then until clear(): a core's operations on one key
  /// stay in one stream, in call order. (2^15 8-byte keys and values: 512
  /// KiB of slots, about an L2 cache; counting_set.hpp's threshold.)
  static constexpr std::size_t self_batch_elements = std::size_t{1} << 15;
  static constexpr bool self_batches = flat || string_keys;
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
  /// (std::string keys with the default hash: string_hash.hpp's hash, not
  /// std::hash's.)
  int owner(const K& k) const noexcept { return owner_of_hash(hash_of(k)); }

  void async_insert(const K& k, const V& v) const {
    const key_ref a = key_of(k);
    route_pair(
        Tag::insert_name, &op_insert<false>, &op_insert<true>, owner_of(a),
        [&](table_type& t) { t.insert_or_assign(a, v); }, a, v);
  }

  void async_insert_if_missing(const K& k, const V& v) const {
    const key_ref a = key_of(k);
    route_pair(
        Tag::insert_name, &op_insert_if_missing<false>, &op_insert_if_missing<true>, owner_of(a),
        [&](table_type& t) { t.try_emplace(a, v); }, a, v);
  }

  void async_erase(const K& k) const {
    const key_ref a = key_of(k);
    route(
        Tag::erase_name, &op_erase, owner_of(a), [&](table_type& t) { t.erase(a); }, a);
  }

  template <class Op>
  void async_reduce(const K& k, const V& v, Op) const {
    static_assert(stateless_function<Op>,
                  "async_reduce: the operation must capture nothing (a captureless lambda or an "
                  "empty function object): it runs on the owner's core");
    static_assert(std::is_invocable_r_v<V, const Op&, const V&, const V&>,
                  "async_reduce: the operation must be callable as V(const V&, const V&)");
    const key_ref a = key_of(k);
    route_pair(
        Tag::reduce_name, &op_reduce<Op, false>, &op_reduce<Op, true>, owner_of(a),
        [&](table_type& t) { reduce_into(t, a, v, Op{}); }, a, v);
  }

  template <class F, class... Args>
  void async_visit(const K& k, F, const Args&... args) const {
    check_visitor<F, Args...>();
    const key_ref a = key_of(k);
    route(
        Tag::visit_name, &op_visit<true, F, std::decay_t<Args>...>, owner_of(a),
        [&](table_type& t) {
          visit_now<true, F>(t, a, &k, std::tuple<std::decay_t<Args>...>{args...});
        },
        a, args...);
  }

  template <class F, class... Args>
  void async_visit_if_exists(const K& k, F, const Args&... args) const {
    check_visitor<F, Args...>();
    const key_ref a = key_of(k);
    route(
        Tag::visit_name, &op_visit<false, F, std::decay_t<Args>...>, owner_of(a),
        [&](table_type& t) {
          visit_now<false, F>(t, a, &k, std::tuple<std::decay_t<Args>...>{args...});
        },
        a, args...);
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
    const key_ref a = key_of(k);
    route(
        Tag::visit_name, &op_contains<F, std::decay_t<Args>...>, owner_of(a),
        [&](table_type& t) {
          contains_now<F>(t, a, &k, std::tuple<std::decay_t<Args>...>{args...});
        },
        a, args...);
  }

  /// Sends operation `fn` with `operands` to core `o` (the key's owner);
  /// when that is the calling core, applies `direct` to its part at once,
  /// or queues the operation behind what is queued there when the part is
  /// busy.
  template <class Direct, class... Ts>
  void route(const char* what, op_fn<table_type> fn, int o, Direct&& direct,
             const Ts&... operands) const {
    part_of<keyed>& p = my_part();
    if (applied_here(p, o, fn, direct, operands...)) return;
    send_op(what, channel_, o, fn, operands...);
    if constexpr (packed_bytes != 0) end_packed<keyed>(p, o);
    pace();
  }
  /// route() for an operation of a key and a value that packs
  /// (packed_bytes: insert, insert_if_missing, reduce).
  /// `fn_same`: the operation of a packed record of one value.
  template <class Direct>
  void route_pair(const char* what, op_fn<table_type> fn,
                  [[maybe_unused]] op_fn<table_type> fn_same, int o, Direct&& direct, key_ref k,
                  const V& v) const {
    part_of<keyed>& p = my_part();
    if constexpr (packed_bytes != 0) {
      // (Queued on a busy part of its own as a packed record of one.)
      if (applied_here(p, o, fn, direct, static_cast<std::uint32_t>(packed_bytes), k, v)) return;
      send_packed<keyed>(p, what, channel_, o, to_op_id(fn), to_op_id(fn_same), k, v);
    } else {
      if (applied_here(p, o, fn, direct, k, v)) return;
      send_op(what, channel_, o, fn, k, v);
    }
    pace();
  }
  /// When `o` is the calling core and its part is not self-batched:
  /// applies `direct` to the part at once, or queues the operation (fn
  /// with `operands`) behind what is queued there when the part is busy;
  /// true then.
  template <class Direct, class... Ts>
  bool applied_here(part_of<keyed>& p, int o, op_fn<table_type> fn, Direct& direct,
                    const Ts&... operands) const {
    // The caller's my_part() named a stale, destroyed or default handle
    // and a call off a shoal core before anything is sent (a cache hit:
    // two compares).
    if (o != shoal::mycore() || self_batched(p)) return false;
    if (p.busy) {
      guarded(p, [&] { defer_op<keyed>(p, fn, operands...); });
    } else {
      busy_scope<keyed> busy(id_, p);
      guarded(p, [&] { direct(p.table); });
    }
    return true;
  }

  /// f(const K&, V&) over this core's elements. For std::string keys the
  /// key is a std::string of this call's, reassigned per element (good
  /// for one call of f).
  template <class F>
  void for_all(F&& f) const {
    part_of<keyed>& p = my_part();
    busy_scope<keyed> busy(id_, p);
    if constexpr (string_keys) {
      std::string key;
      p.table.for_each([&](std::string_view k, V& v) {
        key.assign(k);
        f(static_cast<const K&>(key), v);
      });
    } else {
      for (auto& [k, v] : p.table) f(k, v);
    }
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
    p.self_batched = false;  // nothing of this core's is in flight (the barrier)
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

  /// std::string keys' home slots, from the hash each record carries
  /// after its operation id ([u32 length][i32 op][u64 hash]...: every
  /// operation writes its key first): receive_batch steps this cursor
  /// before applying each record, so the record 8 ahead has its slot
  /// fetched while this one is applied (a table larger than the cache
  /// otherwise waited on memory once per record). Reads nothing past the
  /// batch's buffer (records are checked again when applied).
  static constexpr bool batch_prefetch = string_keys;
  class record_prefetcher {
   public:
    record_prefetcher(const table_type& t, const char* data, std::uint32_t count) noexcept
        : t_(t), at_(data), limit_(data + detail::tls_aggregator->capacity()), left_(count) {
      for (int i = 0; i < 8; ++i) step();
    }
    void step() noexcept {
      if (left_ == 0 || limit_ - at_ < 16) return;
      std::uint32_t n;
      std::uint64_t h;
      std::memcpy(&n, at_, 4);
      std::memcpy(&h, at_ + 8, 8);
      t_.prefetch(h);
      --left_;
      if (static_cast<std::size_t>(limit_ - at_) - 4 < n) {
        left_ = 0;
        return;
      }
      at_ += 4 + static_cast<std::size_t>(n);
    }

   private:
    const table_type& t_;
    const char* at_;
    const char* limit_;
    std::uint32_t left_;
  };

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

  /// Whether the core's operations on its own keys go by its aggregation
  /// buffer (self_batch_elements; sticky until clear()).
  static bool self_batched(part_of<keyed>& p) noexcept {
    if constexpr (self_batches) {
      if (p.self_batched) return true;
      if (p.table.size() < self_batch_elements) [[likely]]
        return false;
      p.self_batched = true;
      return true;
    } else {
      return false;
    }
  }

  /// The operations of a packed record (ops.hpp; packed_bytes): r holds
  /// [u32 used][K][V] x cap, or (Same, a record of one value) [V][u32
  /// used][K] x cap; `used`: the bytes of the operations written. f(slot,
  /// fresh, v) for each of those keys and values, in order, by
  /// flat_table::upsert_each; reads the whole record.
  template <bool Same, class F>
  static void apply_run(table_type& t, byte_reader& r, const F& f) {
    constexpr std::size_t stride = Same ? sizeof(K) : packed_bytes;
    [[maybe_unused]] V value{};
    if constexpr (Same) value = serializer<V>::read(r);
    const auto bytes = r.get<std::uint32_t>("a packed record's count");
    const std::size_t left = r.left();
    if (bytes % stride != 0 || bytes > left) [[unlikely]]
      fatal_packed(left, bytes);
    const char* const base = r.skip(left, "a packed record");
    const auto used = static_cast<std::uint32_t>(bytes / stride);
    if (used == 0) return;
    byte_reader first(base, base + stride);
    const K k0 = serializer<K>::read(first);
    bool raw = std::memcmp(&k0, base, sizeof(K)) == 0;
    if constexpr (!Same) {
      const V v0 = serializer<V>::read(first);
      raw = raw && std::memcmp(&v0, base + sizeof(K), sizeof(V)) == 0;
    }
    // In chunks: upsert_each makes room for every key of its batch first,
    // and a long queue of one kind (operations deferred behind a for_all)
    // on few distinct keys must not grow the table by its length.
    for (std::uint32_t from = 0; from < used; from += run_chunk) {
      const char* const at = base + std::size_t{from} * stride;
      const std::uint32_t m = std::min(run_chunk, used - from);
      if (raw) [[likely]] {
        apply_raw_chunk<Same>(t, at, m, f, value);
      } else {
        apply_chunk<Same>(t, at, m, f, value);
      }
    }
  }
  /// Operations per upsert_each call of a packed record (an aggregation
  /// buffer's of 8-byte keys and values: ~1000).
  static constexpr std::uint32_t run_chunk = 1024;
  /// `m` operations from `at`, their keys (and values, unless Same: then
  /// `value`) as their bytes.
  template <bool Same, class F>
  static void apply_raw_chunk(table_type& t, const char* at, std::uint32_t m, const F& f,
                              const V& value) {
    constexpr std::size_t stride = Same ? sizeof(K) : packed_bytes;
    t.upsert_each(
        [at](std::uint32_t i) {
          K k;
          std::memcpy(&k, at + std::size_t{i} * stride, sizeof(K));
          return k;
        },
        m,
        [at, &f, &value](std::uint32_t i, V& slot, bool fresh) {
          if constexpr (Same) {
            f(slot, fresh, value);
          } else {
            V v;
            std::memcpy(&v, at + std::size_t{i} * stride + sizeof(K), sizeof(V));
            f(slot, fresh, v);
          }
        });
  }
  /// `m` operations from `at`, each read by the serializers.
  template <bool Same, class F>
  static void apply_chunk(table_type& t, const char* at, std::uint32_t m, const F& f,
                          const V& value) {
    constexpr std::size_t stride = Same ? sizeof(K) : packed_bytes;
    auto operands = [at](std::uint32_t i) {
      const char* p = at + std::size_t{i} * stride;
      return byte_reader(p, p + stride);
    };
    t.upsert_each(
        [&operands](std::uint32_t i) {
          byte_reader q = operands(i);
          return serializer<K>::read(q);
        },
        m,
        [&operands, &f, &value](std::uint32_t i, V& slot, bool fresh) {
          byte_reader q = operands(i);
          (void)serializer<K>::read(q);
          if constexpr (Same) {
            if (q.left() != 0) [[unlikely]]
              fatal_unread(q.left());
            f(slot, fresh, value);
          } else {
            const V v = serializer<V>::read(q);
            if (q.left() != 0) [[unlikely]]
              fatal_unread(q.left());
            f(slot, fresh, v);
          }
        });
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void fatal_packed(std::size_t left,
                                                                  std::uint32_t used) {
    detail::fatal_user(fmt::format(
        "{}: a packed record of {} bytes of operations says {} of them are used (operations "
        "of {} bytes)",
        kind, left, used, packed_bytes));
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void fatal_unread(std::size_t left) {
    detail::fatal_user(fmt::format("{}: {}", kind, unread_record_message(left)));
  }

  /// (string_hash's value is mixed already: its top bits are used as they are.)
  int owner_of_hash(std::uint64_t h) const noexcept {
    if constexpr (!string_keys) h = mix_hash(h);
    return static_cast<int>(scale_hash(h, static_cast<std::uint64_t>(shoal::cores())));
  }
  static std::uint64_t hash_of(const K& k) noexcept {
    if constexpr (string_keys) {
      return string_hash(k);
    } else {
      return static_cast<std::uint64_t>(Hash{}(k));
    }
  }
  /// The key as operations carry it: for std::string keys hashed here, once.
  static key_ref key_of(const K& k) {
    if constexpr (string_keys) {
      return hashed_key{string_hash(k), k};
    } else {
      return k;
    }
  }
  int owner_of(const key_arg& a) const noexcept {
    if constexpr (string_keys) {
      return owner_of_hash(a.h);
    } else {
      return owner(a);
    }
  }
  static key_arg read_key(byte_reader& r) { return serializer<key_arg>::read(r); }

  template <class Op>
  static void reduce_into(table_type& t, const key_arg& k, const V& v, const Op& op) {
    auto [it, fresh] = t.try_emplace(k, v);
    if (!fresh) it->second = op(static_cast<const V&>(it->second), v);
  }

  /// Same: a packed record of one value (ops.hpp); else of pairs, or
  /// one record per operation where the map does not pack.
  template <bool Same>
  static void op_insert(table_type& t, byte_reader& r) {
    if constexpr (packed_bytes != 0) {
      apply_run<Same>(t, r, [](V& slot, bool, const V& v) { slot = v; });
    } else {
      key_arg k = read_key(r);
      V v = serializer<V>::read(r);
      t.insert_or_assign(std::move(k), std::move(v));
    }
  }
  template <bool Same>
  static void op_insert_if_missing(table_type& t, byte_reader& r) {
    if constexpr (packed_bytes != 0) {
      apply_run<Same>(t, r, [](V& slot, bool fresh, const V& v) {
        if (fresh) slot = v;
      });
    } else {
      key_arg k = read_key(r);
      V v = serializer<V>::read(r);
      t.try_emplace(std::move(k), std::move(v));
    }
  }
  static void op_erase(table_type& t, byte_reader& r) { t.erase(read_key(r)); }
  template <class Op, bool Same>
  static void op_reduce(table_type& t, byte_reader& r) {
    if constexpr (packed_bytes != 0) {
      apply_run<Same>(t, r, [](V& slot, bool fresh, const V& v) {
        slot = fresh ? v : static_cast<V>(Op{}(static_cast<const V&>(slot), v));
      });
    } else {
      const key_arg k = read_key(r);
      const V v = serializer<V>::read(r);
      reduce_into(t, k, v, Op{});
    }
  }
  template <bool Create, class F, class... Args>
  static void op_visit(table_type& t, byte_reader& r) {
    key_arg k = read_key(r);
    // Braced: the arguments are read in order.
    visit_now<Create, F>(t, std::move(k), nullptr,
                         std::tuple<Args...>{serializer<Args>::read(r)...});
  }
  /// f(key, value, args...) on k's element (made first when Create).
  /// `original`: the caller's K when it has one (a key of its own core),
  /// else nullptr (a received std::string key is built for f, key_scratch).
  template <bool Create, class F, class... Args>
  static void visit_now(table_type& t, key_arg k, const K* original, std::tuple<Args...> args) {
    V* value;
    const K* key;
    if constexpr (Create) {
      auto it = t.try_emplace(std::move(k)).first;
      value = &it->second;
      key = key_in(it, original);
    } else {
      auto it = t.find(k);
      if (it == end_of(t)) return;
      value = &it->second;
      key = key_in(it, original);
    }
    if constexpr (string_keys) {
      if (key == nullptr) {
        const key_scratch scratch(k.s);
        std::apply([&](Args&... a) { F{}(scratch.get(), *value, a...); }, args);
        return;
      }
    }
    std::apply([&](Args&... a) { F{}(*key, *value, a...); }, args);
  }
  /// The key a visitor sees: the table's own (std::string keys: the
  /// caller's, or none, the table holding characters only).
  template <class It>
  static const K* key_in([[maybe_unused]] const It& it,
                         [[maybe_unused]] const K* original) noexcept {
    if constexpr (string_keys) {
      return original;
    } else {
      return &it->first;
    }
  }
  static auto end_of(table_type& t) {
    if constexpr (string_keys) {
      return static_cast<typename table_type::slot*>(nullptr);
    } else {
      return t.end();
    }
  }

  template <class F, class... Args>
  static void op_contains(table_type& t, byte_reader& r) {
    const key_arg k = read_key(r);
    contains_now<F>(t, k, nullptr, std::tuple<Args...>{serializer<Args>::read(r)...});
  }
  template <class F, class... Args>
  static void contains_now(table_type& t, const key_arg& k, [[maybe_unused]] const K* original,
                           std::tuple<Args...> args) {
    const bool present = t.find(k) != end_of(t);
    if constexpr (string_keys) {
      if (original == nullptr) {
        const key_scratch scratch(k.s);
        std::apply([&](Args&... a) { F{}(scratch.get(), present, a...); }, args);
        return;
      }
      std::apply([&](Args&... a) { F{}(*original, present, a...); }, args);
    } else {
      std::apply([&](Args&... a) { F{}(k, present, a...); }, args);
    }
  }

  std::vector<char> serialize_local() const {
    part_of<keyed>& p = my_part();
    if constexpr (string_keys) {
      // The bytes serializer<std::string> writes, from the stored characters.
      std::size_t n = 0;
      p.table.for_each(
          [&](std::string_view k, const V& v) { n += 4 + k.size() + serializer<V>::size(v); });
      std::vector<char> bytes(n);
      byte_writer w(bytes.data());
      p.table.for_each([&](std::string_view k, const V& v) {
        w.put(static_cast<std::uint32_t>(k.size()));
        w.put(k.data(), k.size());
        serializer<V>::write(w, v);
      });
      return bytes;
    } else {
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
