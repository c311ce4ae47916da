// fast_queue<T>: BCL's FastQueue (thesis section 5.1) on the one-sided
// layer: a ring buffer of T on one host core, for phases of only pushes or
// only pops separated by a barrier (data redistribution: everyone pushes to
// the owners' queues, barrier, each owner drains its own).
//
//   auto q = shoal::bcl::fast_queue<std::uint64_t>::make(/*host core=*/3, /*capacity=*/1 << 20);
//   q.push(x);                       // any core: compare_and_swap on the tail, then rput
//   shoal::rflush(); shoal::barrier();
//   std::uint64_t v; while (q.local_nonatomic_pop(v)) use(v);   // on core 3's process
//   q.destroy();                     // once, when no core uses it any more
//
// Layout: one global_alloc; the host core's part of it (contiguous in its
// segment, reached through a 2D pointer, so every backend of one_sided.hpp
// works) holds the tail and head counters (u64, counting every element ever
// pushed or popped, plus the slots local_nonatomic_rewind skipped; slot =
// counter % capacity) and then the elements. A
// fast_queue object is a small handle (48 bytes: pointers, capacity, two
// cached counters): copy it to every core that uses the queue (it fits an
// on_all_cores closure).
//
// Costs (table 5.1 of the thesis; A = one remote atomic, W / R = one remote
// write / read of the elements, l = a local operation; measured costs of
// A, R, W per backend: bench/results/one_sided.txt):
//   push(v)                A + W        (+ R when the cached head says full)
//   push(span of n)        A + W(n)     (two puts when it wraps)
//   pop(v)                 A + R        (+ R when the cached tail says empty)
//   pop(out, n)            A + R(n)
//   local_nonatomic_pop(v) l            (a task on the host's process)
//   local_nonatomic_pop(out) l(n)       (the same, up to out.size() at once)
//   local_nonatomic_drain(f) l          (f sees the elements in place, no copy)
//   local_nonatomic_rewind() l          (empty: the next phase starts at slot 0)
//   local_nonatomic_touch()  l(capacity) (writes every slot: no page faults later)
//   prefault()             R per 4 KiB of the ring (maps it into this process)
//   size()                 2R
//   make, destroy          a global_alloc / global_free (round trip to rank 0); make
//                          also a delegate to the host
//   resize(n), migrate(core)  B + a make + R(n) + W(n) (collective; bcl/ring.hpp)
// The A is a compare_and_swap from this handle's cached counter (BCL uses
// a fetch_add): exact when no other core pushed (popped) since this
// handle's last push (pop); each other core's operation in between costs
// one more A (the failed swap returns the counter, the next guess), plus
// an R when the cache is older than the queue's current counter of the
// other end. In exchange full and empty are exact (below).
// circular_queue and checksum_queue (bcl/) allow pushes and pops at once.
//
// Path (bcl/path.hpp, SHOAL_BCL_PATH; bcl/queue_path.hpp): push, pop and
// size run one-sided (the costs above) or as delegates to the host, which
// moves the counters with CPU instructions: a run of up to 128 bytes of
// elements in one delegate, D; a longer one reserved by one delegate,
// the elements moved one-sided: D + W(n) / D + R(n). make()
// picks for the queue (every copy of the handle follows it): forced, or
// under auto one-sided when a push, A + W, is below D. The push alone,
// because a fast_queue's pop phase is, in BCL's use and in this repo's
// (isx, hash_map_buffer), the host's local_nonatomic_pop or drain, which
// costs the same on both paths; and a run of n > 1 elements compares A
// against D on top of the same W(n). (The sum of a push and a pop, 2A +
// W + R against 2D, picked delegate under rma with bench/results/
// bcl_costs.md's figures, 4986 against 4516 ns predicted, where the
// measured pair favoured one-sided, 4950 against 6989 ns; re-measured, the
// pair is a tie, the push goes one-sided, 2014-2177 against 2204-2355 ns,
// as A + W < D predicts, and the pop to the delegate.) path() and
// --verbose say what it picked.
// Full and empty are judged alike on both paths.
//
// Concurrency promise: a phase has only pushes (from any cores) or only pops
// (from any cores, or local_nonatomic_pop on the host alone); between phases
// every pusher calls shoal::rflush() and then every core passes a barrier.
// Within a phase, concurrent calls are safe and each element goes to
// exactly one popper. Mixing pushes and pops in one phase is not detected
// and may pop a slot before its value lands.
//
// Full and empty are reported, never undefined: push returns false, pushing
// nothing, when the n values do not fit; pop returns false, popping
// nothing, when fewer than n are there (both judged at one moment of the
// phase; nothing is reserved and taken back).
//
// Errors: a capacity of 0, a host core outside the job, n larger than the
// capacity, local_nonatomic_pop off the host's process and use of a
// destroyed handle end the job naming the queue (its host and capacity) and
// the cause. (A copy of a handle made before destroy() cannot know; do not
// use it.)
#pragma once

