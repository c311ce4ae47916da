// Checks of shoal::bcl::circular_queue and checksum_queue (bcl/), shared by
// test_bcl_queues.cpp (one process) and mpi/bcl_job.cpp (every backend,
// several processes). Each returns the number of wrong values it saw (0:
// passed); call from the root task.
#pragma once

#include "shoal/bcl/checksum_queue.hpp"
#include "shoal/bcl/circular_queue.hpp"
#include "shoal/bcl/fast_queue.hpp"
#include "shoal/shoal.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace bcl_queue_checks {

using u64 = std::uint64_t;
using circular = shoal::bcl::circular_queue<u64>;
using checksum = shoal::bcl::checksum_queue<u64>;
using fast = shoal::bcl::fast_queue<u64>;
using shoal::bcl::queue_promise;
static_assert(sizeof(circular) <= 64 && sizeof(checksum) <= 64);

/// A handle travels through core 0's block (words[0..8)): on_all_cores
/// closures hold 48 bytes.
template <class Q>
void share(const Q& q, shoal::global_ptr<u64> words) {
  u64 raw[8] = {};
  std::memcpy(raw, &q, sizeof q);
  shoal::rput(words, raw, 8);
  shoal::rflush();
}
template <class Q>
Q fetch(shoal::global_ptr<u64> words) {
  u64 raw[8];
  shoal::rget(words, raw, 8);
  Q q;
  std::memcpy(&q, raw, sizeof q);
  return q;
}

inline u64 pushed_value(u64 core, u64 i) { return core * 1000003 + i * 7 + 1; }

// Per-core tallies of what was popped, added to sums[0..3) on core 0.
struct tally {
  u64 count = 0, sum = 0, squares = 0;
  void take(u64 v) {
    ++count;
    sum += v;
    squares += v * v;
  }
  void add_to(shoal::global_ptr<u64> sums) const {
    shoal::fetch_add(sums, count);
    shoal::fetch_add(sums + 1, sum);
    shoal::fetch_add(sums + 2, squares);
  }
};

// The job's expected tally, compared with sums[0..3).
inline u64 compare(shoal::global_ptr<u64> sums, u64 per) {
  tally want;
  for (int c = 0; c < shoal::cores(); ++c)
    for (u64 i = 0; i < per; ++i) want.take(pushed_value(static_cast<u64>(c), i));
  u64 wrong = 0;
  if (shoal::rget(sums) != want.count) ++wrong;
  if (shoal::rget(sums + 1) != want.sum) ++wrong;
  if (shoal::rget(sums + 2) != want.squares) ++wrong;
  return wrong;
}

inline shoal::global_ptr<u64> zeroed(int words) {
  const auto p = shoal::global_alloc<u64>(8 * shoal::cores());
  for (int i = 0; i < words; ++i) shoal::rput(p + i, u64{0});
  shoal::rflush();
  return p;
}

