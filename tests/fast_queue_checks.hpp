// Checks of shoal::bcl::fast_queue (bcl/fast_queue.hpp), shared by
// test_one_sided_fast_queue.cpp (one process) and mpi/one_sided_job.cpp
// (every backend, several processes). Each returns the number of wrong
// values it saw (0: passed); call from the root task.
#pragma once

#include "shoal/bcl/fast_queue.hpp"
#include "shoal/shoal.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

namespace fast_queue_checks {

using u64 = std::uint64_t;
using queue = shoal::bcl::fast_queue<u64>;
static_assert(sizeof(queue) <= 56);

/// The handle's bytes go to words[0..7) (core 0's block) for every core to
/// fetch: on_all_cores closures hold 48 bytes, a handle and nothing else.
inline void share(const queue& q, shoal::global_ptr<u64> words) {
  u64 raw[7] = {};
  std::memcpy(raw, &q, sizeof q);
  shoal::rput(words, raw, 7);  // 7 of core 0's 8 words
  shoal::rflush();
}
inline queue fetch(shoal::global_ptr<u64> words) {
  u64 raw[7];
  shoal::rget(words, raw, 7);
  queue q;
  std::memcpy(&q, raw, sizeof q);
  return q;
}

inline u64 pushed_value(int core, u64 i) { return static_cast<u64>(core) * 1000003 + i * 7 + 1; }

/// Every core pushes `per` values (singles and vectors) to one queue on the
/// last core; rflush, barrier; then every core pops (singles and vectors of
/// 3) until empty. Each value is popped exactly once: count, sum and sum of
/// squares match, and the queue ends empty. With `local`, the host pops
/// them all with local_nonatomic_pop instead.
inline u64 redistribute(u64 per, bool local) {
  const int n = shoal::cores();
  const auto words = shoal::global_alloc<u64>(8 * n);  // core 0's block: the handle
  const auto sums = shoal::global_alloc<u64>(8 * n);   // core 0's block: the results
  const u64 zeros[8] = {};
  shoal::rput(sums, zeros, 8);  // reused heap memory is not zero
  queue q = queue::make(n - 1, per * static_cast<u64>(n));
  share(q, words);
  shoal::on_all_cores([words, sums, per, local] {
    queue mine = fetch(words);
    const int me = shoal::mycore();
    u64 i = 0;
    for (; i < per / 2; ++i)
      if (!mine.push(pushed_value(me, i))) shoal::fetch_add(sums + 7, u64{1000000});
    std::vector<u64> rest;
    for (; i < per; ++i) rest.push_back(pushed_value(me, i));
    if (!mine.push(std::span<const u64>(rest))) shoal::fetch_add(sums + 7, u64{1000000});
    shoal::rflush();
    shoal::barrier();
    u64 count = 0, sum = 0, squares = 0;
    const auto take = [&](u64 v) {
      ++count;
      sum += v;
      squares += v * v;
    };
    u64 v = 0;
    if (local) {
      if (me == mine.host())
        while (mine.local_nonatomic_pop(v)) take(v);
    } else {
      u64 three[3];
      for (;;) {
        if (mine.pop(std::span<u64>(three, 3))) {
          for (u64 x : three) take(x);
        } else if (mine.pop(v)) {
          take(v);
        } else {
          break;
        }
      }
    }
    shoal::fetch_add(sums + 3, count);
    shoal::fetch_add(sums + 4, sum);
    shoal::fetch_add(sums + 5, squares);
  });
  u64 count = 0, sum = 0, squares = 0;
  for (int c = 0; c < n; ++c)
    for (u64 i = 0; i < per; ++i) {
      const u64 x = pushed_value(c, i);
      ++count;
      sum += x;
      squares += x * x;
    }
  u64 wrong = 0;
  if (shoal::rget(sums + 3) != count) ++wrong;
  if (shoal::rget(sums + 4) != sum) ++wrong;
  if (shoal::rget(sums + 5) != squares) ++wrong;
  if (shoal::rget(sums + 7) != 0) ++wrong;  // a push reported full
  if (q.size() != 0) ++wrong;
  q.destroy();
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// The bulk local_nonatomic_pop on the host (core 0, the root task's):
/// the oldest values in order, across the wrap of the ring, as many as
/// there are and no more, then 0 when empty.
inline u64 local_bulk_pop_in_order() {
  queue q = queue::make(0, 10);
  u64 wrong = 0;
  u64 v = 0;
  for (u64 i = 0; i < 7; ++i) q.push(i);
  for (u64 i = 0; i < 7; ++i)
    if (!q.pop(v) || v != i) ++wrong;
  for (u64 i = 100; i < 108; ++i) q.push(i);  // slots 7, 8, 9, then 0 .. 4
  shoal::rflush();
  u64 out[10] = {};
  if (q.local_nonatomic_pop(std::span<u64>(out, 5)) != 5) ++wrong;
  for (u64 i = 0; i < 5; ++i)
    if (out[i] != 100 + i) ++wrong;
  if (q.local_nonatomic_pop(std::span<u64>(out, 10)) != 3) ++wrong;  // only 3 left
  for (u64 i = 0; i < 3; ++i)
    if (out[i] != 105 + i) ++wrong;
  if (q.local_nonatomic_pop(std::span<u64>(out, 10)) != 0) ++wrong;
  if (q.size() != 0) ++wrong;
  q.destroy();
  return wrong;
}

/// Full and empty are reported and push nothing / pop nothing; values come
/// out in order, also across the wrap of the ring.
inline u64 full_empty_and_wrap() {
  const int n = shoal::cores();
  queue q = queue::make(n - 1, 10);
  u64 wrong = 0;
  for (u64 i = 0; i < 10; ++i)
    if (!q.push(i)) ++wrong;
  if (q.push(u64{99})) ++wrong;  // full
  if (q.size() != 10) ++wrong;
  shoal::rflush();
  u64 v = 0;
  for (u64 i = 0; i < 7; ++i)
    if (!q.pop(v) || v != i) ++wrong;
  // 3 left; 7 free: a vector of 8 does not fit, one of 7 does (wrapping).
  std::vector<u64> eight = {20, 21, 22, 23, 24, 25, 26, 27};
  if (q.push(std::span<const u64>(eight))) ++wrong;
  if (!q.push(std::span<const u64>(eight.data(), 7))) ++wrong;
  if (q.size() != 10) ++wrong;
  shoal::rflush();
  std::vector<u64> out(10);
  if (q.pop(std::span<u64>(out.data(), 10))) {
    const std::vector<u64> want = {7, 8, 9, 20, 21, 22, 23, 24, 25, 26};
    if (out != want) ++wrong;
  } else {
    ++wrong;
  }
  if (q.pop(v)) ++wrong;  // empty
  if (q.pop(std::span<u64>(out.data(), 2))) ++wrong;
  if (q.size() != 0) ++wrong;
  q.destroy();
  if (q.valid()) ++wrong;
  return wrong;
}

}  // namespace fast_queue_checks
