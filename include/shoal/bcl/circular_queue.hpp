// circular_queue<T>: BCL's CircularQueue (thesis section 5, tables 5.1 and
// 5.2): a ring buffer of T hosted on one core that any cores may push to
// and pop from AT THE SAME TIME. Besides the reserving counters (tail for
// pushes, head for pops) it keeps two publishing counters: tail_ready (the
// elements below it are written) and head_ready (the slots below it are
// read, so free for reuse). A push reserves, writes, and moves tail_ready
// over its run; a pop reserves, reads, and moves head_ready over its run.
//
//   auto q = shoal::bcl::circular_queue<std::uint64_t>::make(/*host core=*/3, /*capacity=*/1024);
//   q.push(x);                          // any core, any time
//   std::uint64_t v; if (q.pop(v)) ...  // any core, any time
//   q.push(x, shoal::bcl::queue_promise::push);   // only pushes run now: cheaper publish
//   q.destroy();                        // once, when no core uses it any more
//
// Promises (queue_promise, per call): which operations may run at the same
// time as this one, from any core.
//   push_pop  (default) pushes and pops. The publishing counter is moved by
//             compare-and-swap from the start of this call's run, so it
//             waits (yielding) until every earlier run is published: a pop
//             never sees an element before it is written, a push never
//             overwrites one before it is read.
//   push      (on a push) only pushes run until a barrier: tail_ready is
//             moved with fetch_add (contention-free; it may count a later
//             run before an earlier one is written, harmless when nobody pops).
//   pop       (on a pop) only pops run: head_ready is moved with fetch_add.
// A promise that is broken (a pop during a push-promised phase) is not
// detected and may pop an element before it is written.
//
// Full and empty are reported, never undefined: push returns false,
// pushing nothing, when the run does not fit beside the elements not yet
// read (below head_ready + capacity); pop returns false, popping nothing,
// when fewer than n elements are published (below tail_ready). Both are
// judged at one moment; a run being written or read counts as occupied.
//
// Layout: one global_alloc; the host core's part holds the four counters
// (u64, counting every element ever pushed or popped; slot = counter %
// capacity) in its first 64 bytes, then the elements. A handle is 64
// bytes (pointers, capacity, four cached counters): copy it to every core
// that uses the queue (through memory: it exceeds on_all_cores' 48 bytes).
//
// Costs (table 5.1; A, R, W, F = rflush: bench/results/one_sided.txt):
//   push(v), push(span of n)   2A + W(n) + F   (+ A per other push since this handle's last,
//                                               + R when the cached head_ready says full,
//                                               + waits for earlier runs to publish)
//   pop(v), pop(out, n)        2A + R(n)       (same extras, mirrored)
//   local_nonatomic_pop(v)     l               (on the host's process, nothing concurrent)
//   size()                     2R
//   make, destroy              a global_alloc / global_free; make also a delegate to the host
//   resize(n), migrate(core)  B + a make + R(n) + W(n) (collective; bcl/ring.hpp)
//
// Path (bcl/path.hpp, SHOAL_BCL_PATH; bcl/queue_path.hpp): push, pop and
// size run one-sided (the costs above) or as delegates to the host, which
// moves the counters with CPU instructions: a run of up to 128 bytes of
// elements in one delegate, D (busy, retried after a yield, while a longer run is unpublished); a
// longer one reserved by one delegate, the elements moved one-sided: D + W(n) + F + D / D + R(n) +
// D. make() picks for the queue (every copy of the handle follows it): forced, or under auto
// one-sided when 4A + W + R + F (a push and a pop) is below 2D. path() and --verbose say what it
// picked. Full and empty are judged alike on both paths. The promises mean the same there and
// change nothing in its cost.
//
// T that is not trivially copyable (std::string, std::vector<U>, a type
// with a shoal::serializer): bcl/object_queue.hpp (specialised below).
//
// Errors: a capacity of 0, a host core outside the job, n larger than the
// capacity, a push with promise pop (or a pop with promise push),
// local_nonatomic_pop off the host's process and use of a destroyed handle
// end the job naming the queue (its host and capacity) and the cause.
#pragma once

