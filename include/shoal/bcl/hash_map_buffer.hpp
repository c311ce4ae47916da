// hash_map_buffer<K, V>: BCL's HashMapBuffer (thesis section 6.1, "Buffering
// hash table insertions"): inserts into a hash_map during an insert phase
// are kept in per-owner buffers, pushed a message at a time to a fast_queue
// hosted on the key's home core, and applied by that core itself, with the
// map's local insert, when every core calls flush().
//
//   shoal::on_all_cores([m] {                 // m: a hash_map<K, V> handle
//     shoal::bcl::hash_map_buffer<K, V> buf(m, /*queue=*/1 << 16, /*message=*/256);
//     for (...) buf.insert(k, v);             // buffered; no waiting for the table
//     auto r = buf.flush();                   // collective: every insert is in the map
//     ... m.find(k, shoal::bcl::hash_promise::find_only) ...
//     buf.destroy();                          // collective
//   });
//
// One object per core (it holds that core's buffers: not copyable). Made,
// flushed and destroyed collectively: every core of the job calls each, in
// the same order (collective.hpp's SPMD contract).
//
// Phases. Between the constructor (or a flush) and the next flush is an
// insert phase: cores call insert() on their buffers; the map itself is
// not touched by other operations (the map's find is not promised to see
// buffered inserts, and a local insert at flush would race with remote
// ones). flush() ends the phase: every core pushes what it still holds,
// rflush()es, passes an arrival barrier (parallel.hpp: it does not wait
// for application messages; the phase's pushes have completed by then, and
// messages of the caller's own are not drained by flush), drains its own
// queue into its own part of the map (plain loads and stores through
// hash_map::owned(): no other operation runs on the map in the phase; a
// bucket found held ends the job), and passes a second barrier (the
// allreduce of the totals). After flush() returns on a core, every insert
// of the phase, from every core, is in the map and found by find_only.
//
// Order. Inserts of one key in one phase (from one core or several) leave
// one of the values, unspecified which (BCL: ordering only after flush).
//
// Full queue, full table. A message whose push finds the owner's queue full
// is inserted at once with the map's atomic insert (slower, nothing lost).
// An entry whose home part of the map is full is not inserted; flush()
// returns, on every core, the job's totals of inserted, updated and full
// (entries refused), so a full table is reported, never silent.
//
// The buffered path, per entry: the inserting core hashes the key once
// (hash_map::place_of: home core and first slot) and copies the key, the
// value and the slot into the home core's stage (a flat array, m entries
// per home core); a full stage goes in one push; the home core applies
// each entry of its queue in place at its slot, prefetching the bucket 16
// entries ahead, without hashing it again (an entry whose slot is free
// takes it with two stores). About 82 instructions an insert all in
// (inserts, pushes, flush) against about 290 before, and about 750 for
// hash_map's atomic insert (callgrind, bench/results/bcl.md).
//
// Costs (A, W as in hash_map.hpp; m = message entries, n = cores):
//   insert             a hash and a copy into a stage; every m-th insert to
//                      one owner pushes the message: A + W(m) (when the
//                      queue is full: m atomic inserts instead, 2A + W + F
//                      each)
//   flush              per core: one push per non-empty stage, rflush, an
//                      arrival barrier, the local inserts of its queue (CPU
//                      only), an allreduce of 4 counters
//   constructor        a fast_queue::make on this core (a global_alloc: a
//                      round trip to rank 0, and a symmetric allocation of
//                      `queue` entries on every core), a write of its ring
//                      (local_nonatomic_touch: no insert phase page-faults
//                      on it), an allgather, and under shm a read per 4 KiB
//                      of other processes' rings (fast_queue::prefault,
//                      shared out among the cores of a process)
//   destroy            a barrier and a global_free
// Memory: per core, n stages of m entries, and a queue of `queue` entries
// (reserved on every core by the symmetric heap); an entry is the key, the
// value and an 8-byte slot (sizeof(K) + sizeof(V) + 8, aligned).
//
// Errors (the job ends naming the buffer and the cause): a message of 0
// entries or of more than the queue holds; an invalid map; any call after
// destroy().
#pragma once

