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
//
// Packed records. A container may pack a fixed-size operation (keyed.hpp:
// insert, insert_if_missing and reduce of keys and values that travel as
// their bytes): its record is [u32 n][i32 op][u32 used][K V] x cap, or,
// for a run of one value, [u32 n][i32 op'][V][u32 used][K] x cap (op', the
// operation's one-value reader); `used` counts the bytes of the operations
// written. The sending core reserves the record for `cap` operations at
// the end of the batch staged for the owner and writes each further
// operation of that kind (and value) to that owner into it (send_packed:
// no reserve, no header), while the record is the batch's last and the
// batch is still staged. A run's records are of one value until an
// operation brings another (then of pairs, until the run ends), each with
// room for twice the operations of the run's previous record (from 1, at
// most 1024 or a batch), so a run of m operations costs 12 + m x operands
// bytes or less on the wire instead of m x (8 + operands), and the unused
// room sent is at most twice the operations written before it in the run.
// The owner applies a record's operations in one pass. Order is that of a
// stream: an operation joins the record only while nothing else has been
// sent after it to that core on the channel, i.e. where its own record
// would have gone.
#pragma once

#include "shoal/containers/detail/registry.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/object_channel.hpp"
#include "shoal/serialize.hpp"
#include "shoal/task.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace shoal::containers_detail {