#include "shoal/bcl/object.hpp"
#include "shoal/bcl/object_queue.hpp"
#include "shoal/bcl/path.hpp"
#include "shoal/bcl/queue_path.hpp"
#include "shoal/bcl/ring.hpp"
#include "shoal/bcl/ring_queue.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace shoal::bcl {

/// What may run at the same time as a queue operation (see circular_queue).
enum class queue_promise { push_pop, push, pop };

// The primary template takes trivially copyable T (stored in the ring);
// object_queue.hpp specialises it for serialised T (bcl/object.hpp).
template <class T>
requires storable<T>
class circular_queue : public queue_detail::ring_queue<circular_queue<T>, T> {
  static_assert(alignof(T) <= 64, "circular_queue: an element aligned to more than 64 bytes");
  using base = queue_detail::ring_queue<circular_queue<T>, T>;
  friend base;
  // What ring_queue reads: the name in messages, the counters size() subtracts.
  static constexpr const char* kind = "circular_queue";
  static constexpr int tail_i = 0, tail_ready_i = 1, head_i = 2, head_ready_i = 3;
  static constexpr int size_top = tail_ready_i, size_bottom = head_i;

 public:
  /// A handle to nothing (every operation but valid() ends the job).
  circular_queue() = default;

  /// Makes a queue of `capacity` elements hosted on core `host`. Any task;
  /// one allocation (a round trip to rank 0) and one delegate to the host.
  static circular_queue make(int host, std::uint64_t capacity) {
    typename base::made m = base::allocate(host, capacity);
    const std::uint64_t zeros[4] = {};
    rput(m.mem.words, zeros, 4);
    rflush();
    m.q.choose_path(m, "push+pop", "4A+W+R+F", 2,
                    [](const op_costs& c) { return 4 * c.A + c.W + c.R + c.F; });
    return m.q;
  }

  using base::capacity;
  using base::host;
  using base::valid;
  /// How push, pop and size reach the queue (bcl/path.hpp).
  using base::path;

  /// Appends v; false (nothing pushed) when full.
  bool push(const T& v, queue_promise p = queue_promise::push_pop) {
    return push(std::span<const T>(&v, 1), p);
  }

  /// Appends every value of `vals` in order, contiguously; false (nothing
  /// pushed) when they do not fit. Returns once they are published.
  bool push(std::span<const T> vals, queue_promise p = queue_promise::push_pop) {
    check("push", p == queue_promise::pop);
    const std::uint64_t n = vals.size();
    if (n == 0) return true;
    this->check_count("push", n);
    const bool delegated = path_ == bcl::path::delegate;
    if (this->short_run(n)) return this->short_push(vals);
    std::uint64_t at = 0;
    if (!shoal::detail::bcl_reserve_run(host_, delegated, counter(tail_i), tail_cache_,
                                        counter(head_ready_i), head_ready_cache_, capacity_, n, at))
      return false;
    shoal::detail::bcl_ring_runs(data_, capacity_, at, n,
                                 [&](global_ptr<T> d, std::uint64_t from, std::uint64_t count) {
                                   rput(d, vals.data() + from, count);
                                 });
    rflush();  // the elements land before tail_ready covers them
    if (delegated)
      shoal::detail::bcl_publish_at_host(host_, counter(tail_ready_i), at, n);
    else
      publish(counter(tail_ready_i), at, n, p == queue_promise::push);
    return true;
  }

  /// Takes the oldest element into v; false (nothing popped) when empty.
  bool pop(T& v, queue_promise p = queue_promise::push_pop) { return pop(std::span<T>(&v, 1), p); }

