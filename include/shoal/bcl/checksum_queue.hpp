// checksum_queue<T>: BCL's ChecksumQueue (thesis section 5): a ring buffer
// of T hosted on one core that any cores may push to and pop from at the
// same time, like circular_queue, but without its second, ordered atomic:
// each slot carries a checksum of its value, and a popper knows an element
// is fully written when the checksum matches. No core waits for another's
// publish (the cause of circular_queue's compare-and-swap retries under
// contention).
//
//   auto q = shoal::bcl::checksum_queue<std::uint64_t>::make(/*host core=*/3, /*capacity=*/1024);
//   q.push(x);                          // any core, any time
//   std::uint64_t v; if (q.pop(v)) ...  // any core, any time
//   q.destroy();                        // once, when no core uses it any more
//
// Slots are {T value; u64 check}. The check names the slot's state and
// round (round = counter / capacity): an even check 2r means "free for the
// push of round r" (zeroed memory: free for round 0); an odd one is the
// checksum of the value for the counter that wrote it (a hash of the
// value's bytes seeded with the counter, low bit set). A push reserves
// counters on the tail (compare-and-swap, as fast_queue), waits until its
// slots are free for its round, and writes value and check in one put. A
// pop reserves counters on the head, re-reads its slots until every check
// matches its value and counter, takes the values, and marks the slots free
// for the next round (a put of each check word alone: one aligned word,
// which a push waiting on it sees whole).
//
// Differences from BCL, and why. BCL's checksum changes only with the
// round's parity (hashed twice on odd rounds), a push reuses a slot once a
// pop has reserved it, and its costs are A + W per push and A + R per pop.
// Then a pop two rounds behind its slot's previous reader passes that
// reader's element (same parity) as its own, and two pushers a round apart
// can both write a slot whose popper is slow: an element is popped twice
// and another lost. (With a parity check and a plain free mark, the 3 x 2
// rma run of tests/mpi/bcl_job.cpp popped wrong values.) Here every check
// carries the whole counter, so a push also reads its slots (R) and a pop
// also writes them (W), and both flush (F) so that a core waiting on a
// slot sees it change.
//
// A hang, found and fixed: concurrent pushes and pops hung at random (1 run
// in 10 of the 2 x 2 shm test, 1 in 38 at 1 x 4), a slot holding an element
// and check again after its pop had read it and marked it free. Cause: the
// push's put of {value, check} went through memcpy, which in glibc stores
// small sizes as overlapping pieces (a 16-byte slot: the same 16 bytes
// twice), so the pop's free mark, landing between the two stores, was
// overwritten by the second. Direct and shm puts now store every aligned
// word exactly once (src/memory/one_sided_copy.hpp). Not changed: rma
// puts (MPI's copy at the target) and am puts (run in the host's handlers,
// one at a time, as the pops' marks are). Concurrent pushes and pops are
// tested again at 1 process (test_bcl_queues.cpp) and at 1 x 2, 2 x 2 and
// 3 x 2 under shm, rma and am (tests/mpi/bcl_job.cpp); after the fix, 300
// repeats at 1 x 4 and 100 runs of the 2 x 2 shm job passed.
//
// Full and empty are reported, never undefined: push returns false,
// pushing nothing, when the run does not fit beside the elements not yet
// reserved by pops; pop returns false, popping nothing, when fewer than n
// elements are reserved by pushes. A pop that was granted elements still
// being written waits for them (yielding); so does a push granted slots
// still being read.
//
// Layout: one global_alloc; the host's part holds the tail and head (u64,
// counting every element ever pushed or popped) in its first 64 bytes, then
// the slots. A handle is 48 bytes: copy it to every core that uses it.
//
// Costs (table 5.1 style; c = 8 / sizeof(T) rounded up: the checksum's share):
//   push(v), push(span of n)   A + R(n(1 + c)) + W(n(1 + c)) + F   (+ A per other push since
//                                                              this handle's last, + R when
//                                                              the cached head says full)
//   pop(v), pop(out, n)        A + R(n(1 + c)) + n W(8 bytes) + F   (re-reads while a push
//                                                              still writes)
//   size()                     2R
//   make, destroy              a global_alloc / global_free; make also a delegate to the host
//   resize(n), migrate(core)  B + a make + R(n) + W(n) (collective; bcl/ring.hpp)
// Spans are moved 16 slots at a time (a buffer on the stack). Not
// implemented: local_nonatomic_pop.
//
// Path (bcl/path.hpp, SHOAL_BCL_PATH; bcl/queue_path.hpp): push, pop and
// size run one-sided (the costs above) or as delegates to the host, which
// moves the counters with CPU instructions: a run of up to 128 bytes of
// elements in one delegate, D (busy, retried after a yield, while a longer run still writes or
// reads one of its slots); a longer one reserved by one delegate,
// the elements moved one-sided: D + W(n) + F (checks included) / D + R(n) + n W(8 bytes) + F.
// make() picks for the queue (every copy of the handle follows it): forced, or under auto one-sided
// when 2A + 2R + 2W + 2F (a push and a pop) is below 2D. path() and --verbose say what it picked.
// Full and empty are judged alike on both paths.
//
// T that is not trivially copyable: bcl/object_queue.hpp (specialised
// below).
//
// Errors: a capacity of 0, a host core outside the job, n larger than the
// capacity and use of a destroyed handle end the job naming the queue (its
// host and capacity) and the cause.
#pragma once