#include "shoal/bcl/fast_queue.hpp"
#include "shoal/bcl/hash_map.hpp"
#include "shoal/collective.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/parallel.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace shoal::bcl {

/// How flush_as() applies a phase's buffered entries on their home core:
/// the map's insert, add (counters: value += entry's value, inserting
/// absent keys) or add_existing (counters: only keys already present).
enum class hash_apply { insert, add, add_existing };

template <class K, class V>
class hash_map_buffer {
  static_assert(std::is_trivially_copyable_v<V>,
                "hash_map_buffer carries entries by value through fast_queue: V must be "
                "trivially copyable (insert serialised values into the hash_map itself)");
  using map_type = hash_map<K, V>;

 public:
  /// What travels to the home core: the entry and its first slot there
  /// (the inserting core hashes the key once, for the home core and the
  /// slot; the home core does not hash it again).
  struct entry {
    K key;
    V value;
    std::uint64_t slot;
  };
  /// Job-wide totals of one flush (equal on every core).
  struct flush_result {
    std::uint64_t inserted = 0, updated = 0, full = 0;
    std::uint64_t absent = 0;  ///< flush_as(add_existing): entries whose key was not in the map
  };

  /// Collective. `queue`: entries the queue on this core holds; `message`:
  /// entries buffered per owner before they are pushed.
  hash_map_buffer(map_type map, std::uint64_t queue, std::uint64_t message)
      : map_(map), message_(message) {
    SHOAL_CHECK_ON_CORE("shoal::bcl::hash_map_buffer");
    if (!map.valid())
      shoal::detail::fatal_user(
          "hash_map_buffer: the hash_map was destroyed or never made (default-constructed)");
    if (message == 0 || message > queue)
      shoal::detail::fatal_user(fmt::format(
          "hash_map_buffer: a message of {} entries does not fit a queue of {} entries (need 1 "
          "to {})",
          message, queue, queue));
    fast_queue<entry> mine = fast_queue<entry>::make(mycore(), queue);
    (void)mine.local_nonatomic_touch();  // empty: no insert phase page-faults on its ring
    queues_ = allgather(mine);
    prefault_other_processes();
    stage_.resize(queues_.size() * message_);
    for (std::size_t c = 0; c < queues_.size(); ++c) {
      entry* const first = stage_.data() + c * message_;
      lanes_.push_back(lane{first, first + message_});
    }
  }
  hash_map_buffer(const hash_map_buffer&) = delete;
  hash_map_buffer& operator=(const hash_map_buffer&) = delete;

  bool valid() const noexcept { return !queues_.empty(); }

  /// Buffers k -> v for the key's home core. Returns at once, or after one
  /// push when that owner's buffer is full (see the costs).
  void insert(const K& k, const V& v) {
    check("insert");
    if (const int home = stage(k, v); home >= 0) send(home, hash_apply::insert);
  }

  /// Collective: ends the insert phase (see the header). Returns the job's
  /// totals for the phase.
  flush_result flush() { return end_phase(hash_apply::insert); }

  /// Counters (V an integer): buffers "add d to k's value" (add) or "add d
  /// to k's value if k is in the map" (add_existing) for the key's home
  /// core. A phase holds one kind of entry, and ends with flush_as() of that
  /// kind on every core; a core mixing add and add_existing in one phase, or
  /// ending it with another kind, ends the job (insert() is not tracked:
  /// do not mix it with these). Costs as insert (a full queue: the atomic
  /// add or add_existing per entry).
  void add(const K& k, const V& d) requires detail::atomic_word<V> {
    buffer(k, d, hash_apply::add);
  }
  void add_existing(const K& k, const V& d) requires detail::atomic_word<V> {
    buffer(k, d, hash_apply::add_existing);
  }

  /// Collective: flush() for a phase of add()s or add_existing()s (how;
  /// insert: the same as flush()). Every entry is applied on its home core with the
  /// map's add or add_existing under promise local; a message that found
  /// its queue full was applied at once with the atomic form instead.
  /// Returns the job's totals: inserted (new keys, add), updated (keys
  /// added to), full (refused: home part full), absent (add_existing: key
  /// not in the map, nothing done).
  flush_result flush_as(hash_apply how) requires detail::atomic_word<V> {
    check("flush_as");
    if (how == hash_apply::insert) return flush();
    check_phase(how, "flush_as");
    phase_ = -1;
    return end_phase(how);
  }

