// shoal::array<T, Dist>: a fixed-size array distributed over every core of
// the job (ygm's array, Grappa's GlobalVector without growth), owner
// computes; element i is target i of a distribution (distribution.hpp).
//
//   auto a = shoal::array<std::uint64_t>::create(n);     // one task; n elements, T{}
//   shoal::on_all_cores([a] {
//     a.async_visit(i, [](std::uint64_t i, std::uint64_t& v, std::uint64_t add) { v += add; }, 1);
//     a.async_put(j, 7);
//     shoal::barrier();                          // every operation above applied
//     std::vector<std::uint64_t> part(100);
//     a.get_range(0, std::span<std::uint64_t>(part));   // blocking read of [0, 100)
//   });
//   a.destroy();
//
//   using cyclic_array = shoal::array<double, shoal::cyclic_distribution>;
//   auto c = cyclic_array::create(n);                          // cyclic over cores()
//   auto b = shoal::array<int, shoal::block_cyclic_distribution>::create(
//       n, shoal::block_cyclic_distribution(64, shoal::cores()));
//
// Distribution (issue 14 item 1): Dist is any distribution_like type
// (block_distribution, the default, cyclic_distribution,
// block_cyclic_distribution, hashed_distribution, or the user's own: a
// trivially copyable, default-constructible type of at most 40 bytes with
// locate(t) -> {core, local}). Element i lives on core locate(i).core at
// local index locate(i).local; every process must pass the same
// distribution. create(n) builds the default one for the job (block:
// block_distribution(n, cores()); a Dist constructible from a core count:
// Dist(cores())); create(n, d) takes the caller's. create() checks every
// index of [0, n) against the job (a target out of d's range, or mapped to a
// core outside the job, ends the job naming the target and d). Costs: the
// block layout is closed-form (a block of ceil(n / cores) per core; the
// owner is a multiply-high by a precomputed reciprocal, the local index a
// subtraction). Any other distribution is scanned once: create() checks the
// n indices, and each core, on its first use, scans them again to size its
// storage to its largest local index + 1 and to record which global index
// each local slot holds (8 bytes per slot); an operation's owner and local
// index are locate(i). hashed_distribution's local index is the target id
// itself, so each core's storage spans up to n slots: use it for small
// arrays. T is trivially copyable (elements travel as bytes) and at most
// 8-byte aligned.
//
// Operations (any task or handler, any core; asynchronous; an index
// outside [0, n) ends the job naming the array, the index and n):
//   async_put(i, v)               element i = v (async_insert is the same);
//   async_erase(i)                element i = T{};
//   async_reduce(i, v, op)        element i = op(element i, v);
//   async_visit(i, f, args...)    f(std::uint64_t i, T&, args...) on the owner;
//   async_put_range(first, span)  elements [first, first + size) = the span,
//                                 in one record per owner and run of
//                                 consecutive local slots (a block layout:
//                                 one per block) of at most a quarter of an
//                                 aggregation buffer;
//   get_range(first, span)        blocking (a task): reads [first, first +
//                                 size) into the span: one request per such
//                                 run, the owner replies with the values;
//                                 not from inside this array's for_all or
//                                 visitors (named error).
// An element of the calling core is operated on at once (no message; a
// local target short-circuits) unless its part is busy.
// op and f capture nothing (compile-time error otherwise); args are
// serializable and not pointers. Order, completion (shoal::barrier() or
// shoal::drain_messages()), the busy-part rule, creation and destruction
// are those of shoal::map (containers/map.hpp).
// Collective (SPMD): size() returns n (after a barrier, like map's);
// clear() sets every element to T{}; gather(root) / gather_all(): the
// whole array in index order. Local: for_all(f) runs f(i, T&) over this
// core's elements (global indices; a block layout: in index order);
// local_range() (block layout only) gives this core's [first, last);
// deferred_records() counts the operations this core's part has queued
// behind a for_all or visitor (a diagnostic, bumped only on that path).
//
// Cost of a remote operation whose operands are arithmetic (an index, a
// value, visitor arguments): one 16-24-byte record written straight into
// the aggregation buffer ([u32 length][i32 operation][operands]), no
// serializer calls. On the owner, the array's own batch loop hands each
// operation the rest of the batch: an operation with arithmetic operands
// applies every following record of its kind (same length and operation)
// in one loop, with no indirect call per record (callgrind, array_visit
// at 1 x 2: 126 -> 90 instructions per operation, 27 of them the
// benchmark's key generation; bench/results/containers.md).
#pragma once

