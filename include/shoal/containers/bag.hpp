// shoal::bag<T>: an unordered distributed collection (ygm's bag), with
// rebalancing.
//
//   auto b = shoal::bag<std::string>::create();         // one task
//   shoal::on_all_cores([b] {
//     b.async_insert("x");               // lands on some core (round-robin per sender)
//     b.rebalance();                     // collective: parts differ by at most one
//     b.for_all([](std::string& s) { ... });            // this core's part
//   });
//   b.destroy();
//
// Placement: each core sends its inserts round-robin over the cores,
// starting with itself (its own inserts are stored at once, with no
// message), so parts stay near even when every core inserts about as much.
// T is any serializable type (serialize.hpp); each remote insert is one
// record of 4 + 4 + serialized bytes on the bag's channel.
//
// Operations: async_insert(v) (any task or handler); async_insert_at(core,
// v) puts v on a given core. A bag has no keys, so no erase, visit or
// reduce: iterate with for_all(f), f(T&) over this core's part (local).
// Collective (SPMD): size(); clear(); gather(root) / gather_all() (parts
// in core order); rebalance(): every insert applied, then elements move so
// that core c holds floor(n / cores) elements, one more for c below
// n mod cores (a core keeps the elements whose position in the order
// (core, index) falls in its new share; one message per element that
// moves; the order of elements within a part is not kept). Completion, the busy-part rule, creation
// and destruction: as shoal::map (containers/map.hpp). Errors name "shoal::bag #<id>".
#pragma once

#include "shoal/collective.hpp"
#include "shoal/containers/detail/keyed.hpp"
#include "shoal/containers/detail/ops.hpp"
#include "shoal/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace shoal {

template <class T>
class bag {
  static_assert(serializable<T>,
                "shoal::bag<T>: T is not serializable (specialise shoal::serializer<T>, see "
                "shoal/serialize.hpp)");

 public:
  struct table_type {
    std::vector<T> items;
    std::uint32_t next = 0;  ///< round-robin: the next destination's offset from this core
  };
  static constexpr const char* kind = "shoal::bag";
  static std::size_t elements(const table_type& t) noexcept { return t.items.size(); }

  bag() = default;

  static bag create() {
    SHOAL_CHECK_ON_CORE("shoal::bag::create");
    bag b;
    b.id_ = containers_detail::registry::new_id();
    b.channel_ = containers_detail::open_op_channel<bag, containers_detail::op_receiver<bag>,
                                                    containers_detail::find_keyed_part<bag>>(
        containers_detail::op_receiver<bag>{b.id_});
    return b;
  }

  void async_insert(const T& v) const {
    part_type& p = my_part();
    const int me = shoal::mycore();
    const int dest = static_cast<int>((static_cast<std::uint64_t>(me) + p.table.next) %
                                      static_cast<std::uint64_t>(shoal::cores()));
    p.table.next =
        static_cast<std::uint32_t>((p.table.next + 1) % static_cast<std::uint32_t>(shoal::cores()));
    insert_on(p, dest, v);
  }

  void async_insert_at(int core, const T& v) const {
    part_type& p = my_part();
    containers_detail::check_core(kind, id_, "async_insert_at", core);
    insert_on(p, core, v);
  }

  template <class F>
  void for_all(F&& f) const {
    part_type& p = my_part();
    containers_detail::busy_scope<bag> busy(id_, p);
    for (T& v : p.table.items) f(v);
  }

  std::size_t local_size() const { return my_part().table.items.size(); }

  std::size_t size() const {
    shoal::barrier();
    return static_cast<std::size_t>(
        shoal::allreduce_sum(static_cast<std::uint64_t>(my_part().table.items.size())));
  }

  void clear() const {
    shoal::barrier();
    part_type& p = my_part();
    SHOAL_CHECK(!p.busy, "shoal::bag #{:x}: clear() called from inside a for_all", id_);
    p.table.items = {};
    shoal::arrival_barrier();
  }

  std::vector<T> gather(int root) const {
    containers_detail::check_core(kind, id_, "gather", root);
    shoal::barrier();
    const std::vector<char> mine = serialize_local();
    shoal::arrival_barrier();  // every snapshot taken before any core leaves (see map)
    return parse(shoal::gatherv(std::span<const char>(mine), root).values);
  }
  std::vector<T> gather_all() const {
    shoal::barrier();
    const std::vector<char> mine = serialize_local();
    return parse(shoal::allgatherv(std::span<const char>(mine)).values);
  }