/// The packed record (the file's comment) open at the end of the batch
/// staged for one core on a container's channel (part::open_runs), or
/// none (all null). Its bytes are read only while `sent`, the
/// aggregator's count of the channel's messages that had left the core
/// when the record was last seen staged, is unchanged (no batch of the
/// channel has left since, so its batch is still staged), or after
/// open_packed has seen the batch staged.
struct alignas(64) open_run {
  char* next = nullptr;    // where its next operation goes
  char* end = nullptr;     // the end of its room (next == end: full)
  char* first = nullptr;   // its first operation, after its [u32 used]
  std::uint64_t sent = 0;  // aggregator::sent(channel) then
  std::int32_t op = 0;     // the run's operation (its pairs' op id); 0: none
  bool same = false;       // a record of one value: [V][u32 used][K] x cap
};

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
  /// By destination core: the packed record open in the batch staged
  /// there on the container's channel (send_packed; made at the first
  /// packed send, cores() of them). Every send of the core on that
  /// channel keeps it (end_packed after other records), so that it never
  /// names a record that is not its batch's last.
  std::unique_ptr<open_run[]> open_runs;
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
  if constexpr (prefetches_batches<C>::value) {
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

/// Operations at most in one packed record (the file's comment).
inline constexpr std::uint32_t max_packed_ops = 1024;

/// Writes one operation into r's record, which has room for it: its key,
/// and its value unless the record is of one value.
template <class K, class V>
[[gnu::always_inline]] inline void put_packed(open_run& r, bool same, const K& k, const V& v) {
  // (Read before the writes, which may alias anything.)
  char* const at = r.next;
  char* const first = r.first;
  byte_writer w(at);
  serializer<K>::write(w, k);
  if (!same) serializer<V>::write(w, v);
  r.next = w.position();
  const auto used = static_cast<std::uint32_t>(w.position() - first);
  std::memcpy(first - 4, &used, 4);
}

/// Whether v is the value of r's record of one value (its bytes as
/// written, so that the owner reads back the same value).
template <class V>
[[gnu::always_inline]] inline bool same_value(const open_run& r, const V& v) {
  if constexpr (std::is_empty_v<V>) {
    return true;
  } else {
    char bytes[sizeof(V)];
    byte_writer w(bytes);
    serializer<V>::write(w, v);
    return std::memcmp(bytes, r.first - 4 - sizeof(V), sizeof(V)) == 0;
  }
}

/// detail::reserve_record for open_packed, out of line: one more caller
/// inlining it (or the aggregator's reserve) tipped the compiler's
/// unit-growth limit and left it out of line in the hot paths of send_op
/// and counting_set (~10 instructions per operation).
[[gnu::noinline]] inline char* reserve_packed(const char* what, std::uint32_t channel, int core,
                                              std::uint32_t bytes) {
  return detail::reserve_record(what, channel, core, bytes);
}

/// send_packed when the operation does not join r's record at once: joins
/// it after all (a batch of the channel left, but not r's), or opens a
/// record in the batch staged for `core`, reserving it there (which may
/// suspend, like channel::send). A run's records are of one value until
/// an operation brings another (then of pairs until the run ends), with
/// room for twice the operations of the run's last record (within what
/// is left of the batch when that holds one operation).
template <class C, class K, class V>
[[gnu::noinline]] void open_packed(part_of<C>& p, const char* what, std::uint32_t channel, int core,
                                   std::int32_t op, std::int32_t op_same, K k, V v) {
  detail::aggregator& agg = *detail::tls_aggregator;
  if (!p.open_runs)
    p.open_runs = std::make_unique<open_run[]>(static_cast<std::size_t>(shoal::cores()));
  open_run& r = p.open_runs[static_cast<std::size_t>(core)];
  // r's batch is still staged when a batch is staged there at all: every
  // batch this core starts on the channel opens or ends an open_run.
  char* const batch = r.first != nullptr ? agg.staged(channel, core, 0, 0) : nullptr;
  const bool run = batch != nullptr && r.op == op;
  bool same = true;
  std::uint32_t ops = 0;  // in the run's last record
  if (run) {
    SHOAL_ASSERT(r.first >= batch && r.end <= batch + agg.capacity(),
                 "an open packed record outside its batch");
    r.sent = agg.sent(channel);
    const bool match = !r.same || same_value(r, v);
    if (r.next != r.end && match) {
      put_packed(r, r.same, k, v);
      return;
    }
    same = r.same && match;
    ops = static_cast<std::uint32_t>((r.next - r.first) /
                                     (r.same ? sizeof(K) : sizeof(K) + sizeof(V)));
  }
  const std::uint32_t stride = same ? sizeof(K) : sizeof(K) + sizeof(V);
  const std::uint32_t head = same ? 12 + sizeof(V) : 12;
  const std::uint32_t most = std::min(max_packed_ops, (agg.capacity() - head) / stride);
  if (most == 0) [[unlikely]]
    detail::fatal_record_send(what, channel, head - 4 + stride);
  std::uint32_t cap = 1;
  if (run) {
    cap = std::min(most, 2 * ops);
    const auto room = static_cast<std::uint32_t>(batch + agg.capacity() - r.end);
    if (room >= head + stride) cap = std::min(cap, (room - head) / stride);
  }
  char* at = reserve_packed(what, channel, core, head - 4 + cap * stride);
  byte_writer w(at);
  w.put(same ? op_same : op);
  if (same) serializer<V>::write(w, v);
  // After the reserve, which may have suspended (another task of this
  // core may have sent meanwhile): this record is the batch's last now.
  open_run& now = p.open_runs[static_cast<std::size_t>(core)];
  now.first = w.position() + 4;
  now.next = now.first;
  now.end = now.first + std::size_t{cap} * stride;
  now.sent = agg.sent(channel);
  now.op = op;
  now.same = same;
  put_packed(now, same, k, v);
}

/// Sends one operation of packed kind `op` (the file's comment; `op_same`:
/// the same operation in a record of one value) of key k and value v to
/// `core` on `channel`: into the packed record of that kind open at the end
/// of the batch staged there, or into a new one (open_packed). p: the
/// calling core's part (its open_runs). May suspend like channel::send
/// (only when it opens a record).
template <class C, class K, class V>
[[gnu::always_inline]] inline void send_packed(part_of<C>& p, const char* what,
                                               std::uint32_t channel, int core, std::int32_t op,
                                               std::int32_t op_same, const K& k, const V& v) {
  if (open_run* runs = p.open_runs.get()) [[likely]] {
    open_run& r = runs[core];
    // (The record's value is read only once its batch is known staged.)
    if (r.next != r.end && r.sent == detail::tls_aggregator->sent(channel) && r.op == op)
        [[likely]] {
      if (!r.same) {
        put_packed(r, false, k, v);
        return;
      }
      if (same_value(r, v)) [[likely]] {
        put_packed(r, true, k, v);
        return;
      }
    }
  }
  // (By value: references would keep k and v in memory on the fast path.)
  open_packed<C, K, V>(p, what, channel, core, op, op_same, k, v);
}

/// After a record that is not packed went to `core` on a packing
/// container's channel: no packed record is open there any more.
template <class C>
inline void end_packed(part_of<C>& p, int core) noexcept {
  if (p.open_runs) p.open_runs[static_cast<std::size_t>(core)] = open_run{};
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
