// The operation path every keyed container shares: operations travel as
// variable-length records ([i32 op id][serialized operands], object_channel.hpp)
// on the container's own channel, and run on the owning core against its
// part of the container.
//
// A core's part is "busy" while an operation or a for_all runs on it. A
// record that arrives while it is busy (a for_all whose body suspended, say
// under back-pressure, and let the core handle messages) is copied aside and
// applied when the part is no longer busy, so no operation changes a table
// that some code is iterating over or holds a reference into. A task applies
// operations on its own core's part directly (no message) only when the part
// is not busy and the operation runs no user code that might send.
#pragma once

#include "shoal/containers/detail/registry.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/object_channel.hpp"
#include "shoal/serialize.hpp"
#include "shoal/task.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace shoal::containers_detail {

/// One core's part of a container: its table, the records that arrived
/// while it was busy, and how many records have been deferred so far (a
/// diagnostic: bumped only on the deferral path, defer_record and
/// defer_op, never by an operation applied at once; a plain count, since
/// only the owning core touches its part).
template <class Table>
struct part {
  Table table{};
  bool busy = false;
  /// The core's own operations on this part go through its aggregation
  /// buffer, like remote ones (keyed.hpp: once the part is large; until
  /// clear(), so that they stay in one stream, in call order).
  bool self_batched = false;
  std::vector<char> deferred;  // [u32 n][n bytes] records, in arrival order
  std::uint64_t deferred_records = 0;
};

/// What a container type provides to the shared path (C::kind names it in
/// errors; C::table_type is one core's table).
template <class C>
using part_of = part<typename C::table_type>;
template <class C>
using storage_of = per_core_storage<part_of<C>>;

/// An operation applied on the owner: reads its operands from the record.
template <class Table>
using op_fn = void (*)(Table& table, byte_reader& r);

template <class C>
[[noreturn, gnu::cold, gnu::noinline]] void fatal_out_of_memory(std::uint64_t id,
                                                                std::size_t elements) {
  fatal_container(C::kind, id,
                  fmt::format("out of memory on core {} while applying an operation to its {} "
                              "local elements (the heap is exhausted: fewer elements per core, "
                              "more processes, or a smaller value type)",
                              detail::tls_core, elements));
}

/// The error for an operation that left `left` bytes of its record unread.
inline std::string unread_record_message(std::size_t left) {
  return fmt::format(
      "an operation's record had {} bytes left unread (a serializer's write() and read() "
      "disagree)",
      left);
}

template <class C>
void apply_record(std::uint64_t id, part_of<C>& p, byte_reader& r) {
  using table_type = typename C::table_type;
  const auto op = r.get<std::int32_t>("a container operation's id");
  try {
    from_op_id<void(table_type&, byte_reader&)>(op)(p.table, r);
  } catch (const std::bad_alloc&) {
    fatal_out_of_memory<C>(id, C::elements(p.table));
  }
  if (r.left() != 0) [[unlikely]]
    fatal_container(C::kind, id, unread_record_message(r.left()));
}

/// Whether container C applies runs of records (C::record_runs true):
/// consecutive records with the same header (length and operation) are
/// handed to the operation together, which may apply the whole run in one
/// loop (keyed.hpp's insert and reduce on flat tables: prefetched, the
/// table grown once). The operation's reader then holds the first record's
/// operands followed by the rest of the run, each with its header
/// ([u32 n][i32 op][operands]); the operation reads either its record's
/// operands alone or the whole run.
template <class C, class = void>
struct runs_records : std::false_type {};
template <class C>
struct runs_records<C, std::void_t<decltype(C::record_runs)>> : std::bool_constant<C::record_runs> {
};

template <class C>
[[noreturn, gnu::cold, gnu::noinline]] void fatal_record_overrun(std::uint64_t id, std::uint32_t i,
                                                                 std::uint32_t count) {
  fatal_container(
      C::kind, id,
      fmt::format("an operation record overruns its batch (record {} of {})", i, count));
}