/// Every core pushes `per` values (singles and runs of 2 and 3, and every
/// fourth run `long_run` values when that is not 0) into one small queue on
/// the last core while every core also pops (singles and pairs, and every
/// third pop `long_run` at once when given); a push that finds it full pops
/// instead, then retries. At the end every value was popped exactly once
/// (count, sum, sum of squares). Runs longer than a delegate's batch
/// (bcl/queue_path.hpp: 16 u64) take the long form on the delegate path.
template <class Q>
u64 concurrent_push_pop(u64 per, u64 capacity, u64 long_run = 0) {
  const int n = shoal::cores();
  const auto words = zeroed(0);
  const auto sums = zeroed(8);  // count, sum, squares, popped so far
  Q q = Q::make(n - 1, capacity);
  share(q, words);
  shoal::on_all_cores([words, sums, per, long_run] {
    Q mine = fetch<Q>(words);
    const auto me = static_cast<u64>(shoal::mycore());
    const u64 total = per * static_cast<u64>(shoal::cores());
    tally t;
    std::vector<u64> many(std::max<u64>(long_run, 3)), got(long_run);
    u64 pops = 0;
    const auto pop_some = [&](bool pair) {
      u64 two[2];
      if (long_run > 0 && ++pops % 3 == 0 && mine.pop(std::span<u64>(got))) {
        for (const u64 v : got) t.take(v);
        shoal::fetch_add(sums + 3, long_run);
        return true;
      }
      if (pair && mine.pop(std::span<u64>(two, 2))) {
        t.take(two[0]);
        t.take(two[1]);
        shoal::fetch_add(sums + 3, u64{2});
        return true;
      }
      if (mine.pop(two[0])) {
        t.take(two[0]);
        shoal::fetch_add(sums + 3, u64{1});
        return true;
      }
      return false;
    };
    for (u64 j = 0, runs = 0; j < per; ++runs) {
      const u64 g = std::min<u64>(long_run > 0 && runs % 4 == 3 ? long_run : 1 + j % 3, per - j);
      for (u64 i = 0; i < g; ++i) many[i] = pushed_value(me, j + i);
      while (!mine.push(std::span<const u64>(many.data(), g)))
        if (!pop_some(false)) shoal::yield();
      j += g;
      pop_some(j % 2 == 0);
    }
    while (shoal::rget(sums + 3) < total)
      if (!pop_some(false)) shoal::yield();
    t.add_to(sums);
  });
  u64 wrong = compare(sums, per);
  if (shoal::rget(sums + 3) != per * static_cast<u64>(n)) ++wrong;
  if (q.size() != 0) ++wrong;
  q.destroy();
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// circular_queue's promises: a push phase promised push (fetch_add
/// publish) from every core, rflush and barrier, then a pop phase promised
/// pop (the second time: local_nonatomic_pop on the host); each value
/// popped exactly once, twice over (the counters go on).
inline u64 phases_with_promises(u64 per) {
  const int n = shoal::cores();
  const auto words = zeroed(0);
  const auto sums = zeroed(8);
  circular q = circular::make(n - 1, per * static_cast<u64>(n));
  share(q, words);
  shoal::on_all_cores([words, sums, per] {
    circular mine = fetch<circular>(words);
    const auto me = static_cast<u64>(shoal::mycore());
    for (int round = 0; round < 2; ++round) {
      for (u64 i = 0; i < per; ++i)
        if (!mine.push(pushed_value(me, i), queue_promise::push))
          shoal::fetch_add(sums + 4, u64{1});  // full: must not happen
      shoal::rflush();
      shoal::barrier();
      tally t;
      u64 v = 0;
      if (round == 0) {
        while (mine.pop(v, queue_promise::pop)) t.take(v);
      } else if (static_cast<int>(me) == mine.host()) {
        while (mine.local_nonatomic_pop(v)) t.take(v);  // the host alone
      }
      t.add_to(sums);
      shoal::barrier();
    }
  });
  u64 wrong = 0;
  // Two rounds: every count and sum doubled.
  const tally once = [&] {
    tally w;
    for (int c = 0; c < n; ++c)
      for (u64 i = 0; i < per; ++i) w.take(pushed_value(static_cast<u64>(c), i));
    return w;
  }();
  if (shoal::rget(sums) != 2 * once.count) ++wrong;
  if (shoal::rget(sums + 1) != 2 * once.sum) ++wrong;
  if (shoal::rget(sums + 2) != 2 * once.squares) ++wrong;
  if (shoal::rget(sums + 4) != 0) ++wrong;
  q.destroy();
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// Full and empty are reported and push nothing / pop nothing; values come
/// out in order, also across the wrap of the ring.
template <class Q>
u64 full_empty_and_wrap() {
  Q q = Q::make(shoal::cores() - 1, 10);
  u64 wrong = 0;
  for (u64 i = 0; i < 10; ++i)
    if (!q.push(i)) ++wrong;
  if (q.push(u64{99})) ++wrong;  // full
  if (q.size() != 10) ++wrong;
  u64 v = 0;
  for (u64 i = 0; i < 7; ++i)
    if (!q.pop(v) || v != i) ++wrong;
  std::vector<u64> eight = {20, 21, 22, 23, 24, 25, 26, 27};
  if (q.push(std::span<const u64>(eight))) ++wrong;  // 7 free
  if (!q.push(std::span<const u64>(eight.data(), 7))) ++wrong;
  if (q.size() != 10) ++wrong;
  std::vector<u64> out(10);
  if (q.pop(std::span<u64>(out.data(), 10))) {
    const std::vector<u64> want = {7, 8, 9, 20, 21, 22, 23, 24, 25, 26};
    if (out != want) ++wrong;
  } else {
    ++wrong;
  }
  if (q.pop(v)) ++wrong;  // empty
  if (q.pop(std::span<u64>(out.data(), 2))) ++wrong;
  // Many rounds of the ring one element at a time (odd and even rounds).
  for (u64 i = 0; i < 45; ++i)
    if (!q.push(i * 3) || !q.pop(v) || v != i * 3) ++wrong;
  if (q.size() != 0) ++wrong;
  q.destroy();
  if (q.valid()) ++wrong;
  return wrong;
}

/// Full and empty with runs longer than a delegate's batch (20 u64; a
/// single core, a pusher's rflush before each pop as fast_queue's phases
/// ask): room and contents are judged exactly, in order across the wrap.
template <class Q>
u64 long_runs_full_empty() {
  Q q = Q::make(shoal::cores() - 1, 40);
  u64 wrong = 0;
  std::vector<u64> in(40), out(40);
  const auto push = [&](u64 from, u64 n) {
    for (u64 i = 0; i < n; ++i) in[i] = from + i;
    const bool ok = q.push(std::span<const u64>(in.data(), n));
    shoal::rflush();
    return ok;
  };
  const auto pop_is = [&](u64 from, u64 n) {
    if (!q.pop(std::span<u64>(out.data(), n))) return false;
    for (u64 i = 0; i < n; ++i)
      if (out[i] != from + i) return false;
    return true;
  };
  if (!push(100, 30)) ++wrong;
  if (push(200, 20)) ++wrong;  // 10 free
  if (q.size() != 30) ++wrong;
  if (q.pop(std::span<u64>(out.data(), 31))) ++wrong;  // 30 there
  if (!pop_is(100, 25)) ++wrong;
  if (!push(300, 35)) ++wrong;  // wraps: 5 + 35 = 40, full
  if (q.push(u64{7})) ++wrong;
  if (!pop_is(125, 5) || !pop_is(300, 35)) ++wrong;
  u64 v = 0;
  if (q.pop(v) || q.size() != 0) ++wrong;  // empty
  q.destroy();
  return wrong;
}

/// fast_queue's phases with every kind of run: every core pushes `per`
/// values (singles, and runs of `long_run`) into a queue on the last core
/// that holds exactly all of them, so one more push is refused; after the
/// barrier every core pops (singles and runs of `long_run`) until empty.
/// Each value exactly once.
inline u64 fast_phases(u64 per, u64 long_run) {
  const int n = shoal::cores();
  const auto words = zeroed(0);
  const auto sums = zeroed(8);  // count, sum, squares, -, wrong
  fast q = fast::make(n - 1, per * static_cast<u64>(n));
  share(q, words);
  shoal::on_all_cores([words, sums, per, long_run] {
    fast mine = fetch<fast>(words);
    const auto me = static_cast<u64>(shoal::mycore());
    u64 wrong = 0;
    std::vector<u64> run(long_run);
    for (u64 j = 0, runs = 0; j < per; ++runs) {
      const u64 g = std::min<u64>(runs % 2 == 1 ? long_run : 1, per - j);
      for (u64 i = 0; i < g; ++i) run[i] = pushed_value(me, j + i);
      if (!mine.push(std::span<const u64>(run.data(), g))) ++wrong;
      j += g;
    }
    shoal::rflush();
    shoal::barrier();
    if (mine.push(u64{1})) ++wrong;  // full
    shoal::barrier();
    tally t;
    for (bool more = true; more;) {
      more = false;
      if (mine.pop(std::span<u64>(run.data(), long_run))) {
        for (const u64 v : run) t.take(v);
        more = true;
      }
      u64 v = 0;
      if (mine.pop(v)) {
        t.take(v);
        more = true;
      }
    }
    t.add_to(sums);
    shoal::fetch_add(sums + 4, wrong);
  });
  u64 wrong = compare(sums, per) + shoal::rget(sums + 4);
  if (q.size() != 0) ++wrong;
  q.destroy();
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// 1 for each queue kind whose fresh queue did not take path `want`.
inline u64 queue_paths_are(shoal::bcl::path want) {
  fast f = fast::make(0, 4);
  circular c = circular::make(0, 4);
  checksum k = checksum::make(0, 4);
  const u64 wrong = (f.path() != want) + (c.path() != want) + (k.path() != want);
  f.destroy();
  c.destroy();
  k.destroy();
  return wrong;
}

/// Collective resize and migrate: every core pushes 2 values into a queue
/// of 2n on the last core (full: one more is refused), resize to 4n, 2
/// more each (fit exactly), migrate to core 0; then every core pops until
/// empty: each value exactly once, the handle names the new host and
/// capacity on every core.
template <class Q>
u64 resize_and_migrate() {
  const int n = shoal::cores();
  const auto words = zeroed(0);
  const auto sums = zeroed(8);  // count, sum, squares, -, wrong
  const u64 cap = 2 * static_cast<u64>(n);
  Q q = Q::make(n - 1, cap);
  share(q, words);
  shoal::on_all_cores([words, sums, cap] {
    Q mine = fetch<Q>(words);
    const auto me = static_cast<u64>(shoal::mycore());
    u64 wrong = 0;
    for (u64 i = 0; i < 2; ++i)
      if (!mine.push(pushed_value(me, i))) ++wrong;
    shoal::rflush();
    shoal::barrier();
    if (mine.push(u64{1})) ++wrong;  // full
    shoal::barrier();
    mine.resize(2 * cap);
    if (mine.capacity() != 2 * cap) ++wrong;
    for (u64 i = 2; i < 4; ++i)
      if (!mine.push(pushed_value(me, i))) ++wrong;
    shoal::rflush();
    mine.migrate(0);
    if (mine.host() != 0 || mine.capacity() != 2 * cap) ++wrong;
    tally t;
    u64 v = 0;
    while (mine.pop(v)) t.take(v);
    t.add_to(sums);
    shoal::fetch_add(sums + 4, wrong);
    shoal::barrier();
    if (me == 0) mine.destroy();
  });
  u64 wrong = compare(sums, 4) + shoal::rget(sums + 4);
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// local_nonatomic_touch on `q` (core 0's, empty, its counters mid-ring):
/// refused with a value inside, which it leaves; done on the emptied queue,
/// which then still takes and gives back values in order, the counters
/// where they were (the next slots, not the first).
inline u64 touch_keeps_queue(fast& q) {
  u64 wrong = 0;
  if (!q.push(41) || q.local_nonatomic_touch() || q.size() != 1) ++wrong;
  u64 v = 0;
  if (!q.local_nonatomic_pop(v) || v != 41) ++wrong;
  if (!q.local_nonatomic_touch() || q.size() != 0) ++wrong;
  const std::vector<u64> in{5, 6, 7};
  if (!q.push(std::span<const u64>(in))) ++wrong;
  std::vector<u64> out(3);
  if (q.local_nonatomic_pop(std::span<u64>(out)) != 3 || out != in) ++wrong;
  return wrong;
}

/// The rewind half of fast_drain_wraps: `q` (core 0's, capacity 2 P + 2,
/// its handle shared at `words`) is empty with its counters at 2 P + 7;
/// `slot0` is its first slot's storage.
inline u64 rewind_restarts_ring(fast& q, shoal::global_ptr<u64> words, const u64* slot0) {
  const int n = shoal::cores();
  u64 wrong = 0;
  if (!q.push(7)) ++wrong;
  if (q.local_nonatomic_rewind() || q.size() != 1) ++wrong;  // refused: not empty
  u64 v = 0;
  if (!q.local_nonatomic_pop(v) || v != 7) ++wrong;
  if (!q.local_nonatomic_rewind() || q.size() != 0) ++wrong;
  shoal::on_all_cores([words] {
    fast mine = fetch<fast>(words);  // its cached counters are stale now
    mine.prefault();                 // a hint: reads only, the queue unchanged
    const auto me = static_cast<u64>(shoal::mycore());
    if (!mine.push(pushed_value(me, 2)) || !mine.push(pushed_value(me, 3)))
      shoal::abort_job("push refused after the rewind", 1);
    shoal::rflush();
    shoal::barrier();
  });
  tally got;
  tally want;
  for (int c = 0; c < n; ++c)
    for (u64 i = 2; i < 4; ++i) want.take(pushed_value(static_cast<u64>(c), i));
  int runs = 0;
  const u64* start = nullptr;
  q.local_nonatomic_drain([&](std::span<const u64> run) {
    ++runs;
    start = run.data();
    for (const u64 x : run) got.take(x);
  });
  if (runs != 1 || start != slot0) ++wrong;
  if (got.count != want.count || got.sum != want.sum || got.squares != want.squares) ++wrong;
  // Full is exact from the new start: capacity values fit, one more does not.
  if (!q.local_nonatomic_rewind()) ++wrong;
  for (u64 i = 0; i < q.capacity(); ++i)
    if (!q.push(i)) ++wrong;
  if (q.push(u64{99}) || q.size() != q.capacity()) ++wrong;
  return wrong;
}

/// fast_queue::local_nonatomic_drain on a queue of core 0 (the root task's
/// process): 3 values pushed and popped locally move the ring's start, then
/// every core pushes 2 (the ring wraps), and one drain sees them in place as
/// two runs, each value once; a second drain finds nothing.
/// local_nonatomic_touch then (touch_keeps_queue); local_nonatomic_rewind:
/// refused on a queue holding a value; on the emptied queue the next
/// phase's pushes (every core 2 again) land from slot 0 as one run, and the
/// queue is full at exactly its capacity.
inline u64 fast_drain_wraps() {
  const int n = shoal::cores();
  const auto words = zeroed(0);
  const u64 cap = 2 * static_cast<u64>(n) + 2;
  fast q = fast::make(0, cap);
  u64 wrong = 0;
  for (u64 i = 0; i < 3; ++i)
    if (!q.push(i)) ++wrong;
  std::vector<u64> first(3);
  if (q.local_nonatomic_pop(std::span<u64>(first)) != 3 || first != std::vector<u64>{0, 1, 2})
    ++wrong;
  share(q, words);
  shoal::on_all_cores([words] {
    fast mine = fetch<fast>(words);
    const auto me = static_cast<u64>(shoal::mycore());
    if (!mine.push(pushed_value(me, 0)) || !mine.push(pushed_value(me, 1)))
      shoal::abort_job("push refused", 1);
    shoal::rflush();
    shoal::barrier();
  });
  tally got;
  int runs = 0;
  const u64* slot0 = nullptr;  // the second run starts at the ring's first slot
  const std::size_t taken = q.local_nonatomic_drain([&](std::span<const u64> run) {
    ++runs;
    slot0 = run.data();
    for (const u64 v : run) got.take(v);
  });
  tally want;
  for (int c = 0; c < n; ++c)
    for (u64 i = 0; i < 2; ++i) want.take(pushed_value(static_cast<u64>(c), i));
  if (taken != 2 * static_cast<u64>(n) || runs != 2) ++wrong;
  if (got.count != want.count || got.sum != want.sum || got.squares != want.squares) ++wrong;
  if (q.local_nonatomic_drain([&](std::span<const u64>) { ++runs; }) != 0 || runs != 2) ++wrong;
  if (q.size() != 0) ++wrong;
  wrong += touch_keeps_queue(q);
  wrong += rewind_restarts_ring(q, words, slot0);
  q.destroy();
  shoal::global_free(words);
  return wrong;
}

/// A resize keeps the order of the elements (one core).
template <class Q>
u64 resize_keeps_order() {
  u64 wrong = 0;
  Q q = Q::make(shoal::cores() - 1, 5);
  for (u64 i = 0; i < 8; ++i) {  // wraps: 5 in, 3 out, 3 more in
    if (!q.push(i)) ++wrong;
    u64 v = 0;
    if (i < 3 && (!q.pop(v) || v != i)) ++wrong;
  }
  // One core only: the collective is this core alone.
  if (shoal::cores() == 1) {
    q.resize(9);
    u64 v = 0;
    for (u64 i = 3; i < 8; ++i)
      if (!q.pop(v) || v != i) ++wrong;
  }
  q.destroy();
  return wrong;
}

}  // namespace bcl_queue_checks
