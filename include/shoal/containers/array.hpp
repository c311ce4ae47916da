// shoal::array<T>: a fixed-size array block-distributed over every core of
// the job (ygm's array, Grappa's GlobalVector without growth), owner computes.
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
// Partition: block b = ceil(n / cores()); element i lives on core i / b at
// local index i mod b (the last cores may hold fewer, or none). T is
// trivially copyable (elements travel as bytes) and at most 8-byte aligned.
//
// Operations (any task or handler, any core; asynchronous; an index
// outside [0, n) ends the job naming the array, the index and n):
//   async_put(i, v)               element i = v (async_insert is the same);
//   async_erase(i)                element i = T{};
//   async_reduce(i, v, op)        element i = op(element i, v);
//   async_visit(i, f, args...)    f(std::uint64_t i, T&, args...) on the owner;
//   async_put_range(first, span)  elements [first, first + size) = the span,
//                                 in one record per owner and piece of at most
//                                 a quarter of an aggregation buffer;
//   get_range(first, span)        blocking (a task): reads [first, first +
//                                 size) into the span: one request per owner
//                                 and piece, the owner replies with the values;
//                                 not from inside this array's for_all or
//                                 visitors (named error).
// op and f capture nothing (compile-time error otherwise); args are
// serializable and not pointers. Order, completion (shoal::barrier() or
// shoal::drain_messages()), the busy-part rule, creation and destruction
// are those of shoal::map (containers/map.hpp).
// Collective (SPMD): size() returns n (after a barrier, like map's);
// clear() sets every element to T{}; gather(root) / gather_all(): the
// whole array in index order. Local: for_all(f) runs f(i, T&) over this
// core's block (global indices); local_range() gives [first, last).
#pragma once

#include "shoal/collective.hpp"
#include "shoal/completion_event.hpp"
#include "shoal/containers/detail/keyed.hpp"
#include "shoal/containers/detail/ops.hpp"
#include "shoal/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace shoal {

