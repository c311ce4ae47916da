// Checks of read_range/write_range shared by tests/test_range_transfer.cpp
// (one process) and tests/mpi/dist_range_transfer.cpp (several). Each
// returns the number of mismatches, element by element, against values
// computed independently (a closed form, checked at each element's home by
// forall, or read by per-element delegates). Call from a task.
#pragma once

#include "shoal/shoal.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace range_checks {

using i64 = std::int64_t;

inline i64 initial(i64 i) { return i * 7 + 3; }
inline i64 written(i64 i, i64 round) { return -(i * 11 + round); }

/// A 16-byte element and a 256-byte one (more than one message's payload).
struct pair16 {
  i64 a, b;
};
struct wide {
  i64 v[32];
};

/// Ranges that start and end mid-block, span every core, or are empty.
inline std::vector<std::pair<i64, i64>> ranges(i64 size) {
  const i64 per_block = shoal::current_config().block_bytes / 8;
  const i64 all_cores = per_block * shoal::cores();
  return {{0, 0},
          {5, 0},
          {0, 1},
          {per_block - 1, 1},
          {3, per_block - 3},
          {3, per_block},
          {per_block - 2, 3 * per_block},
          {1, all_cores},
          {per_block / 2, all_cores + per_block},
          {0, size},
          {17, size - 40}};
}

/// Fills a[0, n) with initial(i) at each element's home.
inline void fill(shoal::global_ptr<i64> a, i64 n) {
  shoal::forall(a, n, [](i64 i, i64& x) { x = initial(i); });
}

/// Reads every range and compares with initial().
inline i64 check_reads(shoal::global_ptr<i64> a, i64 size) {
  i64 bad = 0;
  for (const auto& [start, n] : ranges(size)) {
    std::vector<i64> got(static_cast<std::size_t>(n), -1);
    shoal::read_range(a + start, std::span<i64>(got));
    for (i64 i = 0; i < n; ++i)
      if (got[static_cast<std::size_t>(i)] != initial(start + i)) ++bad;
    // The async form, two in flight at once.
    std::vector<i64> x(static_cast<std::size_t>(n), -1), y(static_cast<std::size_t>(n), -1);
    auto fx = shoal::async_read_range(a + start, std::span<i64>(x));
    auto fy = shoal::async_read_range(a + start, std::span<i64>(y));
    fy.get();
    fx.get();
    if (x != got || y != got) ++bad;
  }
  return bad;
}

/// Writes each range (blocking and async), then checks every element of
/// the array at its home and by reading the range back.
inline i64 check_writes(shoal::global_ptr<i64> a, i64 size, shoal::global_ptr<i64> wrong) {
  i64 bad = 0;
  i64 round = 0;
  for (const auto& [start, n] : ranges(size)) {
    ++round;
    fill(a, size);
    std::vector<i64> src(static_cast<std::size_t>(n));
    for (i64 i = 0; i < n; ++i) src[static_cast<std::size_t>(i)] = written(start + i, round);
    if (round % 2 == 0) {
      shoal::write_range(a + start, std::span<const i64>(src));
    } else {
      shoal::async_write_range(a + start, std::span<i64>(src)).get();
    }
    const i64 lo = start;
    const i64 hi = start + n;
    shoal::forall(a, size, [lo, hi, round, wrong](i64 i, i64& x) {
      const i64 want = i >= lo && i < hi ? written(i, round) : initial(i);
      if (x != want) shoal::delegate::fetch_add(wrong, i64{1});
    });
    std::vector<i64> back(static_cast<std::size_t>(n));
    shoal::read_range(a + start, std::span<i64>(back));
    if (back != src) ++bad;
  }
  return bad;
}

/// FNV-1a of an element's bytes.
template <class T>
std::uint64_t hash_of(const T& x) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &x, sizeof(T));
  std::uint64_t h = 1469598103934665603ULL;
  for (const unsigned char b : bytes) h = (h ^ b) * 1099511628211ULL;
  return h;
}

/// Elements of another size T (T must divide --block-bytes): written from
/// `start` to the end, checked at each 37th element's home, read back.
template <class T, class Make>
i64 check_element_type(i64 n, i64 start, const Make& make) {
  shoal::global_ptr<T> a = shoal::global_alloc<T>(n);
  std::vector<T> src(static_cast<std::size_t>(n - start));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = make(static_cast<i64>(i) + start);
  shoal::write_range(a + start, std::span<const T>(src));
  i64 bad = 0;
  for (i64 i = start; i < n; i += 37) {
    const shoal::global_ptr<T> q = a + i;  // hashed at its home: any element size
    const std::uint64_t home = shoal::delegate::call(q.core(), [q] { return hash_of(*q.local()); });
    if (home != hash_of(src[static_cast<std::size_t>(i - start)])) ++bad;
  }
  std::vector<T> back(src.size());
  shoal::read_range(a + start, std::span<T>(back));
  if (std::memcmp(back.data(), src.data(), src.size() * sizeof(T)) != 0) ++bad;
  shoal::global_free(a);
  return bad;
}

/// Each core writes its own disjoint range at once (async, overlapping
/// blocks' neighbours), then every element is checked at its home.
inline i64 check_concurrent_writers(shoal::global_ptr<i64> a, i64 size,
                                    shoal::global_ptr<i64> wrong) {
  fill(a, size);
  const i64 share = (size - 10) / shoal::cores();
  shoal::on_all_cores([a, share] {
    const i64 lo = 5 + shoal::mycore() * share;
    std::vector<i64> src(static_cast<std::size_t>(share));
    for (i64 i = 0; i < share; ++i) src[static_cast<std::size_t>(i)] = written(lo + i, 99);
    shoal::async_write_range(a + lo, std::span<const i64>(src)).get();
  });
  const i64 hi = 5 + shoal::cores() * share;
  shoal::forall(a, size, [hi, wrong](i64 i, i64& x) {
    const i64 want = i >= 5 && i < hi ? written(i, 99) : initial(i);
    if (x != want) shoal::delegate::fetch_add(wrong, i64{1});
  });
  return 0;
}

inline shoal::per_core<std::vector<i64>> g_local_arrays;

/// A 2D range: core `owner`'s own array (made_global), read from every
/// core, then written slice by slice by every core at once. SPMD.
inline i64 check_2d(int owner) {
  constexpr i64 n = 2000;
  const i64 me = shoal::mycore();
  std::vector<i64>& mine = g_local_arrays.local();
  mine.resize(n);
  for (i64 i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = initial(me * 100000 + i);
  const shoal::global_ptr<i64> p = shoal::broadcast(shoal::make_global(mine.data()), owner);
  i64 bad = 0;
  std::vector<i64> got(n - 20);
  shoal::read_range(p + 10, std::span<i64>(got));
  for (i64 i = 0; i < n - 20; ++i)
    if (got[static_cast<std::size_t>(i)] != initial(owner * 100000 + 10 + i)) ++bad;
  shoal::barrier();
  const i64 slice = n / shoal::cores();
  std::vector<i64> src(static_cast<std::size_t>(slice));
  for (i64 i = 0; i < slice; ++i) src[static_cast<std::size_t>(i)] = written(me * slice + i, 5);
  shoal::write_range(p + me * slice, std::span<const i64>(src));
  shoal::barrier();
  if (me == owner)
    for (i64 i = 0; i < slice * shoal::cores(); ++i)
      if (mine[static_cast<std::size_t>(i)] != written(i, 5)) ++bad;
  shoal::barrier();  // no core reads the owner's array after it is reused
  return bad;
}

}  // namespace range_checks