  /// Takes the out.size() oldest elements, in order; false (nothing
  /// popped) when fewer are published.
  bool pop(std::span<T> out, queue_promise p = queue_promise::push_pop) {
    check("pop", p == queue_promise::push);
    const std::uint64_t n = out.size();
    if (n == 0) return true;
    this->check_count("pop", n);
    const bool delegated = path_ == bcl::path::delegate;
    if (this->short_run(n)) return this->short_pop(out);
    std::uint64_t at = 0;
    if (!shoal::detail::bcl_reserve_run(host_, delegated, counter(head_i), head_cache_,
                                        counter(tail_ready_i), tail_ready_cache_, 0, n, at))
      return false;
    shoal::detail::bcl_ring_runs(data_, capacity_, at, n,
                                 [&](global_ptr<T> d, std::uint64_t from, std::uint64_t count) {
                                   rget(d, out.data() + from, count);
                                 });
    if (delegated)
      shoal::detail::bcl_publish_at_host(host_, counter(head_ready_i), at, n);
    else
      publish(counter(head_ready_i), at, n, p == queue_promise::pop);
    return true;
  }

  /// pop() with plain loads and stores, for a task on the host's process
  /// while no other core pushes or pops. Cost: local.
  bool local_nonatomic_pop(T& v) {
    this->check_local("local_nonatomic_pop");
    std::uint64_t* c = counter(0).local();
    if (c[head_i] == c[tail_ready_i]) return false;
    v = *(data_ + static_cast<std::int64_t>(c[head_i] % capacity_)).local();
    c[head_ready_i] = ++c[head_i];
    return true;
  }

  /// Elements published and not reserved by a pop (2 reads, or one
  /// delegate on the delegate path; exact when nothing runs concurrently).
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
  using base::counter;
  using base::data_;
  using base::host_;
  using base::name;
  using base::path_;

  // Moves a publishing counter over [at, at + n). In order (CAS from `at`,
  // waiting for the runs before it) unless the promise allows fetch_add.
  static void publish(global_ptr<std::uint64_t> ready, std::uint64_t at, std::uint64_t n,
                      bool unordered) {
    if (unordered) {
      fetch_add(ready, n);
      return;
    }
    while (compare_and_swap(ready, at, at + n) != at) yield();
  }

  // The delegate path's short runs, on the host (bcl/queue_path.hpp): busy
  // while a long run has reserved and not yet published (its publish must
  // come first, and a handler cannot wait for it).
  shoal::detail::bcl_owned push_owned(const T* vals, std::uint64_t n) const {
    std::uint64_t* c = counter(0).local();
    if (c[tail_i] != c[tail_ready_i]) return shoal::detail::bcl_owned::busy;
    if (c[tail_i] + n > c[head_ready_i] + capacity_) return shoal::detail::bcl_owned::refused;
    shoal::detail::bcl_ring_copy_in(data_, capacity_, c[tail_i], vals, n);
    c[tail_ready_i] = c[tail_i] += n;
    return shoal::detail::bcl_owned::done;
  }
  shoal::detail::bcl_owned pop_owned(T* out, std::uint64_t n) const {
    std::uint64_t* c = counter(0).local();
    if (c[head_i] != c[head_ready_i]) return shoal::detail::bcl_owned::busy;
    if (c[head_i] + n > c[tail_ready_i]) return shoal::detail::bcl_owned::refused;
    shoal::detail::bcl_ring_copy_out(data_, capacity_, c[head_i], out, n);
    c[head_ready_i] = c[head_i] += n;
    return shoal::detail::bcl_owned::done;
  }

  void check(const char* op, bool wrong_promise) const {
    base::check(op);
    if (wrong_promise)
      shoal::detail::fatal_user(fmt::format(
          "{}: {} with promise {}: a promise names what runs at the same time and must allow "
          "this call itself",
          name(), op, op[1] == 'u' ? "pop" : "push"));
  }

  std::uint64_t tail_cache_ = 0;  // guesses of the counters, only growing
  std::uint64_t head_ready_cache_ = 0;
  std::uint64_t head_cache_ = 0;
  std::uint64_t tail_ready_cache_ = 0;
};

/// circular_queue<T> for serialised T: a circular_queue<serial_ptr> and an
/// arena (bcl/object_queue.hpp); push and pop take the promises above.
template <serial_object T>
class circular_queue<T> : public object_queue<circular_queue<T>, circular_queue<serial_ptr>, T> {
 public:
  static constexpr const char* kind = "circular_queue";
};

}  // namespace shoal::bcl