  /// Collective: frees this core's queue once no core can push to it.
  /// Inserts not flushed are dropped.
  void destroy() {
    check("destroy");
    barrier();
    queues_[static_cast<std::size_t>(mycore())].destroy();
    queues_.clear();
    lanes_.clear();
    stage_.clear();
  }

 private:
  void check(const char* op) const {
    SHOAL_CHECK_ON_CORE("shoal::bcl::hash_map_buffer");
    if (!valid())
      shoal::detail::fatal_user(
          fmt::format("hash_map_buffer::{} after destroy() on core {}", op, mycore()));
  }

  // Under shm the rings of other processes are mapped into this one a page
  // at a time on first access (a fault each, about 45% of a first insert
  // phase's time at 2 x 1): taken here instead, the queues of each other
  // process shared out among this process's cores. Other backends reach
  // other processes' memory through MPI or delegates: nothing to map.
  void prefault_other_processes() const {
    if (one_sided_backend() != one_sided_kind::shm) return;
    const int local = shoal::detail::g_info.local_cores;
    for (std::size_t c = 0; c < queues_.size(); ++c) {
      const int host = static_cast<int>(c);
      if (rank_of(host) != myrank() && host % local == mycore() % local) queues_[c].prefault();
    }
  }

  // Copies k -> v into its home core's stage; returns that home when its
  // stage is now full, else -1. One hash of k gives the home and the slot.
  int stage(const K& k, const V& v) {
    const typename map_type::place at = map_.place_of(k);
    lane& l = lanes_[static_cast<std::size_t>(at.core)];
    *l.next = entry{k, v, at.slot};
    return ++l.next == l.end ? at.core : -1;
  }

  // Pushes the stage for `home` as one message; a full queue is bypassed
  // with the atomic form of `how` per entry, so nothing is lost.
  void send(int home, hash_apply how) {
    const auto h = static_cast<std::size_t>(home);
    lane& l = lanes_[h];
    entry* const first = l.end - message_;
    const std::span<const entry> run(first, l.next);
    l.next = first;
    if (queues_[h].push(run)) return;
    for (const entry& e : run) {
      if (how == hash_apply::insert)
        count(map_.insert(e.key, e.value));
      else
        apply_atomic(e, how);
    }
  }

  // The end of a phase of `how` entries: every core pushes what it still
  // holds, rflush()es, passes a barrier, applies its own queue, and sums
  // the counts (an allreduce: every core waits for every other).
  flush_result end_phase(hash_apply how) {
    check("flush");
    for (std::size_t c = 0; c < lanes_.size(); ++c)
      if (lanes_[c].next != lanes_[c].end - message_) send(static_cast<int>(c), how);
    rflush();
    // Arrival only, not barrier(): every operation of the phase has
    // completed here (pushes and the full-queue fallback's atomic inserts
    // are blocking under every backend, their puts remotely complete at the
    // rflush above), so there is nothing in flight for a draining barrier to
    // wait for. At 1 x 2 under load the draining barrier's quiescence wave
    // took 2-3x as long (bench/results/bcl.md, h12i).
    arrival_barrier();
    with_apply(how, [this](const auto& use) { drain(use); });
    std::array<std::uint64_t, 4> totals = {counts_[0], counts_[1], counts_[2], absent_};
    allreduce_sum(std::span<std::uint64_t>(totals));  // waits for every core: a barrier
    counts_ = {};
    absent_ = 0;
    return flush_result{totals[0], totals[1], totals[2], totals[3]};
  }