/// Applies `count` records ([u32 n][i32 op][operands], within [data,
/// limit); or up to limit, where count is larger) to p's table by runs
/// (runs_records). Checks what apply_record
/// checks: each record inside the batch, each operation reading its
/// record exactly (or its whole run).
template <class C>
void apply_runs(std::uint64_t id, part_of<C>& p, const char* data, const char* limit,
                std::uint32_t count) {
  using table_type = typename C::table_type;
  const char* at = data;
  std::uint32_t i = 0;
  while (i < count && at != limit) {
    std::uint64_t head;
    if (limit - at < 8) [[unlikely]]
      fatal_record_overrun<C>(id, i, count);
    std::memcpy(&head, at, 8);
    const auto n = static_cast<std::uint32_t>(head);
    const std::size_t stride = std::size_t{4} + n;
    if (n < 4 || static_cast<std::size_t>(limit - at) < stride) [[unlikely]]
      fatal_record_overrun<C>(id, i, count);
    // The run: the records after this one with the same header.
    const char* end = at + stride;
    std::uint32_t k = 1;
    while (i + k < count && static_cast<std::size_t>(limit - end) >= stride &&
           std::memcmp(end, &head, 8) == 0) {
      end += stride;
      ++k;
    }
    const auto fn =
        from_op_id<void(table_type&, byte_reader&)>(static_cast<std::int32_t>(head >> 32));
    // Each call applies the run's first record left, or all of them.
    while (k != 0) {
      byte_reader r(at + 8, end);
      try {
        fn(p.table, r);
      } catch (const std::bad_alloc&) {
        fatal_out_of_memory<C>(id, C::elements(p.table));
      }
      if (r.left() == 0) {
        i += k;
        at = end;
        break;
      }
      if (r.position() != at + stride) [[unlikely]]
        fatal_container(
            C::kind, id,
            unread_record_message(static_cast<std::size_t>(at + stride - r.position())));
      ++i;
      --k;
      at += stride;
    }
  }
}

/// Marks the part busy for the caller's scope; on leaving, applies what was
/// deferred meanwhile (still busy while it does, since those operations may
/// run user code too), then clears the mark.
template <class C>
class busy_scope {
 public:
  busy_scope(std::uint64_t id, part_of<C>& p) noexcept : id_(id), p_(p), outer_(p.busy) {
    p.busy = true;
  }
  ~busy_scope() {
    if (outer_) return;
    while (!p_.deferred.empty()) {
      std::vector<char> records;
      records.swap(p_.deferred);
      if constexpr (runs_records<C>::value) {
        apply_runs<C>(id_, p_, records.data(), records.data() + records.size(), ~std::uint32_t{0});
        continue;
      }
      for (const char* at = records.data(); at < records.data() + records.size();) {
        std::uint32_t n;
        std::memcpy(&n, at, 4);
        byte_reader r(at + 4, at + 4 + n);
        apply_record<C>(id_, p_, r);
        at += 4 + n;
      }
    }
    p_.busy = false;
  }
  busy_scope(const busy_scope&) = delete;
  busy_scope& operator=(const busy_scope&) = delete;

 private:
  std::uint64_t id_;
  part_of<C>& p_;
  bool outer_;
};

/// Copies the rest of a record aside, to be applied when the part is
/// released (busy_scope).
template <class C>
void defer_record(part_of<C>& p, byte_reader& r) {
  const auto n = static_cast<std::uint32_t>(r.left());
  const char* bytes = r.skip(n, "a deferred operation");
  ++p.deferred_records;
  const std::size_t at = p.deferred.size();
  p.deferred.resize(at + 4 + n);
  std::memcpy(p.deferred.data() + at, &n, 4);
  std::memcpy(p.deferred.data() + at + 4, bytes, n);
}

/// Applies a record now, or keeps it for later when the part is busy.
template <class C>
void receive_record(std::uint64_t id, part_of<C>& p, byte_reader& r) {
  if (p.busy) [[unlikely]] {
    defer_record<C>(p, r);
    return;
  }
  busy_scope<C> busy(id, p);
  apply_record<C>(id, p, r);
}

/// Whether container C prefetches a batch's table places as it applies
/// the batch: C::batch_prefetch true, and C::record_prefetcher(table, data,
/// count), whose step() is called before each record is applied.
template <class C, class = void>
struct prefetches_batches : std::false_type {};
template <class C>
struct prefetches_batches<C, std::void_t<decltype(C::batch_prefetch)>>
    : std::bool_constant<C::batch_prefetch> {};

/// A batch of operation records for part p: applied under one busy mark
/// (one lookup of the part and one mark per batch, not per operation), or
/// all queued when the part is busy already. A container whose records
/// say where their keys live in its table (prefetches_batches) has the
/// place of the record a few ahead fetched before each record is applied,
/// so that the records' table misses overlap. (A separate pass of
/// prefetches before the batch, under `if constexpr (requires {
/// C::prefetch_batch(p.table, data, count); })`, left no prefetch
/// instruction in the Release binary.) Operations that the batch's
/// visitors make on this core's own part queue behind the batch, as they
/// would behind any busy part (no order between cores is promised).
template <class C>
void receive_batch(std::uint64_t id, part_of<C>& p, const char* data, std::uint32_t count) {
  if (p.busy) [[unlikely]] {
    detail::deliver_records([&p](byte_reader& r) { defer_record<C>(p, r); }, data, count);
    return;
  }
  busy_scope<C> busy(id, p);
  if constexpr (runs_records<C>::value) {
    apply_runs<C>(id, p, data, data + detail::tls_aggregator->capacity(), count);
  } else if constexpr (prefetches_batches<C>::value) {
    typename C::record_prefetcher ahead(p.table, data, count);
    detail::deliver_records(
        [id, &p, &ahead](byte_reader& r) {
          ahead.step();
          apply_record<C>(id, p, r);
        },
        data, count);
  } else {
    detail::deliver_records([id, &p](byte_reader& r) { apply_record<C>(id, p, r); }, data, count);
  }
}

