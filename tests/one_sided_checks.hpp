// Checks of the one-sided layer (one_sided.hpp), shared by the one-process
// unit test (test_one_sided.cpp) and the job run under mpirun with every
// backend forced (mpi/one_sided_job.cpp). Each returns the number of wrong
// values it saw (0: passed); call from the root task.
#pragma once

#include "shoal/one_sided.hpp"
#include "shoal/shoal.hpp"

#include <cstdint>
#include <vector>

namespace one_sided_checks {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

inline u64 value_of(u64 i, u64 round) { return i * 2654435761ULL + round * 7 + 1; }

/// Every core rputs its share of an array spread over every core, rflush()es,
/// passes a barrier, then rgets (one by one) what the next core wrote: a
/// put then flush then barrier is visible to a get from any other core.
inline u64 put_flush_barrier_get() {
  const int n = shoal::cores();
  const std::int64_t per = 97;  // odd: shares straddle blocks and cores
  const auto a = shoal::global_alloc<u64>(per * n);
  u64 wrong = 0;
  const auto w = shoal::make_global(&wrong);
  shoal::on_all_cores([a, w, per, n] {
    const int me = shoal::mycore();
    for (std::int64_t i = 0; i < per; ++i) {
      const std::int64_t k = i * n + me;
      shoal::rput(a + k, value_of(static_cast<u64>(k), 1));
    }
    shoal::rflush();
    shoal::barrier();
    const int next = (me + 1) % n;
    u64 bad = 0;
    for (std::int64_t i = 0; i < per; ++i) {
      const std::int64_t k = i * n + next;
      if (shoal::rget(a + k) != value_of(static_cast<u64>(k), 1)) ++bad;
    }
    if (bad != 0) shoal::delegate::fetch_add(w, bad);
  });
  shoal::global_free(a);
  return wrong;
}

/// Bulk rput/rget of n contiguous elements starting mid-block (so across
/// blocks, cores and processes), blocking and asynchronous, checked against
/// read_range (a separate path) and element by element.
inline u64 bulk_ranges() {
  const std::int64_t size = 20000;
  const auto a = shoal::global_alloc<u64>(size);
  u64 wrong = 0;
  for (std::int64_t first : {std::int64_t{0}, std::int64_t{3}, std::int64_t{1001}}) {
    const std::int64_t len = size - first - 5;
    std::vector<u64> src(static_cast<std::size_t>(len)), back(src.size()), check(src.size());
    for (std::int64_t i = 0; i < len; ++i)
      src[static_cast<std::size_t>(i)] = value_of(static_cast<u64>(first + i), 2);
    if (first == 3) {
      shoal::rma_request r = shoal::async_rput(a + first, src.data(), src.size());
      r.wait();
    } else {
      shoal::rput(a + first, src.data(), src.size());
    }
    shoal::rflush();
    if (first == 1001) {
      shoal::rma_request r = shoal::async_rget(a + first, back.data(), back.size());
      while (!r.test()) shoal::yield();
    } else {
      shoal::rget(a + first, back.data(), back.size());
    }
    shoal::read_range(a + first, std::span<u64>(check));
    for (std::size_t i = 0; i < src.size(); ++i)
      if (back[i] != src[i] || check[i] != src[i]) ++wrong;
  }
  // An empty range does nothing (and needs no valid target beyond the check).
  shoal::rget(a, static_cast<u64*>(nullptr), 0);
  shoal::global_free(a);
  return wrong;
}

/// Many cores doing fetch_add on one 64-bit and one 32-bit word (and the
/// bitwise ops on others) end with the exact totals.
inline u64 fetch_ops_exact(int per_core) {
  const int n = shoal::cores();
  // Words on core 0 (the first block) and on the last core (a later block).
  const auto words = shoal::global_alloc<u64>(8 * n);
  const auto c64 = words;
  const auto bits = words + 1;
  const auto x64 = words + 2;
  const auto c32 = (words + (8 * n - 1)).reinterpret<u32>();  // the last core's last word
  shoal::rput(c64, u64{0});
  shoal::rput(bits, ~u64{0});
  shoal::rput(x64, u64{0});
  shoal::rput(c32, u32{0});
  shoal::rflush();
  shoal::on_all_cores([c64, c32, bits, x64, per_core] {
    const int me = shoal::mycore();
    for (int i = 0; i < per_core; ++i) {
      shoal::fetch_add(c64, u64{1});
      shoal::fetch_add(c32, u32{3});
    }
    shoal::fetch_and(bits, ~(u64{1} << me));  // each clears its bit
    shoal::fetch_xor(x64, u64{0xF0F0} << me);
    shoal::fetch_xor(x64, u64{0xF0F0} << me);  // twice: back to what it was
    shoal::fetch_or(x64, u64{1} << (63 - me));
  });
  u64 wrong = 0;
  const auto total = static_cast<u64>(per_core) * static_cast<u64>(n);
  if (shoal::rget(c64) != total) ++wrong;
  if (shoal::rget(c32) != static_cast<u32>(3 * total)) ++wrong;
  const u64 mine = n >= 64 ? ~u64{0} : (u64{1} << n) - 1;
  if (shoal::rget(bits) != ~mine) ++wrong;
  u64 top = 0;
  for (int c = 0; c < n; ++c) top |= u64{1} << (63 - c);
  if (shoal::rget(x64) != top) ++wrong;
  // The old value comes back: one more add returns the total.
  if (shoal::fetch_add(c64, u64{5}) != total) ++wrong;
  if (shoal::compare_and_swap(c64, u64{0}, u64{9}) != total + 5) ++wrong;     // no swap
  if (shoal::compare_and_swap(c64, total + 5, u64{9}) != total + 5) ++wrong;  // swap
  if (shoal::rget(c64) != 9) ++wrong;
  shoal::global_free(words);
  return wrong;
}

/// A spin lock by compare_and_swap guards a counter updated by rget, rput
/// and rflush: no increment is lost.
inline u64 cas_lock(int per_core) {
  const int n = shoal::cores();
  const auto words = shoal::global_alloc<u64>(2 * n);
  const auto lock = words;
  const auto counter = words + 8 * (n - 1) + 1;  // on another core when n > 1
  shoal::rput(lock, u64{0});
  shoal::rput(counter, u64{0});
  shoal::rflush();
  shoal::on_all_cores([lock, counter, per_core] {
    for (int i = 0; i < per_core; ++i) {
      while (shoal::compare_and_swap(lock, u64{0}, u64{1}) != 0) shoal::yield();
      const u64 x = shoal::rget(counter);
      shoal::rput(counter, x + 1);
      shoal::rflush();  // the put lands before the lock is seen free
      shoal::compare_and_swap(lock, u64{1}, u64{0});
    }
  });
  const u64 got = shoal::rget(counter);
  shoal::global_free(words);
  return got == static_cast<u64>(per_core) * static_cast<u64>(n) ? 0 : 1;
}

/// A 2D pointer into the heap of another core (made on that core from a
/// linear element) reads and writes the same memory as the linear pointer.
inline u64 two_d_pointers() {
  const int n = shoal::cores();
  const auto a = shoal::global_alloc<u64>(8 * n);
  const auto last = a + 8 * (n - 1);  // first element of the last core's block
  const auto p2 =
      shoal::delegate::call(last.core(), [last] { return shoal::make_global(last.local()); });
  u64 wrong = 0;
  shoal::rput(p2, u64{77});
  shoal::rflush();
  if (shoal::rget(last) != 77) ++wrong;
  shoal::fetch_add(last, u64{1});
  if (shoal::rget(p2) != 78) ++wrong;
  if (shoal::fetch_add(p2, u64{2}) != 78) ++wrong;
  shoal::global_free(a);
  return wrong;
}

/// plain_address: under direct and shm every core reads the next core's
/// block (and, through a 2D pointer made there, its first element) by plain
/// loads after the owner's rput, rflush and a barrier, and sees the values;
/// under rma and am it returns nullptr. A null where it must not be, or a
/// pointer where it must be null, counts as a wrong value.
inline u64 plain_addresses() {
  const int n = shoal::cores();
  const auto a = shoal::global_alloc<u64>(8 * n);  // one 8-element block per core
  const auto kind = shoal::one_sided_backend();
  const bool plain = kind == shoal::one_sided_kind::direct || kind == shoal::one_sided_kind::shm;
  u64 wrong = 0;
  const auto w = shoal::make_global(&wrong);
  shoal::on_all_cores([a, w, n, plain] {
    const int me = shoal::mycore();
    for (int i = 0; i < 8; ++i)
      shoal::rput(a + (8 * me + i), value_of(static_cast<u64>(8 * me + i), 9));
    shoal::rflush();
    shoal::barrier();
    const int next = (me + 1) % n;
    const auto first = a + 8 * next;
    const u64* p = shoal::plain_address(first, 8);
    const auto p2 =
        shoal::delegate::call(first.core(), [first] { return shoal::make_global(first.local()); });
    const u64* q = shoal::plain_address(p2);
    u64 bad = 0;
    if (!plain) {
      bad += (p != nullptr) + (q != nullptr);
    } else if (p == nullptr || q == nullptr) {
      bad += 1;
    } else {
      for (int i = 0; i < 8; ++i)
        if (p[i] != value_of(static_cast<u64>(8 * next + i), 9)) ++bad;
      if (*q != value_of(static_cast<u64>(8 * next), 9)) ++bad;
    }
    shoal::barrier();  // nobody frees a while another core still reads it
    if (bad != 0) shoal::delegate::fetch_add(w, bad);
  });
  shoal::global_free(a);
  return wrong;
}

/// Under am only: one-sided atomics and delegates on the same word are
/// atomic with respect to each other (both run at the owner).
inline u64 mixed_with_delegates(int per_core) {
  const int n = shoal::cores();
  const auto c = shoal::global_alloc<u64>(8 * n) + 8 * (n - 1);
  shoal::rput(c, u64{0});
  shoal::rflush();
  shoal::on_all_cores([c, per_core] {
    for (int i = 0; i < per_core; ++i) {
      shoal::fetch_add(c, u64{1});
      shoal::delegate::fetch_add(c, u64{1});
    }
  });
  const u64 got = shoal::rget(c);
  shoal::global_free(c - 8 * (n - 1));
  return got == 2 * static_cast<u64>(per_core) * static_cast<u64>(n) ? 0 : 1;
}

}  // namespace one_sided_checks