  void rebalance() const {
    shoal::barrier();
    part_type& p = my_part();
    SHOAL_CHECK(!p.busy, "shoal::bag #{:x}: rebalance() called from inside a for_all", id_);
    const int me = shoal::mycore();
    const auto cores = static_cast<std::uint64_t>(shoal::cores());
    const std::vector<std::uint64_t> sizes =
        shoal::allgather(static_cast<std::uint64_t>(p.table.items.size()));
    std::uint64_t total = 0;
    std::uint64_t before = 0;
    for (int c = 0; c < static_cast<int>(cores); ++c) {
      if (c < me) before += sizes[static_cast<std::size_t>(c)];
      total += sizes[static_cast<std::size_t>(c)];
    }
    const std::uint64_t q = total / cores;
    const std::uint64_t r = total % cores;
    // The core that holds global position g after rebalancing.
    auto target = [q, r](std::uint64_t g) -> int {
      if (g < (q + 1) * r) return static_cast<int>(g / (q + 1));
      return static_cast<int>(r + (g - (q + 1) * r) / q);
    };
    // Split first, then send: elements arriving while a send suspends join
    // the kept ones, not the outgoing. Elements beyond this core's count in
    // `sizes` were sent by cores that left the allgather earlier and are
    // already in their place: they stay.
    const std::size_t old = static_cast<std::size_t>(sizes[static_cast<std::size_t>(me)]);
    std::vector<T> keep;
    std::vector<std::pair<int, T>> out;
    for (std::size_t k = old; k < p.table.items.size(); ++k)
      keep.push_back(std::move(p.table.items[k]));
    for (std::size_t k = 0; k < old; ++k) {
      const int d = target(before + k);
      if (d == me) {
        keep.push_back(std::move(p.table.items[k]));
      } else {
        out.emplace_back(d, std::move(p.table.items[k]));
      }
    }
    p.table.items = std::move(keep);
    for (const auto& [d, v] : out)
      containers_detail::send_op("shoal::bag::rebalance", channel_, d, &op_insert, v);
    shoal::barrier();
  }

  void destroy() {
    SHOAL_CHECK_ON_CORE("shoal::bag::destroy");
    (void)my_part();
    containers_detail::retire_container(id_, channel_);
    id_ = 0;
    channel_ = 0;
  }

  std::uint64_t id() const noexcept { return id_; }

 private:
  using part_type = containers_detail::part_of<bag>;

  part_type& my_part() const {
    if (detail::tls_core < 0) [[unlikely]]
      detail::fatal_outside_run(kind);
    return containers_detail::registry::instance()
        .get<containers_detail::storage_of<bag>>(id_, kind)
        .local();
  }

  void insert_on(part_type& p, int dest, const T& v) const {
    if (dest != shoal::mycore()) {
      containers_detail::send_op("shoal::bag::async_insert", channel_, dest, &op_insert, v);
      containers_detail::pace();
    } else if (p.busy) {
      containers_detail::defer_op<bag>(p, &op_insert, v);
    } else {
      try {
        p.table.items.push_back(v);
      } catch (const std::bad_alloc&) {
        containers_detail::fatal_out_of_memory<bag>(id_, p.table.items.size());
      }
    }
  }

  static void op_insert(table_type& t, byte_reader& r) {
    t.items.push_back(serializer<T>::read(r));
  }

  std::vector<char> serialize_local() const {
    const part_type& p = my_part();
    std::size_t n = 0;
    for (const T& v : p.table.items) n += serializer<T>::size(v);
    std::vector<char> bytes(n);
    byte_writer w(bytes.data());
    for (const T& v : p.table.items) serializer<T>::write(w, v);
    return bytes;
  }
  static std::vector<T> parse(const std::vector<char>& bytes) {
    std::vector<T> out;
    byte_reader r(bytes.data(), bytes.data() + bytes.size());
    while (r.left() != 0) out.push_back(serializer<T>::read(r));
    return out;
  }

  std::uint64_t id_ = 0;
  std::uint32_t channel_ = 0;
};

}  // namespace shoal