#include "shoal/collective.hpp"
#include "shoal/completion_event.hpp"
#include "shoal/containers/detail/keyed.hpp"
#include "shoal/containers/detail/ops.hpp"
#include "shoal/distribution.hpp"
#include "shoal/parallel.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace shoal {

template <class T, class Dist = block_distribution>
class array {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 8,
                "shoal::array<T>: T must be trivially copyable and at most 8-byte aligned");
  static_assert(std::is_default_constructible_v<T>,
                "shoal::array<T>: T must be default-constructible");
  static_assert(distribution_like<Dist>,
                "shoal::array<T, Dist>: Dist must be a distribution (shoal/distribution.hpp: "
                "trivially copyable, with locate(std::uint64_t) returning a target_location)");
  static_assert(std::is_default_constructible_v<Dist> && sizeof(Dist) <= 40,
                "shoal::array<T, Dist>: Dist must be default-constructible and at most 40 bytes "
                "(each core keeps a copy in its part and in the channel's handler state)");

  static constexpr bool is_block = std::is_same_v<Dist, block_distribution>;
  static constexpr std::uint64_t no_global = ~std::uint64_t{0};
  /// What lays a core's part out: a block layout's block size, or the
  /// distribution.
  using shape_type = std::conditional_t<is_block, std::uint64_t, Dist>;
  /// The handle's layout fields. A block layout keeps its block size with
  /// the channel id in its top 8 bits (stream ids are below 256), so that
  /// the handle stays 32 bytes with the precomputed reciprocal (closures
  /// that carry it to every core are at most 48 bytes).
  struct block_fields {
    std::uint64_t block_and_channel = 1;
    std::uint64_t reciprocal = 0;  // ceil(2^64 / block) when exact for [0, n), else 0
  };
  struct dist_fields {
    Dist dist{};
    std::uint32_t channel = 0;
  };
  static constexpr int channel_shift = 56;

 public:
  using value_type = T;
  using distribution_type = Dist;
  /// One core's part: its values, and where they sit in the array (block:
  /// the global index of values[0]; otherwise the distribution and, per
  /// local slot, the global index it holds, no_global for none).
  struct table_type {
    std::vector<T> values;
    std::vector<std::uint64_t> globals;
    std::uint64_t first = 0;
    Dist dist{};
    bool made = false;
    /// While a batch is applied: records after the current one that an
    /// operation may apply in the same call (a run of records of its kind;
    /// apply_batch). 0 otherwise.
    std::uint32_t run_budget = 0;
    std::uint64_t slot(std::uint64_t i) const noexcept {
      if constexpr (is_block)
        return i - first;
      else
        return dist.locate(i).local;
    }
    T& at(std::uint64_t i) { return values[slot(i)]; }
  };
  static constexpr const char* kind = "shoal::array";
  static std::size_t elements(const table_type& t) noexcept { return t.values.size(); }

  array() = default;

  /// Makes an array of n elements (T{}) on every process, laid out by the
  /// job's default Dist (block: ceil(n / cores) per core; otherwise
  /// Dist(cores())). One task; blocks like make_channel.
  static array create(std::uint64_t n) requires(is_block || std::is_constructible_v<Dist, int>) {
    SHOAL_CHECK_ON_CORE("shoal::array::create");
    if constexpr (is_block)
      return create(n, block_distribution(n, shoal::cores()));
    else
      return create(n, Dist(shoal::cores()));
  }

  /// Makes an array of n elements (T{}) laid out by `d`: element i on core
  /// d.locate(i).core. Every index is checked against the job here (a
  /// named error). One task; blocks like make_channel.
  static array create(std::uint64_t n, const Dist& d) {
    SHOAL_CHECK_ON_CORE("shoal::array::create");
    const int cores = shoal::cores();
    array a;
    a.n_ = n;
    shape_type shape{};
    if constexpr (is_block) {
      if (n != 0) (void)check_target(d, n - 1, cores, "shoal::array::create");
      const std::uint64_t b = std::max<std::uint64_t>(1, d.global(1, 0));
      SHOAL_CHECK(b < (std::uint64_t{1} << channel_shift),
                  "shoal::array::create: a block of {} elements per core (at most 2^56)", b);
      shape = b;
      // ceil(2^64 / b): i / b is the high half of i times it for every i
      // with i * b < 2^64 (the error, i * (it - 2^64 / b) / 2^64, stays
      // under 1 / b); checked for the largest i, n - 1.
      __extension__ using u128 = unsigned __int128;
      const u128 m = ((u128{1} << 64) + b - 1) / b;
      if (b > 1 && static_cast<u128>(n) * b <= (u128{1} << 64))
        a.layout_.reciprocal = static_cast<std::uint64_t>(m);
    } else {
      for (std::uint64_t t = 0; t < n; ++t) (void)check_target(d, t, cores, "shoal::array::create");
      shape = d;
      a.layout_.dist = d;
    }
    a.id_ = containers_detail::registry::new_id();
    const std::uint32_t channel = open_array_channel(receiver{a.id_, n, shape});
    if constexpr (is_block)
      a.layout_.block_and_channel = shape | (std::uint64_t{channel} << channel_shift);
    else
      a.layout_.channel = channel;
    return a;
  }

  /// n, the number of elements (no communication).
  std::uint64_t length() const noexcept { return n_; }
  /// The distribution (a layout other than block; a block layout has
  /// block()).
  const Dist& distribution() const noexcept requires(!is_block) { return layout_.dist; }
  /// Elements per core of a block layout, fixed at create().
  std::uint64_t block() const noexcept requires is_block {
    return layout_.block_and_channel & ((std::uint64_t{1} << channel_shift) - 1);
  }
  /// The core that holds element i.
  int owner(std::uint64_t i) const noexcept {
    if constexpr (is_block) {
      __extension__ using u128 = unsigned __int128;
      if (layout_.reciprocal != 0) [[likely]]
        return static_cast<int>((static_cast<u128>(i) * layout_.reciprocal) >> 64);
      return static_cast<int>(i / block());
    } else {
      return layout_.dist.locate(i).core;
    }
  }
  /// This core's block: [first, last) (block layout only).
  std::pair<std::uint64_t, std::uint64_t> local_range() const requires is_block {
    const table_type& t = my_part().table;
    return {t.first, t.first + t.values.size()};
  }
  /// Diagnostic, local (no communication; any task or handler on a core):
  /// how many operation records this core's part has deferred since
  /// create(), i.e. that arrived, or were issued on this core, while a
  /// for_all or visitor held the part, and were queued to be applied in
  /// order when it ended (the busy-part rule). Counted only on that
  /// deferral path (one increment of a plain per-core count per deferred
  /// record); an operation applied at once, the fast path, costs nothing
  /// more. Never reset; not synchronised with other cores (read it on the
  /// core whose part it counts).
  std::uint64_t deferred_records() const { return my_part().deferred_records; }

  void async_put(std::uint64_t i, const T& v) const {
    route(
        "shoal::array::async_put", &op_put, i, [&](table_type& t) { t.at(i) = v; }, i, v);
  }
  void async_insert(std::uint64_t i, const T& v) const { async_put(i, v); }
  void async_erase(std::uint64_t i) const {
    route(
        "shoal::array::async_erase", &op_erase, i, [&](table_type& t) { t.at(i) = T{}; }, i);
  }
  template <class Op>
  void async_reduce(std::uint64_t i, const T& v, Op) const {
    static_assert(stateless_function<Op>,
                  "shoal::array::async_reduce: the operation must capture nothing");
    static_assert(
        std::is_invocable_r_v<T, const Op&, const T&, const T&>,
        "shoal::array::async_reduce: the operation must be callable as T(const T&, const T&)");
    route(
        "shoal::array::async_reduce", &op_reduce<Op>, i,
        [&](table_type& t) { t.at(i) = Op{}(static_cast<const T&>(t.at(i)), v); }, i, v);
  }
  template <class F, class... Args>
  void async_visit(std::uint64_t i, F, const Args&... args) const {
    static_assert(stateless_function<F>,
                  "shoal::array::async_visit: the visitor must capture nothing (a captureless "
                  "lambda or an empty function object): it runs on the owner's core; pass values "
                  "as arguments");
    static_assert(
        (visit_argument<Args> && ...),
        "shoal::array::async_visit: every argument must be serializable and not a pointer");
    static_assert(
        std::is_invocable_v<const F&, std::uint64_t, T&, std::decay_t<Args>&...>,
        "shoal::array::async_visit: the visitor must be callable as f(std::uint64_t, T&, args...)");
    route(
        "shoal::array::async_visit", &op_visit<F, std::decay_t<Args>...>, i,
        [&](table_type& t) {
          std::tuple<std::decay_t<Args>...> copies{args...};
          std::apply([&](auto&... a) { F{}(i, t.at(i), a...); }, copies);
        },
        i, args...);
  }

  /// Writes `values` at [first, first + size), asynchronously (visible after
  /// a barrier). Any task or handler.
  void async_put_range(std::uint64_t first, std::span<const T> values) const {
    check_range("async_put_range", first, values.size());
    for_pieces(first, values.size(),
               [&](int o, std::uint64_t at, std::uint64_t slot, std::uint64_t count) {
                 const std::vector<T> piece(
                     values.begin() + static_cast<std::ptrdiff_t>(at - first),
                     values.begin() + static_cast<std::ptrdiff_t>(at - first + count));
                 containers_detail::send_op("shoal::array::async_put_range", channel(), o,
                                            &op_put_range, slot, piece);
               });
  }

  /// Reads [first, first + size) into `out`. Blocking: suspends the calling
  /// task until every owner has replied. Tasks only.
  void get_range(std::uint64_t first, std::span<T> out) const {
    check_range("get_range", first, out.size());
    if (my_part().busy) [[unlikely]]
      containers_detail::fatal_container(
          kind, id_,
          "get_range inside a for_all or visitor of the same array would wait forever (the "
          "replies wait for the part to be released)");
    completion_event done;
    const auto home = static_cast<std::int32_t>(shoal::mycore());
    for_pieces(first, out.size(),
               [&](int o, std::uint64_t at, std::uint64_t slot, std::uint64_t count) {
                 done.enroll();
                 const auto dest = reinterpret_cast<std::uint64_t>(out.data() + (at - first));
                 const auto event = reinterpret_cast<std::uint64_t>(&done);
                 containers_detail::send_op("shoal::array::get_range", channel(), o, &op_get, slot,
                                            count, home, channel(), dest, event);
               });
    shoal::flush();
    done.wait();
  }

  template <class F>
  void for_all(F&& f) const {
    containers_detail::part_of<array>& p = my_part();
    containers_detail::busy_scope<array> busy(id_, p);
    table_type& t = p.table;
    for (std::uint64_t l = 0; l < t.values.size(); ++l) {
      if constexpr (is_block) {
        f(t.first + l, t.values[l]);
      } else {
        if (t.globals[l] != no_global) f(t.globals[l], t.values[l]);
      }
    }
  }

  std::uint64_t size() const {
    shoal::barrier();
    return n_;
  }

  void clear() const {
    shoal::barrier();
    containers_detail::part_of<array>& p = my_part();
    SHOAL_CHECK(!p.busy, "shoal::array #{:x}: clear() called from inside a for_all or visitor",
                id_);
    std::fill(p.table.values.begin(), p.table.values.end(), T{});
    shoal::arrival_barrier();
  }

  std::vector<T> gather(int root) const {
    containers_detail::check_core(kind, id_, "gather", root);
    shoal::barrier();
    // A snapshot, taken by every core before any leaves: a core that leaves
    // gatherv early may send operations to a block not yet read.
    const std::vector<T> t = my_part().table.values;
    shoal::arrival_barrier();
    gathered<T> all = shoal::gatherv(std::span<const T>(t), root);
    if constexpr (is_block)
      return std::move(all.values);
    else
      return shoal::mycore() == root ? in_index_order(all) : std::vector<T>{};
  }
  std::vector<T> gather_all() const {
    shoal::barrier();
    const std::vector<T>& t = my_part().table.values;
    gathered<T> all = shoal::allgatherv(std::span<const T>(t));
    if constexpr (is_block)
      return std::move(all.values);
    else
      return in_index_order(all);
  }

  void destroy() {
    SHOAL_CHECK_ON_CORE("shoal::array::destroy");
    (void)my_part();  // names a default handle or a second destroy()
    containers_detail::retire_container(id_, channel());
    id_ = 0;
    layout_ = {};
  }

  std::uint64_t id() const noexcept { return id_; }

 private:
  using part_type = containers_detail::part_of<array>;
  using storage_type = containers_detail::storage_of<array>;

  /// The handler state: the id, the length and the distribution (to lay
  /// out a core's part on first use).
  struct receiver {
    std::uint64_t id;
    std::uint64_t n;
    shape_type shape;
  };
  struct find_part {
    part_type& operator()(const receiver& s) const { return part_for(s.id, s.n, s.shape); }
  };

  /// The operation channel (ops.hpp's open_container_channel, with this
  /// array's batch loop).
  struct deliver_batch {
    void operator()(const receiver& st, const char* data, std::uint32_t count) const {
      part_type& p = find_part{}(st);
      if (p.busy) [[unlikely]] {
        detail::deliver_records(
            [&p](byte_reader& r) { containers_detail::defer_record<array>(p, r); }, data, count);
        return;
      }
      containers_detail::busy_scope<array> busy(st.id, p);
      apply_batch(st.id, p, data, count);
    }
  };
  static std::uint32_t open_array_channel(const receiver& state) {
    return containers_detail::open_container_channel<array, receiver, deliver_batch>(state);
  }

  /// Applies a batch of records. Each operation gets a reader that runs on
  /// past its record to the buffer's end, and t.run_budget, the records
  /// left: an operation with fixed-size operands applies the records of
  /// its own kind that follow (same length, same operation id) in its own
  /// loop, with no return here, no indirect call and no reader per record
  /// (operations on the random elements of one array mostly come in such
  /// runs). The record checks of ops.hpp hold: a record must lie inside
  /// the buffer, and an operation that applies one record must read it
  /// exactly.
  static void apply_batch(std::uint64_t id, part_type& p, const char* data, std::uint32_t count) {
    table_type& t = p.table;
    const char* const limit = data + detail::tls_aggregator->capacity();
    const char* at = data;
    for (std::uint32_t left = count; left != 0;) {
      --left;
      std::uint32_t n;
      SHOAL_CHECK(limit - at >= 8, "shoal::array #{:x}: a record batch overruns its buffer", id);
      std::memcpy(&n, at, 4);
      const char* const record = at + detail::record_prefix_bytes;
      SHOAL_CHECK(n >= 4 && static_cast<std::uint64_t>(limit - record) >= n,
                  "shoal::array #{:x}: a record of {} bytes overruns its buffer", id, n);
      std::int32_t op;
      std::memcpy(&op, record, 4);
      byte_reader r(record + 4, limit);
      t.run_budget = left;
      try {
        containers_detail::from_op_id<void(table_type&, byte_reader&)>(op)(t, r);
      } catch (const std::bad_alloc&) {
        containers_detail::fatal_out_of_memory<array>(id, t.values.size());
      }
      if (t.run_budget == left && r.position() != record + n) [[unlikely]]
        containers_detail::fatal_container(
            kind, id,
            fmt::format("an operation's record of {} bytes was read to byte {} (a serializer's "
                        "write() and read() disagree)",
                        n, r.position() - record));
      left = t.run_budget;
      at = r.position();
    }
    t.run_budget = 0;
  }

  /// Applies one(operands) to the record `r` is at (Len bytes after its
  /// length prefix: the operation id and the operands), then to each record
  /// that follows with the same length and operation id `self`, while the
  /// batch's budget lasts (apply_batch).
  template <std::uint32_t Len, class One>
  [[gnu::always_inline]] static void run_records(table_type& t, byte_reader& r, std::int32_t self,
                                                 const One& one) {
    one(r.skip(Len - 4, "an array operation's operands"));
    while (t.run_budget != 0 && r.left() >= detail::record_prefix_bytes + Len) {
      const char* h = r.position();
      std::uint32_t len;
      std::int32_t op;
      std::memcpy(&len, h, 4);
      std::memcpy(&op, h + 4, 4);
      if (len != Len || op != self) return;
      --t.run_budget;
      one(r.skip(detail::record_prefix_bytes + Len, "an array operation") + 8);
    }
  }
  template <class X>
  static X load(const char* p) noexcept {
    X x;
    std::memcpy(&x, p, sizeof(X));
    return x;
  }

  static part_type& part_for(std::uint64_t id, std::uint64_t n, const shape_type& d) {
    part_type& p = containers_detail::local_part<storage_type>(id, kind);
    if (p.table.made) [[likely]]
      return p;
    return make_part(id, n, d, p);
  }
  /// A core's part, laid out at its first use. Out of line, so that
  /// part_for (every operation) inlines: as one function it cost 36
  /// instructions per async_visit (callgrind).
  [[gnu::noinline, gnu::cold]] static part_type& make_part(std::uint64_t id, std::uint64_t n,
                                                           const shape_type& d, part_type& p) {
    const auto me = static_cast<std::uint64_t>(shoal::mycore());
    table_type& t = p.table;
    try {
      if constexpr (is_block) {
        const std::uint64_t b = d;
        const std::uint64_t first = me * b >= n ? n : me * b;
        t.first = first;
        t.values.resize(std::min(n - first, b));
      } else {
        t.dist = d;
        // Two passes over the indices: this core's extent, then which
        // global index each of its slots holds.
        std::uint64_t extent = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
          const target_location at = d.locate(i);
          if (static_cast<std::uint64_t>(at.core) == me) extent = std::max(extent, at.local + 1);
        }
        t.values.resize(extent);
        t.globals.assign(extent, no_global);
        for (std::uint64_t i = 0; i < n; ++i) {
          const target_location at = d.locate(i);
          if (static_cast<std::uint64_t>(at.core) == me) t.globals[at.local] = i;
        }
      }
    } catch (const std::bad_alloc&) {
      containers_detail::fatal_out_of_memory<array>(id, 0);
    }
    t.made = true;
    return p;
  }
  part_type& my_part() const {
    if constexpr (is_block)
      return part_for(id_, n_, block());
    else
      return part_for(id_, n_, layout_.dist);
  }
  std::uint32_t channel() const noexcept {
    if constexpr (is_block)
      return static_cast<std::uint32_t>(layout_.block_and_channel >> channel_shift);
    else
      return layout_.channel;
  }

  /// Non-block layouts: the gathered parts (each core's local slots) put
  /// back in index order.
  std::vector<T> in_index_order(const gathered<T>& all) const {
    std::vector<T> out(n_);
    for (std::uint64_t i = 0; i < n_; ++i) {
      const target_location at = layout_.dist.locate(i);
      out[i] = all.part(at.core)[at.local];
    }
    return out;
  }

  void check_index(const char* what, std::uint64_t i) const {
    if (i >= n_) [[unlikely]]
      containers_detail::fatal_container(
          kind, id_, fmt::format("{}: index {} is outside the array's {} elements", what, i, n_));
  }
  void check_range(const char* what, std::uint64_t first, std::size_t count) const {
    (void)my_part();
    if (first > n_ || count > n_ - first) [[unlikely]]
      containers_detail::fatal_container(
          kind, id_,
          fmt::format("{}: range [{}, {}) is outside the array's {} elements", what, first,
                      first + count, n_));
  }

  /// Calls f(owner, first index, first local slot, count) for each piece of
  /// [first, first + count): a run of indices on one owner in consecutive
  /// local slots (a block layout: split at block ends), of at most a
  /// quarter of an aggregation buffer.
  template <class F>
  void for_pieces(std::uint64_t first, std::uint64_t count, F&& f) const {
    const std::uint64_t most =
        std::max<std::uint64_t>(1, detail::tls_aggregator->capacity() / 4 / sizeof(T));
    const std::uint64_t end = first + count;
    for (std::uint64_t at = first; at < end;) {
      std::uint64_t n = 1;
      int o = 0;
      std::uint64_t slot = 0;
      if constexpr (is_block) {
        o = owner(at);
        const std::uint64_t b = block();
        const std::uint64_t block_first = static_cast<std::uint64_t>(o) * b;
        slot = at - block_first;
        n = std::min({end - at, block_first + b - at, most});
      } else {
        const target_location here = layout_.dist.locate(at);
        o = here.core;
        slot = here.local;
        while (at + n < end && n < most) {
          const target_location next = layout_.dist.locate(at + n);
          if (next.core != o || next.local != slot + n) break;
          ++n;
        }
      }
      f(o, at, slot, n);
      at += n;
    }
  }

  /// As keyed::route: applies at once on the caller's own part (or queues
  /// behind a busy one), else sends to the owner.
  template <class Direct, class... Ts>
  void route(const char* what, containers_detail::op_fn<table_type> fn, std::uint64_t i,
             Direct&& direct, const Ts&... operands) const {
    part_type& p = my_part();
    check_index(what, i);
    const int o = owner(i);
    if (o == shoal::mycore()) {
      if (p.busy) {
        containers_detail::defer_op<array>(p, fn, operands...);
      } else {
        containers_detail::busy_scope<array> busy(id_, p);
        direct(p.table);
      }
      return;
    }
    send(what, o, fn, operands...);
    containers_detail::pace();
  }

  /// Operands that travel as their bytes (serialize.hpp's layout for them)
  /// with no serializer call.
  template <class X>
  static constexpr bool raw_operand = std::is_arithmetic_v<X> || std::is_enum_v<X>;

  /// send_op, with a record of arithmetic operands written in place: the
  /// handle's lookup (my_part) has already named a default, stale or
  /// destroyed handle and a call off a core, which reserve_record would
  /// check again.
  template <class... Ts>
  void send(const char* what, int o, containers_detail::op_fn<table_type> fn,
            const Ts&... operands) const {
    if constexpr ((raw_operand<Ts> && ...)) {
      constexpr std::uint32_t n = 4 + (std::uint32_t{0} + ... + sizeof(Ts));
      static_assert(n <= 64);
      char* p = detail::tls_aggregator->reserve(channel(), o, detail::record_prefix_bytes + n);
      std::memcpy(p, &n, 4);
      const std::int32_t op = containers_detail::to_op_id(fn);
      std::memcpy(p + 4, &op, 4);
      char* w = p + 8;
      ((std::memcpy(w, &operands, sizeof(Ts)), w += sizeof(Ts)), ...);
    } else {
      containers_detail::send_op(what, channel(), o, fn, operands...);
    }
  }

  static void op_put(table_type& t, byte_reader& r) {
    if constexpr (raw_operand<T>) {
      run_records<4 + 8 + sizeof(T)>(
          t, r, containers_detail::to_op_id(&op_put),
          [&t](const char* p) { t.at(load<std::uint64_t>(p)) = load<T>(p + 8); });
    } else {
      const auto i = r.get<std::uint64_t>("an array index");
      t.at(i) = r.get<T>("an array value");
    }
  }
  static void op_erase(table_type& t, byte_reader& r) {
    run_records<4 + 8>(t, r, containers_detail::to_op_id(&op_erase),
                       [&t](const char* p) { t.at(load<std::uint64_t>(p)) = T{}; });
  }
  template <class Op>
  static void op_reduce(table_type& t, byte_reader& r) {
    if constexpr (raw_operand<T>) {
      run_records<4 + 8 + sizeof(T)>(t, r, containers_detail::to_op_id(&op_reduce<Op>),
                                     [&t](const char* p) {
                                       T& slot = t.at(load<std::uint64_t>(p));
                                       slot = Op{}(static_cast<const T&>(slot), load<T>(p + 8));
                                     });
    } else {
      T& slot = t.at(r.get<std::uint64_t>("an array index"));
      slot = Op{}(static_cast<const T&>(slot), r.get<T>("an array value"));
    }
  }
  template <class F, class... Args>
  static void op_visit(table_type& t, byte_reader& r) {
    if constexpr ((raw_operand<Args> && ...)) {
      run_records<4 + 8 + (std::uint32_t{0} + ... + sizeof(Args))>(
          t, r, containers_detail::to_op_id(&op_visit<F, Args...>), [&t](const char* p) {
            visit_raw<F, Args...>(t, load<std::uint64_t>(p), p + 8,
                                  std::index_sequence_for<Args...>{});
          });
    } else {
      const auto i = r.get<std::uint64_t>("an array index");
      std::tuple<Args...> args{serializer<Args>::read(r)...};
      std::apply([&](Args&... a) { F{}(i, t.at(i), a...); }, args);
    }
  }
  /// Where each argument starts when they are stored back to back.
  template <class... Args>
  static constexpr std::array<std::size_t, sizeof...(Args) + 1> arg_offsets() {
    std::array<std::size_t, sizeof...(Args) + 1> o{};
    const std::size_t sizes[] = {sizeof(Args)..., 0};
    for (std::size_t j = 0; j < sizeof...(Args); ++j) o[j + 1] = o[j] + sizes[j];
    return o;
  }
  /// f(i, element i, args...) with the arguments read from their bytes at
  /// p, back to back.
  template <class F, class... Args, std::size_t... K>
  static void visit_raw(table_type& t, std::uint64_t i, [[maybe_unused]] const char* p,
                        std::index_sequence<K...>) {
    // A static table, not a constexpr local array read by a lambda: GCC 12
    // at -O1 with ASan failed on that form (internal compiler error).
    [[maybe_unused]] static constexpr std::array<std::size_t, sizeof...(Args) + 1> offsets =
        arg_offsets<Args...>();
    std::tuple<Args...> args{load<Args>(p + offsets[K])...};
    std::apply([&](Args&... a) { F{}(i, t.at(i), a...); }, args);
  }
  static void op_put_range(table_type& t, byte_reader& r) {
    const auto slot = r.get<std::uint64_t>("an array slot");
    const std::vector<T> values = serializer<std::vector<T>>::read(r);
    std::copy(values.begin(), values.end(), t.values.begin() + static_cast<std::ptrdiff_t>(slot));
  }
  /// A read request: the owner replies on the requester's core with the
  /// values, which land at `dest` (a pointer in the requester's process,
  /// used only there) and complete its event.
  static void op_get(table_type& t, byte_reader& r) {
    const auto slot = r.get<std::uint64_t>("an array slot");
    const auto count = r.get<std::uint64_t>("a count");
    const auto home = r.get<std::int32_t>("a core");
    const auto channel = r.get<std::uint32_t>("a channel");
    const auto dest = r.get<std::uint64_t>("a destination");
    const auto event = r.get<std::uint64_t>("an event");
    const std::vector<T> values(t.values.data() + slot, t.values.data() + slot + count);
    containers_detail::send_op("shoal::array::get_range (reply)", channel, home, &op_got, dest,
                               event, values);
  }
  static void op_got(table_type&, byte_reader& r) {
    const auto dest = r.get<std::uint64_t>("a destination");
    const auto event = r.get<std::uint64_t>("an event");
    const std::vector<T> values = serializer<std::vector<T>>::read(r);
    if (!values.empty())
      std::memcpy(reinterpret_cast<T*>(dest), values.data(), values.size() * sizeof(T));
    reinterpret_cast<completion_event*>(event)->complete();
  }

  std::uint64_t id_ = 0;
  std::uint64_t n_ = 0;
  std::conditional_t<is_block, block_fields, dist_fields> layout_{};
};
static_assert(sizeof(array<std::uint64_t>) == 32);

}  // namespace shoal