#include "shoal/bcl/object.hpp"
#include "shoal/bcl/object_queue.hpp"
#include "shoal/bcl/path.hpp"
#include "shoal/bcl/queue_path.hpp"
#include "shoal/bcl/ring.hpp"
#include "shoal/bcl/ring_queue.hpp"
#include "shoal/delegate.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace shoal::bcl {

// The primary template takes trivially copyable T (stored in the ring); the
// specialisation at the end takes serialised T (bcl/object_queue.hpp).
template <class T>
requires storable<T>
class fast_queue : public queue_detail::ring_queue<fast_queue<T>, T> {
  static_assert(alignof(T) <= 64, "fast_queue: an element aligned to more than 64 bytes");
  using base = queue_detail::ring_queue<fast_queue<T>, T>;
  friend base;
  // What ring_queue reads: the name in messages, the counters size() subtracts.
  static constexpr const char* kind = "fast_queue";
  static constexpr int size_top = 0, size_bottom = 1;  // tail, head

 public:
  /// A handle to nothing (every operation but valid() ends the job).
  fast_queue() = default;

  /// Makes a queue of `capacity` elements hosted on core `host`. Any task;
  /// two allocations (round trips to rank 0) and one delegate to the host.
  static fast_queue make(int host, std::uint64_t capacity) {
    typename base::made m = base::allocate(host, capacity);
    fast_queue& q = m.q;
    rput(q.tail(), std::uint64_t{0});
    rput(q.head(), std::uint64_t{0});
    rflush();
    q.choose_path(m, "push", "A+W", 1, [](const op_costs& c) { return c.A + c.W; });
    return m.q;
  }

  using base::capacity;
  using base::host;
  using base::valid;
  /// How push, pop and size reach the queue (bcl/path.hpp).
  using base::path;

  /// Appends v; false (nothing pushed) when full. Push phase.
  bool push(const T& v) { return push(std::span<const T>(&v, 1)); }

  /// Appends every value of `vals` in order, contiguously; false (nothing
  /// pushed) when they do not fit. Push phase. The values are remotely
  /// complete after the caller's rflush().
  bool push(std::span<const T> vals) {
    this->check("push");
    const std::uint64_t n = vals.size();
    if (n == 0) return true;
    this->check_count("push", n);
    if (this->short_run(n)) return this->short_push(vals);
    std::uint64_t at = 0;
    if (!shoal::detail::bcl_reserve_run(host_, path_ == bcl::path::delegate, tail(), tail_cache_,
                                        head(), head_cache_, capacity_, n, at))
      return false;
    transfer_out(at, vals);
    return true;
  }

  /// Takes the oldest element into v; false (nothing popped) when empty. Pop phase.
  bool pop(T& v) { return pop(std::span<T>(&v, 1)); }