  // The owner's apply step for a run of entries homed on this core, in
  // place, each to `use(part, entry)`, which touches only this core's part
  // of the map and nothing else touches it (the phase's contract), so plain
  // loads and stores do. The bucket of the entry `ahead` places on is
  // prefetched: applying is a stream of cache misses, and this keeps several
  // in flight (16 ahead at about 10 ns an entry covers a miss of 160 ns;
  // a line held by the other vCPU takes 60-900 ns here). The entry carries its
  // slot, so the key is not hashed here. Outcomes are tallied in a local:
  // members would be reloaded after every bucket store, which may alias
  // them as far as the compiler knows.
  template <class F>
  void apply_run(const typename map_type::owned_part& part, std::span<const entry> run,
                 const F& use) {
    constexpr std::size_t ahead = 16;
    tally t{};
    const std::size_t n = run.size();
    for (std::size_t i = 0; i < ahead && i < n; ++i) part.prefetch(run[i].slot);
    std::size_t i = 0;
    for (; i + ahead < n; ++i) {
      part.prefetch(run[i + ahead].slot);
      use(part, run[i], t);
    }
    for (; i < n; ++i) use(part, run[i], t);
    for (std::size_t k = 0; k < counts_.size(); ++k) counts_[k] += t[k];
    absent_ += t[absent_index];
  }
  // Every entry other cores pushed to this core's queue, in place.
  template <class F>
  void drain(const F& use) {
    const typename map_type::owned_part part = map_.owned();
    queues_[static_cast<std::size_t>(me_)].local_nonatomic_drain(
        [&](std::span<const entry> run) { apply_run(part, run, use); });
  }
  // Calls g(use) with the owner's apply of one entry for `how`:
  // use(part, entry, tally) applies it and tallies the outcome.
  template <class G>
  static void with_apply(hash_apply how, const G& g) {
    using part_type = typename map_type::owned_part;
    if constexpr (detail::atomic_word<V>) {
      if (how == hash_apply::add_existing)
        return g([](const part_type& part, const entry& e, tally& t) {
          ++t[part.add_existing(e.key, e.value, e.slot)
                  ? static_cast<std::size_t>(hash_insert::updated)
                  : absent_index];
        });
      if (how == hash_apply::add)
        return g([](const part_type& part, const entry& e, tally& t) {
          ++t[static_cast<std::size_t>(part.add(e.key, e.value, e.slot))];
        });
    }
    g([](const part_type& part, const entry& e, tally& t) {
      ++t[static_cast<std::size_t>(part.insert(e.key, e.value, e.slot))];
    });
  }

  void count(hash_insert r) { ++counts_[static_cast<std::size_t>(r)]; }

  // The counters' atomic forms, for a message whose queue was full.
  void apply_atomic(const entry& e, hash_apply how) {
    if constexpr (detail::atomic_word<V>) {
      if (how == hash_apply::add_existing) {
        if (map_.add_existing(e.key, e.value, hash_promise::atomic))
          count(hash_insert::updated);
        else
          ++absent_;
      } else {
        count(map_.add(e.key, e.value, hash_promise::atomic));
      }
    }
  }

  void buffer(const K& k, const V& d, hash_apply how) {
    check(how == hash_apply::add ? "add" : "add_existing");
    check_phase(how, how == hash_apply::add ? "add" : "add_existing");
    phase_ = static_cast<int>(how);
    if (const int home = stage(k, d); home >= 0) send(home, how);
  }
  void check_phase(hash_apply how, const char* op) const {
    if (phase_ >= 0 && phase_ != static_cast<int>(how))
      shoal::detail::fatal_user(fmt::format(
          "hash_map_buffer::{} on core {} in a phase that buffered {}; one kind per phase", op,
          mycore(), phase_ == static_cast<int>(hash_apply::add) ? "add()s" : "add_existing()s"));
  }

  // The kind of entry this core buffered since the last flush_as (-1: none).
  int phase_ = -1;
  int me_ = mycore();  // the core this object belongs to
  map_type map_;
  std::uint64_t message_;
  std::vector<fast_queue<entry>> queues_;  // indexed by host core
  // Per home core, where its next entry goes in stage_ and where its
  // message_ entries end.
  struct lane {
    entry* next;
    entry* end;
  };
  std::vector<entry> stage_;  // message_ entries per home core, back to back (never resized)
  std::vector<lane> lanes_;   // indexed by home core
  // An apply step's outcomes: the three hash_insert results, then absent.
  using tally = std::array<std::uint64_t, 4>;
  static constexpr std::size_t absent_index = 3;
  std::array<std::uint64_t, 3> counts_{};  // this core's hash_insert results since the last flush
  std::uint64_t absent_ = 0;               // this core's add_existing misses since the last flush
};

}  // namespace shoal::bcl