/// Opens a channel of container C whose batches go to
/// Deliver{}(state, data, count) on the receiving core (blocking like
/// make_channel): `state` (bytes-copyable, at most
/// max_channel_handler_bytes) is replicated to every core. `value_bytes`:
/// 0 for variable-length records, else the size of each fixed-size value.
/// Every container channel opens through here (one size check).
template <class C, class State, class Deliver>
std::uint32_t open_container_channel(const State& state, std::uint32_t value_bytes = 0) {
  static_assert(copyable_as_bytes<State> && sizeof(State) <= max_channel_handler_bytes,
                "a container channel's handler state must be bytes-copyable and fit a channel "
                "entry's state");
  static_assert(std::is_empty_v<Deliver> && std::is_default_constructible_v<Deliver>);
  SHOAL_CHECK_ON_CORE(C::kind);
  detail::channel_entry e;
  std::memcpy(e.state, static_cast<const void*>(&state), sizeof(State));
  e.value_bytes = value_bytes;
  e.deliver = [](const void* s, const char* data, std::uint32_t count) {
    Deliver{}(*static_cast<const State*>(s), data, count);
  };
  return detail::open_channel(e);
}

/// Opens a container's operation channel (variable-length records):
/// Find{}(state) gives the receiving core's part, once per batch, and
/// receive_batch applies the batch to it.
template <class C, class State, class Find>
std::uint32_t open_op_channel(const State& state) {
  struct deliver {
    void operator()(const State& st, const char* data, std::uint32_t count) const {
      receive_batch<C>(st.id, Find{}(st), data, count);
    }
  };
  return open_container_channel<C, State, deliver>(state);
}

/// The handler state of a keyed container's operation channel: its id.
template <class C>
struct op_receiver {
  std::uint64_t id;
};
template <class C>
struct find_keyed_part {
  part_of<C>& operator()(const op_receiver<C>& s) const {
    return local_part<storage_of<C>>(s.id, C::kind);
  }
};

/// Sends operation `fn` with `operands` to `core` on channel `channel`.
template <class Table, class... Ts>
[[gnu::always_inline]] inline void send_op(const char* what, std::uint32_t channel, int core,
                                           op_fn<Table> fn, const Ts&... operands) {
  const std::size_t n = 4 + (std::size_t{0} + ... + serializer<Ts>::size(operands));
  char* p = detail::reserve_record(what, channel, core, n);
  byte_writer w(p);
  w.put(to_op_id(fn));
  (serializer<Ts>::write(w, operands), ...);
  SHOAL_CHECK(w.position() == p + n,
              "{}: a serializer wrote {} bytes, but size() said {} (they must agree)", what,
              w.position() - p, n);
}

/// Queues operation `fn` with `operands` on the calling core's own busy
/// part, behind what is queued there (applied when the part is released).
template <class C, class... Ts>
void defer_op(part_of<C>& p, op_fn<typename C::table_type> fn, const Ts&... operands) {
  const std::size_t n = 4 + (std::size_t{0} + ... + serializer<Ts>::size(operands));
  ++p.deferred_records;
  const std::size_t at = p.deferred.size();
  p.deferred.resize(at + 4 + n);
  const auto n32 = static_cast<std::uint32_t>(n);
  std::memcpy(p.deferred.data() + at, &n32, 4);
  byte_writer w(p.deferred.data() + at + 4);
  w.put(to_op_id(fn));
  (serializer<Ts>::write(w, operands), ...);
}

/// Remote operations a task has sent since it last yielded.
inline thread_local std::uint32_t tls_unpaced = 0;

/// Pacing: after every 64 remote operations a task (not a handler, which
/// cannot suspend) yields, so that its core handles what other cores send
/// it and returns their buffers, instead of leaving them on back-pressure
/// until the task's loop ends (measured: shoal wordcount at 2 x 2 on the
/// 2-core development machine took 95 s without, 3.7 s with). A yield with
/// nothing else ready returns at once.
inline void pace() {
  if (++tls_unpaced < 64) [[likely]]
    return;
  tls_unpaced = 0;
  if (detail::in_worker()) shoal::yield();
}

/// Ends the job unless `core` is a core of the job.
inline void check_core(const char* kind, std::uint64_t id, const char* what, int core) {
  if (core < 0 || core >= shoal::cores()) [[unlikely]]
    fatal_container(kind, id,
                    fmt::format("{}: core {} is not a core of the job (0 .. {})", what, core,
                                shoal::cores() - 1));
}

}  // namespace shoal::containers_detail