#include "shoal/bcl/hash_bytes.hpp"
#include "shoal/bcl/object.hpp"
#include "shoal/bcl/object_queue.hpp"
#include "shoal/bcl/path.hpp"
#include "shoal/bcl/queue_path.hpp"
#include "shoal/bcl/ring.hpp"
#include "shoal/bcl/ring_queue.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace shoal::bcl {

namespace queue_detail {
/// A slot of checksum_queue<T>'s ring.
template <class T>
struct checksum_slot {
  T value;
  std::uint64_t check;  // even 2r: free for round r; odd: checksum(value, counter)
};
}  // namespace queue_detail

// The primary template takes trivially copyable T (stored in the slots);
// the specialisation at the end takes serialised T (bcl/object_queue.hpp).
template <class T>
requires storable<T>
class checksum_queue
    : public queue_detail::ring_queue<checksum_queue<T>, T, queue_detail::checksum_slot<T>> {
  static_assert(alignof(T) <= 8, "checksum_queue: an element aligned to more than 8 bytes");
  using base = queue_detail::ring_queue<checksum_queue<T>, T, queue_detail::checksum_slot<T>>;
  friend base;
  // What ring_queue reads: the name in messages, the counters size() subtracts.
  static constexpr const char* kind = "checksum_queue";
  static constexpr int size_top = 0, size_bottom = 1;  // tail, head

 public:
  using slot = queue_detail::checksum_slot<T>;

  /// A handle to nothing (every operation but valid() ends the job).
  checksum_queue() = default;

  /// Makes a queue of `capacity` elements hosted on core `host`. Any task;
  /// one allocation (a round trip to rank 0) and one delegate to the host,
  /// which clears the slots.
  static checksum_queue make(int host, std::uint64_t capacity) {
    typename base::made m = base::allocate(host, capacity);
    const std::uint64_t words = 8 + (capacity * sizeof(slot) + 7) / 8;
    const global_ptr<std::uint64_t> all = m.mem.words;
    delegate::call(host, [all, words] { std::memset(all.local(), 0, words * 8); });
    m.q.choose_path(m, "push+pop", "2A+2R+2W+2F", 2,
                    [](const op_costs& c) { return 2 * (c.A + c.R + c.W + c.F); });
    return m.q;
  }

  using base::capacity;
  using base::host;
  using base::valid;
  /// How push, pop and size reach the queue (bcl/path.hpp).
  using base::path;

  /// Appends v; false (nothing pushed) when full.
  bool push(const T& v) { return push(std::span<const T>(&v, 1)); }

  /// Appends every value of `vals` in order, contiguously; false (nothing
  /// pushed) when they do not fit. Returns once they are remotely complete.
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
    for (std::uint64_t done = 0; done < n; done += chunk) {
      const std::uint64_t m = std::min(chunk, n - done);
      slot buf[chunk];
      wait_for(at + done, m, buf, [this](const slot& s, std::uint64_t counter) {
        return s.check == free_for(counter);
      });
      for (std::uint64_t i = 0; i < m; ++i) {
        buf[i].value = vals[done + i];
        // Of the bytes that travel (padding of T included), as the popper sees them.
        buf[i].check = checksum(buf[i].value, at + done + i);
      }
      transfer(at + done, m, buf, true);
    }
    rflush();  // poppers waiting on these slots see them written
    return true;
  }

  /// Takes the oldest element into v; false (nothing popped) when empty.
  bool pop(T& v) { return pop(std::span<T>(&v, 1)); }

  /// Takes the out.size() oldest elements, in order; false (nothing
  /// popped) when fewer were pushed.
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
    for (std::uint64_t done = 0; done < n; done += chunk) {
      const std::uint64_t m = std::min(chunk, n - done);
      slot buf[chunk];
      wait_for(at + done, m, buf, [this](const slot& s, std::uint64_t counter) {
        return s.check == checksum(s.value, counter);
      });
      for (std::uint64_t i = 0; i < m; ++i) {
        out[done + i] = buf[i].value;
        // Only the check word: a copy of the whole slot could land its value
        // after the next round's push, which waits for this mark, wrote its own.
        rput(check_word(at + done + i), free_for(at + done + i + capacity_));
      }
    }
    rflush();  // pushers waiting on these slots see them free
    return true;
  }

  /// Elements reserved by pushes and not by pops (2 reads, or one delegate
  /// on the delegate path; exact when nothing runs concurrently).
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

  static constexpr std::uint64_t chunk = 16;

  global_ptr<std::uint64_t> check_word(std::uint64_t counter) const {
    const global_ptr<slot> at = data_ + static_cast<std::int64_t>(counter % capacity_);
    return (at.template reinterpret<std::byte>() + static_cast<std::int64_t>(offsetof(slot, check)))
        .template reinterpret<std::uint64_t>();
  }
  // Odd: the value's bytes hashed with the counter as seed.
  static std::uint64_t checksum(const T& v, std::uint64_t counter) noexcept {
    return shoal::detail::bcl_hash_bytes(&v, sizeof v, counter + 1) | 1;
  }
  // Even: the mark of a slot that the push of `counter` may fill.
  std::uint64_t free_for(std::uint64_t counter) const noexcept { return 2 * (counter / capacity_); }
  // Reads slots of counters at .. at + m - 1 into buf until ok(slot,
  // counter) holds for each, yielding between tries.
  template <class Ok>
  void wait_for(std::uint64_t at, std::uint64_t m, slot* buf, const Ok& ok) const {
    for (;;) {
      transfer(at, m, buf, false);
      bool all = true;
      for (std::uint64_t i = 0; i < m && all; ++i) all = ok(buf[i], at + i);
      if (all) return;
      yield();
    }
  }
  void transfer(std::uint64_t at, std::uint64_t m, slot* buf, bool out) const {
    shoal::detail::bcl_ring_runs(data_, capacity_, at, m,
                                 [&](global_ptr<slot> d, std::uint64_t from, std::uint64_t count) {
                                   if (out)
                                     rput(d, buf + from, count);
                                   else
                                     rget(d, buf + from, count);
                                 });
  }

  global_ptr<std::uint64_t> tail() const { return this->counter(0); }
  global_ptr<std::uint64_t> head() const { return this->counter(1); }

  // The delegate path's short runs, on the host (bcl/queue_path.hpp): the
  // slots' checks as a pop or push on the one-sided path reads them, busy
  // while a long run still writes (reads) a slot of this run.
  slot* slot_at(std::uint64_t counter) const {
    return (data_ + static_cast<std::int64_t>(counter % capacity_)).local();
  }
  shoal::detail::bcl_owned push_owned(const T* vals, std::uint64_t n) const {
    std::uint64_t& t = *tail().local();
    if (t + n > *head().local() + capacity_) return shoal::detail::bcl_owned::refused;
    for (std::uint64_t i = 0; i < n; ++i)
      if (load_check(t + i) != free_for(t + i)) return shoal::detail::bcl_owned::busy;
    for (std::uint64_t i = 0; i < n; ++i) {
      slot s;
      std::memset(static_cast<void*>(&s), 0, sizeof s);
      std::memcpy(static_cast<void*>(&s.value), vals + i, sizeof(T));
      s.check = checksum(s.value, t + i);
      std::memcpy(static_cast<void*>(slot_at(t + i)), &s, sizeof s);
    }
    t += n;
    return shoal::detail::bcl_owned::done;
  }
  shoal::detail::bcl_owned pop_owned(T* out, std::uint64_t n) const {
    std::uint64_t& h = *head().local();
    if (h + n > *tail().local()) return shoal::detail::bcl_owned::refused;
    for (std::uint64_t i = 0; i < n; ++i) {
      slot s;
      std::memcpy(static_cast<void*>(&s), slot_at(h + i), sizeof s);
      if (load_check(h + i) != s.check || s.check != checksum(s.value, h + i))
        return shoal::detail::bcl_owned::busy;
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      std::memcpy(static_cast<void*>(out + i), &slot_at(h + i)->value, sizeof(T));
      std::atomic_ref<std::uint64_t>(*check_word(h + i).local())
          .store(free_for(h + i + capacity_), std::memory_order_release);
    }
    h += n;
    return shoal::detail::bcl_owned::done;
  }
  std::uint64_t load_check(std::uint64_t counter) const {
    return std::atomic_ref<std::uint64_t>(*check_word(counter).local())
        .load(std::memory_order_acquire);
  }

  std::uint64_t head_cache_ = 0;  // guesses of the counters, only growing
  std::uint64_t tail_cache_ = 0;
};

/// checksum_queue<T> for serialised T (std::string, std::vector<U>, a type
/// with a shoal::serializer): a checksum_queue<serial_ptr> (the checksum
/// covers the pointer; the bytes are complete before it is pushed) and an
/// arena (bcl/object_queue.hpp).
template <serial_object T>
class checksum_queue<T> : public object_queue<checksum_queue<T>, checksum_queue<serial_ptr>, T> {
 public:
  static constexpr const char* kind = "checksum_queue";
};

}  // namespace shoal::bcl