  /// Takes the out.size() oldest elements, in order; false (nothing
  /// popped) when fewer are there. Pop phase.
  bool pop(std::span<T> out) {
    this->check("pop");
    const std::uint64_t n = out.size();
    if (n == 0) return true;
    this->check_count("pop", n);
    if (this->short_run(n)) return this->short_pop(out);
    std::uint64_t at = 0;
    if (!shoal::detail::bcl_reserve_run(host_, path_ == bcl::path::delegate, head(), head_cache_,
                                        tail(), tail_cache_, 0, n, at))
      return false;
    transfer_in(at, out);
    return true;
  }
  /// pop() with plain loads and stores, for a task on the host's process
  /// when no other core pushes or pops (after the barrier that ends a push
  /// phase). Cost: local.
  bool local_nonatomic_pop(T& v) {
    this->check_local("local_nonatomic_pop");
    std::uint64_t* h = head().local();
    if (*h == *tail().local()) return false;
    v = *(data_ + static_cast<std::int64_t>(*h % capacity_)).local();
    ++*h;
    return true;
  }

  /// local_nonatomic_pop of up to out.size() elements at once (plain
  /// copies of at most two runs), under the same rules; returns how many
  /// were taken (0 when empty). Cost: local.
  std::size_t local_nonatomic_pop(std::span<T> out) {
    this->check_local("local_nonatomic_pop");
    std::uint64_t* h = head().local();
    const std::uint64_t n = std::min<std::uint64_t>(out.size(), *tail().local() - *h);
    runs(*h, n, [&](global_ptr<T> p, std::uint64_t from, std::uint64_t count) {
      std::memcpy(static_cast<void*>(out.data() + from), p.local(), count * sizeof(T));
    });
    *h += n;
    return static_cast<std::size_t>(n);
  }

  /// local_nonatomic_pop of every element without copying them: calls
  /// `use(std::span<const T>)` on the queue's own storage, oldest first (at
  /// most two runs, when the ring wraps), then marks them popped. Same
  /// rules as local_nonatomic_pop; the spans are valid only during the
  /// call. Returns how many were taken. Cost: local (no copy).
  template <class F>
  std::size_t local_nonatomic_drain(F&& use) {
    this->check_local("local_nonatomic_drain");
    std::uint64_t* h = head().local();
    const std::uint64_t n = *tail().local() - *h;
    if (n == 0) return 0;  // use is never called with an empty run
    runs(*h, n, [&](global_ptr<T> p, std::uint64_t, std::uint64_t count) {
      if (count > 0) use(std::span<const T>(p.local(), static_cast<std::size_t>(count)));
    });
    *h += n;
    return static_cast<std::size_t>(n);
  }

  /// On the host's process, between phases (no push or pop running, as for
  /// local_nonatomic_pop), when the queue is empty: moves the tail and head
  /// on to the next multiple of the capacity, so that the next phase fills
  /// the ring from its first slot again. A queue drained every phase then
  /// keeps reusing the storage its first phases touched, instead of walking
  /// on into pages no phase wrote yet (each a page fault, on the shm
  /// backend in both processes) and splitting runs where it wraps. Both
  /// counters only grow, so every handle's cached counters stay below the
  /// true ones: its next push or pop costs at most one more A (and an R),
  /// and full and empty stay exact. Returns false, changing nothing, when
  /// the queue is not empty. Cost: local.
  bool local_nonatomic_rewind() {
    this->check_local("local_nonatomic_rewind");
    std::uint64_t* h = head().local();
    std::uint64_t* t = tail().local();
    if (*h != *t) return false;
    const std::uint64_t slot = *t % capacity_;
    if (slot != 0) *h = *t = *t + (capacity_ - slot);
    return true;
  }

  /// On the host's process, between phases (no push or pop running, as for
  /// local_nonatomic_pop), when the queue is empty: writes every slot of
  /// the ring once, so that no later push page-faults on its memory (a
  /// fresh ring's pushes otherwise fault on every 4 KiB page they first
  /// write, inside the push phase). Returns false, changing nothing, when
  /// the queue is not empty. Cost: local, capacity x sizeof(T) bytes written.
  bool local_nonatomic_touch() {
    this->check_local("local_nonatomic_touch");
    if (*head().local() != *tail().local()) return false;
    runs(0, capacity_, [](global_ptr<T> p, std::uint64_t, std::uint64_t count) {
      std::memset(static_cast<void*>(p.local()), 0, count * sizeof(T));
    });
    return true;
  }