template <class T>
class array {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= 8,
                "shoal::array<T>: T must be trivially copyable and at most 8-byte aligned");
  static_assert(std::is_default_constructible_v<T>,
                "shoal::array<T>: T must be default-constructible");

 public:
  using value_type = T;
  /// One core's block: its values and the global index of the first.
  struct table_type {
    std::vector<T> values;
    std::uint64_t first = 0;
    T& at(std::uint64_t i) { return values[i - first]; }
  };
  static constexpr const char* kind = "shoal::array";
  static std::size_t elements(const table_type& t) noexcept { return t.values.size(); }

  array() = default;

  /// Makes an array of n elements (T{}) on every process. One task; blocks
  /// like make_channel.
  static array create(std::uint64_t n) {
    SHOAL_CHECK_ON_CORE("shoal::array::create");
    array a;
    a.id_ = containers_detail::registry::new_id();
    a.n_ = n;
    const auto cores = static_cast<std::uint64_t>(shoal::cores());
    a.block_ = std::max<std::uint64_t>(1, (n + cores - 1) / cores);
    a.channel_ = containers_detail::open_op_channel<array, receiver, find_part>(receiver{a.id_, n});
    return a;
  }

  /// n, the number of elements (no communication).
  std::uint64_t length() const noexcept { return n_; }
  /// Elements per core (the last cores may hold fewer), fixed at create():
  /// kept in the handle so that an operation's owner is one division.
  std::uint64_t block() const noexcept { return block_; }
  int owner(std::uint64_t i) const noexcept { return static_cast<int>(i / block_); }
  /// This core's block: [first, last).
  std::pair<std::uint64_t, std::uint64_t> local_range() const {
    (void)my_part();
    return range_of(shoal::mycore());
  }

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
    for_pieces(first, values.size(), [&](int o, std::uint64_t at, std::uint64_t count) {
      const std::vector<T> piece(values.begin() + static_cast<std::ptrdiff_t>(at - first),
                                 values.begin() + static_cast<std::ptrdiff_t>(at - first + count));
      containers_detail::send_op("shoal::array::async_put_range", channel_, o, &op_put_range, at,
                                 piece);
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
    for_pieces(first, out.size(), [&](int o, std::uint64_t at, std::uint64_t count) {
      done.enroll();
      const auto dest = reinterpret_cast<std::uint64_t>(out.data() + (at - first));
      const auto event = reinterpret_cast<std::uint64_t>(&done);
      containers_detail::send_op("shoal::array::get_range", channel_, o, &op_get, at, count, home,
                                 channel_, dest, event);
    });
    shoal::flush();
    done.wait();
  }

  template <class F>
  void for_all(F&& f) const {
    containers_detail::part_of<array>& p = my_part();
    containers_detail::busy_scope<array> busy(id_, p);
    for (std::uint64_t l = 0; l < p.table.values.size(); ++l)
      f(p.table.first + l, p.table.values[l]);
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
    return std::move(shoal::gatherv(std::span<const T>(t), root).values);
  }
  std::vector<T> gather_all() const {
    shoal::barrier();
    const std::vector<T>& t = my_part().table.values;
    return std::move(shoal::allgatherv(std::span<const T>(t)).values);
  }

  void destroy() {
    SHOAL_CHECK_ON_CORE("shoal::array::destroy");
    (void)my_part();  // names a default handle or a second destroy()
    containers_detail::retire_container(id_, channel_);
    id_ = 0;
    channel_ = 0;
  }

  std::uint64_t id() const noexcept { return id_; }

 private:
  using part_type = containers_detail::part_of<array>;
  using storage_type = containers_detail::storage_of<array>;

  /// The handler state: the id and the length (to size a core's block on
  /// first use).
  struct receiver {
    std::uint64_t id;
    std::uint64_t n;
  };
  struct find_part {
    part_type& operator()(const receiver& s) const { return part_for(s.id, s.n); }
  };

  static std::pair<std::uint64_t, std::uint64_t> range_for(std::uint64_t n, int core) {
    const auto p = static_cast<std::uint64_t>(shoal::cores());
    const std::uint64_t b = std::max<std::uint64_t>(1, (n + p - 1) / p);
    const std::uint64_t first = std::min(n, b * static_cast<std::uint64_t>(core));
    return {first, std::min(n, first + b)};
  }
  std::pair<std::uint64_t, std::uint64_t> range_of(int core) const { return range_for(n_, core); }

  static part_type& part_for(std::uint64_t id, std::uint64_t n) {
    if (detail::tls_core < 0) [[unlikely]]
      detail::fatal_outside_run(kind);
    part_type& p = containers_detail::registry::instance().get<storage_type>(id, kind).local();
    if (p.table.values.size() != 0 || n == 0) [[likely]]
      return p;
    return make_block(id, n, p);
  }
  /// A core's block, made at its first use. Out of line, so that part_for
  /// (every operation) inlines: as one function it cost 36 instructions
  /// per async_visit (callgrind).
  [[gnu::noinline, gnu::cold]] static part_type& make_block(std::uint64_t id, std::uint64_t n,
                                                            part_type& p) {
    const auto [first, last] = range_for(n, shoal::mycore());
    p.table.first = first;
    try {
      p.table.values.resize(last - first);
    } catch (const std::bad_alloc&) {
      containers_detail::fatal_out_of_memory<array>(id, 0);
    }
    return p;
  }
  part_type& my_part() const { return part_for(id_, n_); }

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

  /// Calls f(owner, first, count) for each piece of [first, first + count):
  /// split at block ends and at a quarter of an aggregation buffer.
  template <class F>
  void for_pieces(std::uint64_t first, std::uint64_t count, F&& f) const {
    const std::uint64_t b = block();
    const std::uint64_t most =
        std::max<std::uint64_t>(1, detail::tls_aggregator->capacity() / 4 / sizeof(T));
    for (std::uint64_t at = first; at < first + count;) {
      const std::uint64_t block_end = (at / b + 1) * b;
      const std::uint64_t n = std::min({first + count - at, block_end - at, most});
      f(owner(at), at, n);
      at += n;
    }
  }

  /// As keyed::route: applies at once on the caller's own block (or queues
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
    containers_detail::send_op(what, channel_, o, fn, operands...);
    containers_detail::pace();
  }

  static void op_put(table_type& t, byte_reader& r) {
    const auto i = r.get<std::uint64_t>("an array index");
    t.at(i) = r.get<T>("an array value");
  }
  static void op_erase(table_type& t, byte_reader& r) {
    t.at(r.get<std::uint64_t>("an array index")) = T{};
  }
  template <class Op>
  static void op_reduce(table_type& t, byte_reader& r) {
    T& slot = t.at(r.get<std::uint64_t>("an array index"));
    slot = Op{}(static_cast<const T&>(slot), r.get<T>("an array value"));
  }
  template <class F, class... Args>
  static void op_visit(table_type& t, byte_reader& r) {
    const auto i = r.get<std::uint64_t>("an array index");
    std::tuple<Args...> args{serializer<Args>::read(r)...};
    std::apply([&](Args&... a) { F{}(i, t.at(i), a...); }, args);
  }
  static void op_put_range(table_type& t, byte_reader& r) {
    const auto at = r.get<std::uint64_t>("an array index");
    const std::vector<T> values = serializer<std::vector<T>>::read(r);
    std::copy(values.begin(), values.end(), &t.at(at));
  }
  /// A read request: the owner replies on the requester's core with the
  /// values, which land at `dest` (a pointer in the requester's process,
  /// used only there) and complete its event.
  static void op_get(table_type& t, byte_reader& r) {
    const auto at = r.get<std::uint64_t>("an array index");
    const auto count = r.get<std::uint64_t>("a count");
    const auto home = r.get<std::int32_t>("a core");
    const auto channel = r.get<std::uint32_t>("a channel");
    const auto dest = r.get<std::uint64_t>("a destination");
    const auto event = r.get<std::uint64_t>("an event");
    const std::vector<T> values(&t.at(at), &t.at(at) + count);
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
  std::uint64_t block_ = 1;
  std::uint32_t channel_ = 0;
};

}  // namespace shoal