  /// Any core, between phases: reads one word of every 4 KiB of the ring,
  /// so that this process's later pushes fault on none of its pages. Under
  /// shm another process's heap is mapped into this one a page at a time,
  /// on first access: a fresh ring's pushes would take those faults inside
  /// the push phase. (On the host's process the pages are its own:
  /// local_nonatomic_touch.) Blocking; cost: capacity x sizeof(T) / 4096 R.
  void prefault() const {
    this->check("prefault");
    const std::uint64_t per_page = std::max<std::uint64_t>(1, 4096 / sizeof(T));
    for (std::uint64_t i = 0; i < capacity_; i += per_page)
      (void)rget((data_ + static_cast<std::int64_t>(i)).template reinterpret<char>());
  }

  /// Elements pushed and not popped (2 reads, or one delegate on the
  /// delegate path; exact between phases).
  using base::size;

  /// Collective (every core, with its handle; nothing else running on the
  /// queue, pushers rflush()ed): the queue gets room for `capacity`
  /// elements, keeping its elements in order. Cost: B + a make + R(n) + W(n).
  using base::resize;
  /// Collective, as resize(): the queue moves to core `host`, keeping its
  /// elements in order. Cost: B + a make + R(n) + W(n).
  using base::migrate;
  /// The queue's name in messages: its kind, host and capacity.
  using base::describe;

  /// Frees the queue. Once, when no core uses it; this handle becomes
  /// invalid (copies do not know).
  using base::destroy;

 private:
  using base::capacity_;
  using base::data_;
  using base::host_;
  using base::path_;

  global_ptr<std::uint64_t> tail() const { return this->counter(0); }
  global_ptr<std::uint64_t> head() const { return this->counter(1); }

  // The delegate path's short runs, on the host (bcl/queue_path.hpp).
  shoal::detail::bcl_owned push_owned(const T* vals, std::uint64_t n) const {
    std::uint64_t& t = *tail().local();
    if (t + n > *head().local() + capacity_) return shoal::detail::bcl_owned::refused;
    shoal::detail::bcl_ring_copy_in(data_, capacity_, t, vals, n);
    t += n;
    return shoal::detail::bcl_owned::done;
  }
  shoal::detail::bcl_owned pop_owned(T* out, std::uint64_t n) const {
    std::uint64_t& h = *head().local();
    if (h + n > *tail().local()) return shoal::detail::bcl_owned::refused;
    shoal::detail::bcl_ring_copy_out(data_, capacity_, h, out, n);
    h += n;
    return shoal::detail::bcl_owned::done;
  }

  template <class F>
  void runs(std::uint64_t at, std::uint64_t n, const F& f) const {
    shoal::detail::bcl_ring_runs(data_, capacity_, at, n, f);
  }
  void transfer_out(std::uint64_t at, std::span<const T> vals) const {
    runs(at, vals.size(), [&](global_ptr<T> p, std::uint64_t from, std::uint64_t count) {
      rput(p, vals.data() + from, count);
    });
  }
  void transfer_in(std::uint64_t at, std::span<T> out) const {
    runs(at, out.size(), [&](global_ptr<T> p, std::uint64_t from, std::uint64_t count) {
      rget(p, out.data() + from, count);
    });
  }

  std::uint64_t head_cache_ = 0;  // a head seen earlier (only grows)
  std::uint64_t tail_cache_ = 0;  // a tail seen earlier (only grows within a pop phase)
};

/// fast_queue<T> for serialised T (std::string, std::vector<U>, a type with
/// a shoal::serializer): a fast_queue<serial_ptr> and an arena
/// (bcl/object_queue.hpp), under fast_queue's phases; local_nonatomic_pop
/// of one value, not of a span, and no local_nonatomic_drain.
template <serial_object T>
class fast_queue<T> : public object_queue<fast_queue<T>, fast_queue<serial_ptr>, T> {
 public:
  static constexpr const char* kind = "fast_queue";
};

}  // namespace shoal::bcl
