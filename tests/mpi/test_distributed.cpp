// test_distributed: the public API in a job of several processes, run by
// tests/CMakeLists.txt under mpirun for 1-3 ranks x 1-2 cores per rank.
//
//   mpirun -np R test_distributed --cores C [gtest flags]
//
// Every rank runs every TEST in the same order (init, run and finalize are
// collective). The root task runs on rank 0 only (global core 0): results it
// computes are checked after run() on rank 0 only; other ranks pass a test
// unless something fails there (their failures are printed with the rank).
//
// Closures that travel (send, delegates, on_all_cores, forall bodies,
// channel handlers) capture values and global pointers only. Results come
// back to the root through delegates on 2D global pointers to the root's own
// memory (make_global on core 0), or through a completion_event pointer that
// is dereferenced on core 0 only (completion_event::complete_at).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mpi/dist_support.hpp"

namespace {

using shoal::global_ptr;
using shoal::make_global;
namespace delegate = shoal::delegate;
using i64 = std::int64_t;

// Shape of the job and the shared main(): tests/mpi/dist_support.hpp.
using shoal_dist::g_cores_per_rank;
using shoal_dist::g_rank;
using shoal_dist::g_ranks;
using shoal_dist::job_config;
using shoal_dist::job_cores;
using shoal_dist::rank0;
using shoal_dist::run_job;

/// Reads n elements at p with blocking delegates from the calling task's
/// process, many reads in flight at once. Task only.
template <class T>
std::vector<T> read_all(global_ptr<T> p, i64 n) {
  std::vector<T> out(static_cast<std::size_t>(n));
  T* o = out.data();
  shoal::parallel_for(0, n, 4, [p, o](i64 i) { o[i] = delegate::read(p + i); });
  return out;
}

/// Sets n elements of a linear array to T{} on their home cores. Task only.
template <class T>
void zero(global_ptr<T> a, i64 n) {
  shoal::forall(a, n, [](i64, T& x) { x = T{}; });
}

/// Counts elements i of a linear array with x != expected(i), checked on
/// their home cores and counted on the calling core. `expected` must be
/// trivially copyable and tiny (it travels in the forall body).
template <class T, class E>
i64 count_mismatches(global_ptr<T> a, i64 n, E expected) {
  i64 bad = 0;
  const global_ptr<i64> b = make_global(&bad);
  shoal::forall(
      a, n,
      [b, expected](i64 i, T& x) {
        if (!(x == expected(i))) delegate::fetch_add(b, i64{1});
      },
      64);
  return bad;
}

/// Bytes of a block of linear arrays in the default configuration.
constexpr i64 block_bytes = 64;

// ------------------------------------------------------------ identity

TEST(distributed, EveryCoreKnowsItsRankAndCore) {
  const int C = job_cores();
  const int R = g_ranks;
  const int per = g_cores_per_rank;
  int root_core = -1;
  int root_rank = -1;
  int seen_cores = -1;
  int seen_ranks = -1;
  int seen_local = -1;
  std::vector<i64> visits;
  std::vector<i64> rank_seen;
  std::vector<i64> good;
  run_job([&] {
    root_core = shoal::mycore();
    root_rank = shoal::myrank();
    seen_cores = shoal::cores();
    seen_ranks = shoal::ranks();
    seen_local = shoal::local_cores();
    visits.assign(static_cast<std::size_t>(C), 0);
    rank_seen.assign(static_cast<std::size_t>(C), -1);
    good.assign(static_cast<std::size_t>(C), 0);
    const auto v = make_global(visits.data());
    const auto r = make_global(rank_seen.data());
    const auto g = make_global(good.data());
    shoal::on_all_cores([v, r, g, C, R, per] {
      const int me = shoal::mycore();
      const bool ok = shoal::cores() == C && shoal::ranks() == R && shoal::local_cores() == per &&
                      me >= 0 && me < C && me / per == shoal::myrank() &&
                      shoal::rank_of(me) == shoal::myrank() &&
                      shoal::current_config().cores == per && shoal::initialized();
      delegate::fetch_add(v + me, i64{1});
      delegate::write(r + me, static_cast<i64>(shoal::myrank()));
      delegate::write(g + me, static_cast<i64>(ok ? 1 : 0));
    });
  });
  if (rank0()) {
    EXPECT_EQ(root_core, 0);
    EXPECT_EQ(root_rank, 0);
    EXPECT_EQ(seen_cores, C);
    EXPECT_EQ(seen_ranks, R);
    EXPECT_EQ(seen_local, per);
    ASSERT_EQ(visits.size(), static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c) {
      const auto k = static_cast<std::size_t>(c);
      EXPECT_EQ(visits[k], 1) << "core " << c;
      EXPECT_EQ(rank_seen[k], c / per) << "core " << c;
      EXPECT_EQ(good[k], 1) << "core " << c << " disagrees on the job's shape";
    }
  }
}

// Per-process storage that 2D global pointers of other processes name.
i64 g_slot[4096];

TEST(distributed, TwoDimensionalPointersToOtherProcesses) {
  const int C = job_cores();
  std::vector<std::uint64_t> bits;
  std::vector<i64> first_read;
  std::vector<i64> cas_results;
  std::vector<i64> is_2d_on_core;
  i64 wrong_after_write = -1;
  run_job([&] {
    bits.assign(static_cast<std::size_t>(C), 0);
    const auto b = make_global(bits.data());
    shoal::on_all_cores([b] {
      const int me = shoal::mycore();
      i64& slot = g_slot[me - shoal::myrank() * shoal::local_cores()];
      slot = 1000 + 3 * me;
      delegate::write(b + me, make_global(&slot).bits());
    });
    for (int c = 0; c < C; ++c) {
      const auto p = global_ptr<i64>::from_bits(bits[static_cast<std::size_t>(c)]);
      is_2d_on_core.push_back(!p.is_linear() && p.core() == c ? 1 : 0);
      first_read.push_back(delegate::read(p));
      delegate::write(p, i64{5000} + c);
      const bool failed_swap = delegate::compare_and_swap(p, i64{-1}, i64{7});
      const bool swapped = delegate::compare_and_swap(p, i64{5000} + c, i64{6000} + c);
      cas_results.push_back((failed_swap ? 10 : 0) + (swapped ? 1 : 0));
    }
    // The writes landed in each process's own storage.
    i64 wrong = 0;
    const auto w = make_global(&wrong);
    shoal::on_all_cores([w] {
      const int me = shoal::mycore();
      if (g_slot[me - shoal::myrank() * shoal::local_cores()] != 6000 + me)
        delegate::fetch_add(w, i64{1});
    });
    wrong_after_write = wrong;
  });
  if (rank0()) {
    ASSERT_EQ(first_read.size(), static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c) {
      const auto k = static_cast<std::size_t>(c);
      EXPECT_EQ(is_2d_on_core[k], 1) << "core " << c;
      EXPECT_EQ(first_read[k], 1000 + 3 * c) << "core " << c;
      EXPECT_EQ(cas_results[k], 1) << "core " << c << " (10: a CAS with a wrong expected value "
                                   << "swapped; 0: the right one did not)";
    }
    EXPECT_EQ(wrong_after_write, 0);
  }
}

// ------------------------------------------------------------ messages

// Per (sender, receiver) state lives in one block of a linear array homed on
// the receiver: block s*C + d is on core d (blocks are dealt out cyclically
// from core 0). Words: 0 next expected sequence number, 1 order violations,
// 2 messages, 3 payload sum, 4 messages run on a wrong core.
constexpr i64 words_per_block = block_bytes / 8;

i64 pair_index(int s, int d, int C) { return (static_cast<i64>(s) * C + d) * words_per_block; }

// Words 0..4 of every (sender, receiver) pair block, read from the root.
std::vector<i64> read_pairs(global_ptr<i64> st, int C) {
  std::vector<i64> state(static_cast<std::size_t>(C) * C * 5, -1);
  for (int s = 0; s < C; ++s)
    for (int d = 0; d < C; ++d) {
      const auto got = read_all(st + pair_index(s, d, C), 5);
      std::copy(got.begin(), got.end(),
                state.begin() + (static_cast<std::ptrdiff_t>(s) * C + d) * 5);
    }
  return state;
}

// Checks every pair block: K messages, in order, each on its receiver, with
// payload sum `sum(s, d)`.
template <class Sum>
void check_pairs(const std::vector<i64>& state, int C, i64 K, const Sum& sum) {
  for (int s = 0; s < C; ++s)
    for (int d = 0; d < C; ++d) {
      const auto k = static_cast<std::size_t>((s * C + d) * 5);
      EXPECT_EQ(state[k + 0], K) << s << " -> " << d << ": last sequence number";
      EXPECT_EQ(state[k + 1], 0) << s << " -> " << d << ": out of order";
      EXPECT_EQ(state[k + 2], K) << s << " -> " << d << ": handled";
      EXPECT_EQ(state[k + 3], sum(s, d)) << s << " -> " << d << ": payload sum";
      EXPECT_EQ(state[k + 4], 0) << s << " -> " << d << ": handled on a wrong core";
    }
}

TEST(distributed, SendReachesEveryCoreInOrderPerSender) {
  const int C = job_cores();
  static constexpr i64 K = 150;  // messages per (sender, receiver)
  std::vector<i64> misplaced;
  std::vector<i64> state;
  run_job([&] {
    const auto st = shoal::global_alloc<i64>(static_cast<i64>(C) * C * words_per_block);
    zero(st, static_cast<i64>(C) * C * words_per_block);
    i64 bad_home = 0;
    for (int s = 0; s < C; ++s)
      for (int d = 0; d < C; ++d)
        if ((st + pair_index(s, d, C)).core() != d) ++bad_home;
    misplaced.push_back(bad_home);
    if (bad_home == 0) {
      shoal::completion_event all_last(static_cast<i64>(C) * C);  // one per pair
      shoal::completion_event* ev = &all_last;
      shoal::on_all_cores([st, ev, C] {
        const int s = shoal::mycore();
        for (i64 seq = 0; seq < K; ++seq) {
          for (int d = 0; d < C; ++d) {
            shoal::send(d, [st, ev, s, d, seq, C] {
              const i64 base = pair_index(s, d, C);
              i64& next = *(st + base).local();
              if (next != seq) ++*(st + base + 1).local();
              next = seq + 1;
              ++*(st + base + 2).local();
              *(st + base + 3).local() += seq * 7 + s * 3 + d;
              if (shoal::mycore() != d) ++*(st + base + 4).local();
              if (seq == K - 1) shoal::completion_event::complete_at(0, ev);
            });
          }
        }
      });
      all_last.wait();
    }
    state = read_pairs(st, C);
    shoal::global_free(st);
  });
  if (rank0()) {
    ASSERT_EQ(misplaced.size(), 1u);
    EXPECT_EQ(misplaced[0], 0) << "blocks of a fresh array are not dealt out from core 0";
    check_pairs(state, C, K, [](int s, int d) { return 7 * K * (K - 1) / 2 + K * (3 * s + d); });
  }
}

// per_core state is reached by name on every process: each core's slot
// counts the messages it handled; the counts come back by delegate.
shoal::per_core<i64> handled_here;

TEST(distributed, PerCoreStateIsReachedByNameOnEveryProcess) {
  const int C = job_cores();
  static constexpr i64 K = 40;  // messages from each core to each core
  std::vector<i64> counts;
  run_job([&] {
    const auto out = shoal::global_alloc<i64>(static_cast<i64>(C) * words_per_block);
    shoal::on_all_cores([] { handled_here.local() = 0; });
    shoal::on_all_cores([C] {
      for (i64 k = 0; k < K; ++k)
        for (int d = 0; d < C; ++d)
          delegate::post(d, [] { ++handled_here.local(); }, shoal::default_gce());
      shoal::default_gce().wait();  // every core waits: all messages have run
    });
    shoal::on_all_cores([out] {
      delegate::write(out + shoal::mycore() * words_per_block, handled_here.local());
    });
    for (int c = 0; c < C; ++c) counts.push_back(delegate::read(out + c * words_per_block));
    shoal::global_free(out);
  });
  if (rank0()) {
    ASSERT_EQ(counts.size(), static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c) EXPECT_EQ(counts[static_cast<std::size_t>(c)], K * C) << "core " << c;
  }
}

TEST(distributed, TypedChannelAllToAllExactSums) {
  const int C = job_cores();
  static constexpr i64 K = 200;  // values per (sender, receiver)
  std::vector<i64> state;
  std::vector<i64> totals;
  bool opened = false;
  run_job([&] {
    // Pair blocks as above; block C*C + d (on core d) counts everything d got.
    const i64 words = (static_cast<i64>(C) * C + C) * words_per_block;
    const auto st = shoal::global_alloc<i64>(words);
    zero(st, words);
    shoal::completion_event all_in(C);  // one per receiver
    shoal::completion_event* ev = &all_in;
    const auto CC = static_cast<std::int32_t>(C);
    auto ch = shoal::make_channel<std::uint64_t>([st, ev, CC](const std::uint64_t& v) {
      const auto s = static_cast<int>(v >> 48);
      const auto d = static_cast<int>((v >> 32) & 0xffff);
      const auto seq = static_cast<i64>(v & 0xffffffffu);
      const int me = shoal::mycore();
      const i64 base = pair_index(s, me, CC);
      i64& next = *(st + base).local();
      if (next != seq) ++*(st + base + 1).local();
      next = seq + 1;
      ++*(st + base + 2).local();
      *(st + base + 3).local() += seq * 5 + s + 11 * d;
      if (d != me) ++*(st + base + 4).local();
      const i64 total = static_cast<i64>(CC) * CC * words_per_block + me * words_per_block;
      if (++*(st + total).local() == static_cast<i64>(CC) * K)
        shoal::completion_event::complete_at(0, ev);
    });
    opened = static_cast<bool>(ch);
    shoal::on_all_cores([ch, C] {
      const auto s = static_cast<std::uint64_t>(shoal::mycore());
      for (i64 seq = 0; seq < K; ++seq)
        for (int d = 0; d < C; ++d)
          ch.send(d, (s << 48) | (static_cast<std::uint64_t>(d) << 32) |
                         static_cast<std::uint64_t>(seq));
    });
    all_in.wait();
    ch.close();
    state = read_pairs(st, C);
    for (int d = 0; d < C; ++d)
      totals.push_back(delegate::read(st + (static_cast<i64>(C) * C + d) * words_per_block));
    shoal::global_free(st);
  });
  if (rank0()) {
    EXPECT_TRUE(opened);
    check_pairs(state, C, K, [](int s, int d) { return 5 * K * (K - 1) / 2 + K * (s + 11 * d); });
    ASSERT_EQ(totals.size(), static_cast<std::size_t>(C));
    for (int d = 0; d < C; ++d) EXPECT_EQ(totals[static_cast<std::size_t>(d)], C * K) << d;
  }
}

// ------------------------------------------------------ global memory

i64 f_of(i64 i) { return i * i * 3 + 17; }

TEST(distributed, ForallOverLinearArrayIsBlockCyclicOverAllCores) {
  const int C = job_cores();
  static constexpr i64 N = 1000;
  static constexpr i64 skip = 5;  // a second forall over [skip, N - skip)
  i64 cfg_block = 0;
  i64 wrong_home = -1;
  i64 wrong_home32 = -1;
  int base_core = -1;
  std::vector<i64> values;
  std::vector<i64> where;
  run_job([&] {
    cfg_block = shoal::current_config().block_bytes;
    const auto a = shoal::global_alloc<i64>(N);
    const auto w = shoal::global_alloc<i64>(N);
    const auto b32 = shoal::global_alloc<std::int32_t>(N);
    base_core = a.core();
    wrong_home = 0;
    wrong_home32 = 0;
    for (i64 i = 0; i < N; ++i) {
      if ((a + i).core() != (i * 8 / block_bytes) % C) ++wrong_home;
      if ((w + i).core() != (i * 8 / block_bytes) % C) ++wrong_home;
      if ((b32 + i).core() != (i * 4 / block_bytes) % C) ++wrong_home32;
    }
    shoal::forall(a, N, [](i64 i, i64& x) { x = f_of(i); });
    shoal::forall(
        w, N, [](i64, i64& x) { x = shoal::mycore(); }, 16);
    shoal::forall(
        a + skip, N - 2 * skip, [](i64, i64& x) { x += 1'000'000; }, 7);
    values = read_all(a, N);
    where = read_all(w, N);
    shoal::global_free(b32);
    shoal::global_free(w);
    shoal::global_free(a);
  });
  if (rank0()) {
    EXPECT_EQ(cfg_block, block_bytes);
    EXPECT_EQ(base_core, 0);
    EXPECT_EQ(wrong_home, 0);
    EXPECT_EQ(wrong_home32, 0);
    ASSERT_EQ(values.size(), static_cast<std::size_t>(N));
    ASSERT_EQ(where.size(), static_cast<std::size_t>(N));
    for (i64 i = 0; i < N; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const i64 extra = (i >= skip && i < N - skip) ? 1'000'000 : 0;
      EXPECT_EQ(values[k], f_of(i) + extra) << "element " << i;
      EXPECT_EQ(where[k], (i * 8 / block_bytes) % C) << "element " << i << " ran elsewhere";
    }
  }
}

TEST(distributed, GlobalAllocFromEveryCoreIncludingTheLastRank) {
  const int C = job_cores();
  static constexpr i64 n = 37;  // not a multiple of a block
  std::vector<std::uint64_t> bits;
  std::vector<i64> contents;
  i64 overlaps = -1;
  i64 mismatches = -1;
  i64 not_linear = -1;
  i64 after_free_bad = -1;
  run_job([&] {
    bits.assign(static_cast<std::size_t>(C), 0);
    const auto b = make_global(bits.data());
    // Every core allocates (ranks > 0 ask rank 0's allocator by delegate) and
    // fills its array with a forall started on that core.
    shoal::on_all_cores([b] {
      const int me = shoal::mycore();
      const auto p = shoal::global_alloc<i64>(n);
      shoal::forall(p, n, [me](i64 i, i64& x) { x = me * 1'000'000 + i; });
      delegate::write(b + me, p.bits());
    });
    // Per-core byte ranges [offset, offset + blocks) must be disjoint.
    const i64 per_core = (n * 8 + block_bytes - 1) / block_bytes;  // blocks
    const i64 extent = std::max<i64>(1, (per_core + C - 1) / C) * block_bytes;
    std::vector<std::pair<i64, i64>> ranges;
    not_linear = 0;
    for (int c = 0; c < C; ++c) {
      const auto p = global_ptr<i64>::from_bits(bits[static_cast<std::size_t>(c)]);
      if (!p.is_linear()) ++not_linear;
      const auto off = static_cast<i64>(p.linear_address()) / C;
      ranges.emplace_back(off, off + extent);
    }
    std::sort(ranges.begin(), ranges.end());
    overlaps = 0;
    for (std::size_t k = 1; k < ranges.size(); ++k)
      if (ranges[k].first < ranges[k - 1].second) ++overlaps;
    // Each array still holds what its allocating core wrote: no allocation
    // overwrote another.
    mismatches = 0;
    for (int c = 0; c < C; ++c) {
      const auto p = global_ptr<i64>::from_bits(bits[static_cast<std::size_t>(c)]);
      mismatches += count_mismatches(p, n, [c](i64 i) { return c * i64{1'000'000} + i; });
      const auto got = read_all(p, n);
      contents.insert(contents.end(), got.begin(), got.end());
    }
    // Every core frees its own array; then a big array fits and works.
    shoal::on_all_cores([b] {
      shoal::global_free(global_ptr<i64>::from_bits(delegate::read(b + shoal::mycore())));
    });
    const i64 big = 64 * static_cast<i64>(C) * n;
    const auto q = shoal::global_alloc<i64>(big);
    shoal::forall(q, big, [](i64 i, i64& x) { x = 3 * i; });
    after_free_bad = count_mismatches(q, big, [](i64 i) { return 3 * i; });
    shoal::global_free(q);
  });
  if (rank0()) {
    EXPECT_EQ(not_linear, 0);
    EXPECT_EQ(overlaps, 0) << "two global_alloc calls returned overlapping memory";
    EXPECT_EQ(mismatches, 0);
    ASSERT_EQ(contents.size(), static_cast<std::size_t>(C * n));
    for (int c = 0; c < C; ++c)
      for (i64 i = 0; i < n; ++i)
        EXPECT_EQ(contents[static_cast<std::size_t>(c * n + i)], c * 1'000'000 + i)
            << "array of core " << c << ", element " << i;
    EXPECT_EQ(after_free_bad, 0);
  }
}

// ----------------------------------------------------------- delegates

TEST(distributed, BlockingDelegatesUnderContention) {
  const int C = job_cores();
  static constexpr i64 K = 24;  // increments per core, of each kind
  int hot_core = -1;
  i64 hot_final = -1;
  i64 cas_final = -1;
  i64 sum_of_olds = -1;
  i64 cas_successes = -1;
  i64 failed_cas_swapped = -1;
  i64 seen_not_once = -1;
  std::vector<i64> own;
  i64 readback_bad = -1;
  run_job([&] {
    const i64 M = static_cast<i64>(C) * words_per_block;
    const auto w = shoal::global_alloc<i64>(M);
    i64 h = 0;
    while ((w + h).core() != C - 1) ++h;  // a word homed on the last core
    const auto hot = w + h;
    const auto cas = w + h + 1;  // same block, same core
    hot_core = hot.core() == cas.core() ? hot.core() : -2;
    delegate::write(hot, i64{0});
    delegate::write(cas, i64{0});
    const auto seen = shoal::global_alloc<i64>(static_cast<i64>(C) * K);
    zero(seen, static_cast<i64>(C) * K);
    const auto slots = shoal::global_alloc<i64>(C);
    std::vector<i64> totals(3, 0);  // sum of olds, CAS successes, bad readbacks
    const auto t = make_global(totals.data());
    failed_cas_swapped = delegate::compare_and_swap(cas, i64{-1}, i64{99}) ? 1 : 0;
    shoal::on_all_cores([hot, cas, seen, slots, t] {
      const int me = shoal::mycore();
      // Own slot: write, read back (may be homed on another rank).
      delegate::write(slots + me, i64{11} * me + 1);
      if (delegate::read(slots + me) != 11 * me + 1) delegate::fetch_add(t + 2, i64{1});
      std::atomic<i64> olds{0};
      std::atomic<i64> successes{0};
      // Several tasks per core, so that many requests are in flight.
      shoal::parallel_for(0, K, 1, [&](i64) {
        const i64 old = delegate::fetch_add(hot, i64{1});
        olds.fetch_add(old);
        delegate::fetch_add(seen + old, i64{1});
        for (;;) {
          const i64 v = delegate::read(cas);
          if (delegate::compare_and_swap(cas, v, v + 1)) break;
        }
        successes.fetch_add(1);
      });
      delegate::fetch_add(t, olds.load());
      delegate::fetch_add(t + 1, successes.load());
    });
    hot_final = delegate::read(hot);
    cas_final = delegate::read(cas);
    sum_of_olds = totals[0];
    cas_successes = totals[1];
    readback_bad = totals[2];
    seen_not_once = count_mismatches(seen, static_cast<i64>(C) * K, [](i64) { return i64{1}; });
    own = read_all(slots, C);
    shoal::global_free(slots);
    shoal::global_free(seen);
    shoal::global_free(w);
  });
  if (rank0()) {
    const i64 total = static_cast<i64>(C) * K;
    EXPECT_EQ(hot_core, C - 1);
    EXPECT_EQ(hot_final, total);
    EXPECT_EQ(sum_of_olds, total * (total - 1) / 2);
    EXPECT_EQ(seen_not_once, 0) << "fetch_add returned some previous value twice or never";
    EXPECT_EQ(failed_cas_swapped, 0);
    EXPECT_EQ(cas_final, total);
    EXPECT_EQ(cas_successes, total);
    EXPECT_EQ(readback_bad, 0);
    ASSERT_EQ(own.size(), static_cast<std::size_t>(C));
    for (int c = 0; c < C; ++c) EXPECT_EQ(own[static_cast<std::size_t>(c)], 11 * c + 1) << c;
  }
}

TEST(distributed, AsyncDelegatesWithUserEventAndFutures) {
  const int C = job_cores();
  static constexpr i64 M = 64;     // words spread over every core
  static constexpr i64 reps = 10;  // async_add rounds from the root
  static constexpr i64 K = 100;    // async_fetch_adds on one remote word
  std::vector<i64> sums;
  std::vector<i64> written;
  std::vector<i64> olds;
  i64 remote_call = -1;
  i64 after_void_call = -1;
  i64 read_future = -1;
  int cas_future = -1;
  i64 after_cas = -1;
  i64 after_gce_call = -1;
  run_job([&] {
    const auto a = shoal::global_alloc<i64>(M);
    const auto b = shoal::global_alloc<i64>(M);
    zero(a, M);
    zero(b, M);
    {
      shoal::global_completion_event gce;  // the root's own event
      for (i64 r = 0; r < reps; ++r)
        for (i64 i = 0; i < M; ++i) delegate::async_add(a + i, i + 1, gce);
      for (i64 i = 0; i < M; ++i) delegate::async_write(b + i, 3 * i + 1, gce);
      // Other cores of rank 0 enroll in the same event.
      shoal::global_completion_event* g = &gce;
      shoal::parallel_for(0, M, 1, [a, g](i64 i) { delegate::async_add(a + i, i64{1000}, *g); });
      gce.wait();
      sums = read_all(a, M);
      written = read_all(b, M);
      // A fire-and-forget call on the last core, counted by the same event.
      i64 hb = 0;
      while ((b + hb).core() != C - 1) ++hb;
      const auto target = b + hb;
      delegate::post(
          C - 1, [target] { *target.local() = -8; }, gce);
      gce.wait();
      after_gce_call = delegate::read(target);
    }
    i64 h = 0;
    while ((a + h).core() != C - 1) ++h;
    const auto hot = a + h;
    delegate::write(hot, i64{0});
    std::vector<shoal::future<i64>> futs;
    for (i64 k = 0; k < K; ++k) futs.push_back(delegate::async_fetch_add(hot, i64{1}));
    for (auto& f : futs) olds.push_back(f.get());
    remote_call = delegate::async_call(C - 1, [] {
                    return static_cast<i64>(shoal::mycore()) * 100 + shoal::myrank();
                  }).get();
    delegate::async_call(C - 1, [hot] { *hot.local() += 5; }).get();
    after_void_call = delegate::read(hot);
    read_future = delegate::async_read(hot).get();
    cas_future = delegate::async_compare_and_swap(hot, K + 5, i64{-3}).get() ? 1 : 0;
    after_cas = delegate::read(hot);
    shoal::global_free(b);
    shoal::global_free(a);
  });
  if (rank0()) {
    ASSERT_EQ(sums.size(), static_cast<std::size_t>(M));
    for (i64 i = 0; i < M; ++i) {
      EXPECT_EQ(sums[static_cast<std::size_t>(i)], reps * (i + 1) + 1000) << "word " << i;
      EXPECT_EQ(written[static_cast<std::size_t>(i)], 3 * i + 1) << "word " << i;
    }
    EXPECT_EQ(after_gce_call, -8);
    ASSERT_EQ(olds.size(), static_cast<std::size_t>(K));
    for (i64 k = 0; k < K; ++k)
      EXPECT_EQ(olds[static_cast<std::size_t>(k)], k)
          << "async_fetch_add " << k << " (one sender, one receiver: in order)";
    EXPECT_EQ(remote_call, static_cast<i64>(C - 1) * 100 + (g_ranks - 1));
    EXPECT_EQ(after_void_call, K + 5);
    EXPECT_EQ(read_future, K + 5);
    EXPECT_EQ(cas_future, 1);
    EXPECT_EQ(after_cas, -3);
  }
}

// ------------------------------------------------------ parallel loops

TEST(distributed, ForallOverIndexRangeVisitsEachIndexOnce) {
  const int C = job_cores();
  static constexpr i64 begin = 1000;
  static constexpr i64 N = 1500;
  i64 not_once = -1;
  std::vector<i64> ranks_seen;
  run_job([&] {
    const auto cnt = shoal::global_alloc<i64>(N);
    const auto who = shoal::global_alloc<i64>(N);
    zero(cnt, N);
    zero(who, N);
    shoal::forall(
        begin, begin + N,
        [cnt, who](i64 i) {
          delegate::fetch_add(cnt + (i - begin), i64{1});
          delegate::write(who + (i - begin), static_cast<i64>(shoal::myrank()));
        },
        8);
    not_once = count_mismatches(cnt, N, [](i64) { return i64{1}; });
    ranks_seen = read_all(who, N);
    shoal::global_free(who);
    shoal::global_free(cnt);
  });
  if (rank0()) {
    EXPECT_EQ(not_once, 0) << "some index was not visited exactly once";
    ASSERT_EQ(ranks_seen.size(), static_cast<std::size_t>(N));
    // Core c gets [floor(N*c/C), floor(N*(c+1)/C)); its process runs it.
    for (int c = 0; c < C; ++c) {
      const i64 lo = N * c / C;
      const i64 hi = N * (c + 1) / C;
      for (i64 k = lo; k < hi; ++k)
        EXPECT_EQ(ranks_seen[static_cast<std::size_t>(k)], c / g_cores_per_rank)
            << "index " << begin + k << " of core " << c << "'s share";
    }
  }
}

TEST(distributed, ParallelForInsideEachCore) {
  const int C = job_cores();
  static constexpr i64 M = 600;
  std::vector<i64> res;
  i64 remote_total = -1;
  run_job([&] {
    res.assign(static_cast<std::size_t>(C) * 3, -1);
    const auto r = make_global(res.data());
    i64 total = 0;
    const auto t = make_global(&total);
    shoal::on_all_cores([r, t, C] {
      const int me = shoal::mycore();
      const int rank = shoal::myrank();
      std::atomic<i64> sum{0};
      std::atomic<i64> count{0};
      std::atomic<i64> elsewhere{0};
      shoal::parallel_for(0, M, 16, [&](i64 i) {
        sum.fetch_add(i * C + me);
        count.fetch_add(1);
        if (shoal::myrank() != rank) elsewhere.fetch_add(1);
        if (i % 20 == 0) delegate::fetch_add(t, i64{1});  // iterations may suspend
      });
      delegate::write(r + 3 * me, sum.load());
      delegate::write(r + 3 * me + 1, count.load());
      delegate::write(r + 3 * me + 2, elsewhere.load());
    });
    remote_total = total;
  });
  if (rank0()) {
    ASSERT_EQ(res.size(), static_cast<std::size_t>(C) * 3);
    for (int c = 0; c < C; ++c) {
      const auto k = static_cast<std::size_t>(3 * c);
      EXPECT_EQ(res[k], C * M * (M - 1) / 2 + M * c) << "core " << c;
      EXPECT_EQ(res[k + 1], M) << "core " << c;
      EXPECT_EQ(res[k + 2], 0) << "core " << c << ": an iteration ran on another process";
    }
    EXPECT_EQ(remote_total, static_cast<i64>(C) * (M / 20));
  }
}

TEST(distributed, BarrierPhasesNobodyPassesEarly) {
  const int C = job_cores();
  static constexpr int P = 6;
  std::vector<i64> phase;
  i64 early = -1;
  i64 late = -1;
  run_job([&] {
    phase.assign(P + 1, 0);  // per-phase arrivals, then total arrivals
    i64 too_early = 0;
    i64 too_late = 0;
    const auto ph = make_global(phase.data());
    const auto e = make_global(&too_early);
    const auto l = make_global(&too_late);
    shoal::on_all_cores([ph, e, l, C] {
      for (int p = 0; p < P; ++p) {
        delegate::fetch_add(ph + p, i64{1});
        delegate::fetch_add(ph + P, i64{1});
        shoal::barrier();
        // Everybody arrived at barrier p before anybody left it.
        if (delegate::read(ph + p) != C) delegate::fetch_add(e, i64{1});
        // Nobody has left barrier p + 1 yet (this core has not reached it).
        const i64 all = delegate::read(ph + P);
        if (all < static_cast<i64>(p + 1) * C) delegate::fetch_add(e, i64{1});
        if (all > static_cast<i64>(p + 2) * C) delegate::fetch_add(l, i64{1});
      }
      shoal::barrier();
    });
    early = too_early;
    late = too_late;
  });
  if (rank0()) {
    EXPECT_EQ(early, 0) << "a core passed a barrier before every core had arrived";
    EXPECT_EQ(late, 0) << "a core ran more than one phase ahead";
    ASSERT_EQ(phase.size(), static_cast<std::size_t>(P + 1));
    for (int p = 0; p < P; ++p) EXPECT_EQ(phase[static_cast<std::size_t>(p)], C) << "phase " << p;
    EXPECT_EQ(phase[P], static_cast<i64>(P) * C);
  }
}

TEST(distributed, CollectivesCombineEveryCoreOfEveryProcess) {
  const int C = job_cores();
  static constexpr int R = 40;  // rounds, back to back
  static constexpr i64 L = 37;  // span length: three 128-byte chunks of int64
  std::vector<i64> wrong_count;
  run_job([&] {
    i64 wrong = 0;
    const auto w = make_global(&wrong);
    shoal::on_all_cores([w, C] {
      const i64 me = shoal::mycore();
      i64 bad = 0;
      for (int r = 0; r < R; ++r) {
        if (shoal::allreduce_sum(me + r) != static_cast<i64>(C) * (C - 1) / 2 + C * r) ++bad;
        if (shoal::allreduce_max(me * r) != static_cast<i64>(C - 1) * r) ++bad;
        const auto scan = shoal::exclusive_scan_sum(me + 1);
        if (scan.before != me * (me + 1) / 2 || scan.total != static_cast<i64>(C) * (C + 1) / 2) ++bad;
        std::vector<i64> v(static_cast<std::size_t>(L));
        for (i64 i = 0; i < L; ++i) v[static_cast<std::size_t>(i)] = i * me + r;
        shoal::allreduce_sum(std::span<i64>(v));
        for (i64 i = 0; i < L; ++i)
          if (v[static_cast<std::size_t>(i)] != i * C * (C - 1) / 2 + C * r) ++bad;
        // Doubles: combined in core order, so identical on every core.
        const double d = shoal::allreduce_sum(1.0 / static_cast<double>(me + 3 + r));
        const double lowest = shoal::allreduce_min(d);
        if (shoal::allreduce_max(d) != lowest) ++bad;
      }
      if (bad != 0) delegate::fetch_add(w, bad);
    });
    wrong_count.push_back(wrong);
  });
  if (rank0()) {
    ASSERT_EQ(wrong_count.size(), 1u);
    EXPECT_EQ(wrong_count[0], 0) << "collective results differ from the closed forms";
  }
}

// ------------------------------------------------------------- futures

TEST(distributed, FuturesFulfilledOnAnotherRank) {
  const int C = job_cores();
  i64 value = -1;
  bool void_ready = false;
  i64 chained = -1;
  i64 forwarded = -1;
  i64 errors = -1;
  run_job([&] {
    {
      auto [p, f] = shoal::make_promise_pair<i64>();
      const shoal::promise<i64> pr = p;
      shoal::send(C - 1,
                  [pr] { pr.set_value(static_cast<i64>(shoal::mycore()) * 10 + shoal::myrank()); });
      value = f.get();
    }
    {
      auto [p, f] = shoal::make_promise_pair<void>();
      const shoal::promise<void> pr = p;
      // Fulfilled by a task of the last core after a round trip to core 0.
      shoal::send(C - 1, [pr] {
        shoal::spawn([pr] {
          delegate::call(0, [] { return 1; });
          pr.set_value();
        });
      });
      f.wait();
      void_ready = f.ready();
    }
    {
      auto f = delegate::async_call(C - 1, [] { return i64{21}; });
      chained = std::move(f).then([](i64 x) { return 2 * x; }).get();
    }
    {
      // Forwarded through a core in the middle of the job to the last core.
      auto [p, f] = shoal::make_promise_pair<i64>();
      const shoal::promise<i64> pr = p;
      const int mid = (C - 1) / 2;
      shoal::send(mid, [pr, C] {
        shoal::send(C - 1, [pr] { pr.set_value(static_cast<i64>(shoal::mycore()) + 500); });
      });
      forwarded = f.get();
    }
    // Futures on every core, fulfilled one rank further on.
    i64 bad = 0;
    const auto b = make_global(&bad);
    shoal::on_all_cores([b, C] {
      const int me = shoal::mycore();
      const int target = (me + shoal::local_cores()) % C;
      auto [p, f] = shoal::make_promise_pair<i64>();
      const shoal::promise<i64> pr = p;
      shoal::send(target, [pr] { pr.set_value(static_cast<i64>(shoal::mycore())); });
      if (f.get() != target) delegate::fetch_add(b, i64{1});
    });
    errors = bad;
  });
  if (rank0()) {
    EXPECT_EQ(value, static_cast<i64>(C - 1) * 10 + (g_ranks - 1));
    EXPECT_TRUE(void_ready);
    EXPECT_EQ(chained, 42);
    EXPECT_EQ(forwarded, C - 1 + 500);
    EXPECT_EQ(errors, 0);
  }
}

// ------------------------------------------------------------ idle cores

// The lone-yield rule (tasks/scheduler.cpp, test_tasks.cpp's lone_yield at
// one process) on every core of every process: a task that yields with
// nothing else ready on its core offers the CPU to the OS under --idle
// sleep, and never under spin. Each core reads its own os_yields counter
// (stats_per_core() is this process's cores, by local index) around 200
// yields; the root gathers every core's count.
std::vector<i64> lone_yields_on_every_core(shoal::idle_kind idle) {
  const int C = job_cores();
  std::vector<i64> gained(static_cast<std::size_t>(C), -1);
  shoal::config cfg = job_config();
  cfg.idle = idle;
  shoal::init(cfg);
  shoal_test::run_once([&] {
    const auto g = make_global(gained.data());
    shoal::on_all_cores([g] {
      const int me = shoal::mycore();
      const auto local = static_cast<std::size_t>(me % shoal::local_cores());
      const std::uint64_t before = shoal::stats_per_core()[local].os_yields;
      for (int i = 0; i < 200; ++i) shoal::yield();
      const std::uint64_t after = shoal::stats_per_core()[local].os_yields;
      delegate::write(g + me, static_cast<i64>(after - before));
    });
  });
  shoal::finalize();
  return gained;
}

TEST(distributed, LoneYieldsOfferTheCpuUnderSleepOnlyOnEveryCore) {
  const std::vector<i64> sleep = lone_yields_on_every_core(shoal::idle_kind::sleep);
  const std::vector<i64> spin = lone_yields_on_every_core(shoal::idle_kind::spin);
  if (rank0()) {
    for (int c = 0; c < job_cores(); ++c) {
      const auto k = static_cast<std::size_t>(c);
      EXPECT_GE(sleep[k], 200) << "core " << c << " under --idle sleep";
      EXPECT_EQ(spin[k], 0) << "core " << c << " under --idle spin";
    }
  }
}

// ----------------------------------------------- runs, init, exceptions

TEST(distributed, SeveralRunsInOneInit) {
  const int C = job_cores();
  static constexpr i64 N = 200;
  global_ptr<i64> a;       // rank 0 only: kept between runs
  global_ptr<i64> sums;    // rank 0 only
  shoal::channel<i64> ch;  // rank 0 only
  i64 bad_after_second = -1;
  std::vector<i64> channel_sums;
  std::vector<i64> run_root_cores;
  shoal::init(job_config());
  {
    SCOPED_TRACE("first run");
    shoal_test::run_once([&] {
      run_root_cores.push_back(shoal::mycore());
      a = shoal::global_alloc<i64>(N);
      shoal::forall(a, N, [](i64 i, i64& x) { x = 5 * i; });
      sums = shoal::global_alloc<i64>(static_cast<i64>(C) * words_per_block);
      zero(sums, static_cast<i64>(C) * words_per_block);
      const auto s = sums;
      ch = shoal::make_channel<i64>(
          [s](const i64& v) { *(s + shoal::mycore() * words_per_block).local() += v; });
    });
  }
  // Fire and forget: run() returns only when every message and channel
  // value of the whole job has been handled.
  {
    SCOPED_TRACE("second run");
    shoal_test::run_once([&] {
      run_root_cores.push_back(shoal::mycore());
      const auto p = a;
      const auto c = ch;
      shoal::on_all_cores([p, c, C] {
        const int me = shoal::mycore();
        for (i64 i = 0; i < N; ++i) {
          const auto q = p + i;
          shoal::send(q.core(), [q] { *q.local() += 1; });
        }
        for (int d = 0; d < C; ++d)
          for (i64 k = 1; k <= 10; ++k) c.send(d, k * 100 + me);
      });
    });
  }
  {
    SCOPED_TRACE("third run");
    shoal_test::run_once([&] {
      run_root_cores.push_back(shoal::mycore());
      bad_after_second = count_mismatches(a, N, [C](i64 i) { return 5 * i + C; });
      for (int d = 0; d < C; ++d)
        channel_sums.push_back(delegate::read(sums + d * words_per_block));
      ch.close();
      shoal::global_free(sums);
      shoal::global_free(a);
    });
  }
  shoal::finalize();
  EXPECT_FALSE(shoal::initialized());
  if (rank0()) {
    EXPECT_EQ(run_root_cores, (std::vector<i64>{0, 0, 0}));
    EXPECT_EQ(bad_after_second, 0);
    ASSERT_EQ(channel_sums.size(), static_cast<std::size_t>(C));
    // Each receiver got k*100 + s for k in 1..10 from every sender s.
    for (int d = 0; d < C; ++d)
      EXPECT_EQ(channel_sums[static_cast<std::size_t>(d)],
                5500 * static_cast<i64>(C) + 10 * static_cast<i64>(C) * (C - 1) / 2)
          << "receiver " << d;
  }
}

TEST(distributed, InitAndFinalizeTwiceWithDifferentBlocks) {
  const int C = job_cores();
  static constexpr i64 N = 300;
  for (const i64 bb : {i64{128}, i64{64}}) {
    shoal::config cfg = job_config();
    cfg.block_bytes = bb;
    i64 wrong_home = -1;
    i64 wrong_where = -1;
    i64 cores_counted = -1;
    i64 block_seen = -1;
    shoal_test::run_checked(cfg, [&] {
      block_seen = shoal::current_config().block_bytes;
      const auto w = shoal::global_alloc<i64>(N);
      wrong_home = 0;
      for (i64 i = 0; i < N; ++i)
        if ((w + i).core() != (i * 8 / bb) % C) ++wrong_home;
      shoal::forall(w, N, [](i64, i64& x) { x = shoal::mycore(); });
      wrong_where = count_mismatches(w, N, [bb, C](i64 i) { return (i * 8 / bb) % C; });
      i64 counted = 0;
      const auto t = make_global(&counted);
      shoal::on_all_cores([t] { delegate::fetch_add(t, i64{1}); });
      cores_counted = counted;
      shoal::global_free(w);
    });
    EXPECT_FALSE(shoal::initialized());
    if (rank0()) {
      EXPECT_EQ(block_seen, bb);
      EXPECT_EQ(wrong_home, 0) << "block " << bb;
      EXPECT_EQ(wrong_where, 0) << "block " << bb;
      EXPECT_EQ(cores_counted, C) << "block " << bb;
    }
  }
}

// The array of the quiescence test, known to every process (set by message).
std::atomic<std::uint64_t> g_shared_array{0};

// Forwards an increment of *q around the ring of cores `hops` times, then
// applies it at q's home.
void hop(global_ptr<i64> q, int hops) {
  if (hops == 0) {
    shoal::send(q.core(), [q] { ++*q.local(); });
    return;
  }
  shoal::send((shoal::mycore() + 1) % shoal::cores(), [q, hops] { hop(q, hops - 1); });
}

TEST(distributed, RunReturnsOnlyWhenFireAndForgetWorkIsDoneEverywhere) {
  const int C = job_cores();
  static constexpr int rounds = 5;
  const i64 N = static_cast<i64>(C) * words_per_block * 4;
  shoal::init(job_config());
  {
    SCOPED_TRACE("allocating run");
    shoal_test::run_once([&] {
      const auto a = shoal::global_alloc<i64>(N);
      zero(a, N);
      shoal::on_all_cores([a] { g_shared_array.store(a.bits()); });
    });
  }
  // Checked by every process's main thread on its own cores' elements, as
  // soon as run() has returned there: every increment of this run must have
  // been applied, and none of a later run (another rank may start its next
  // run as soon as its own run() has returned). Returns a description of
  // the mismatches, empty when there are none.
  const auto local_mismatches = [N](i64 expected) {
    const auto a = global_ptr<i64>::from_bits(g_shared_array.load());
    i64 fewer = 0;
    i64 more = 0;
    std::string example;
    for (i64 i = 0; i < N; ++i) {
      if (shoal::rank_of((a + i).core()) != shoal::myrank()) continue;
      const i64 got = *(a + i).local();
      if (got == expected) continue;
      ++(got < expected ? fewer : more);
      if (example.empty())
        example = "; e.g. element " + std::to_string(i) + " = " + std::to_string(got) +
                  ", expected " + std::to_string(expected);
    }
    if (fewer + more == 0) return std::string();
    return std::to_string(fewer) + " elements short of this run's increments, " +
           std::to_string(more) + " with extra increments (from the next run)" + example;
  };
  for (int r = 1; r <= rounds; ++r) {
    SCOPED_TRACE("fire-and-forget run " + std::to_string(r));
    shoal_test::run_once([&] {
      const auto a = global_ptr<i64>::from_bits(g_shared_array.load());
      // One increment per element from every core, straight to its home...
      shoal::on_all_cores([a, N] {
        for (i64 i = 0; i < N; ++i) {
          const auto q = a + i;
          shoal::send(q.core(), [q] { ++*q.local(); });
        }
      });
      // ...and one more that first travels twice around every core; the
      // root does not wait for any of them.
      const int hops = 2 * C;
      for (i64 i = 0; i < N; ++i) {
        const auto q = a + i;
        shoal::send(1 % C, [q, hops] { hop(q, hops); });
      }
    });
    EXPECT_EQ(local_mismatches(static_cast<i64>(r) * (C + 1)), "")
        << "rank " << g_rank << ": local memory after run() returned";
  }
  {
    SCOPED_TRACE("freeing run");
    shoal_test::run_once(
        [&] { shoal::global_free(global_ptr<i64>::from_bits(g_shared_array.load())); });
  }
  shoal::finalize();
}

struct root_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TEST(distributed, ExceptionFromRootIsRethrownOnRankZeroOnly) {
  const int C = job_cores();
  static constexpr i64 per_core = 50;
  bool threw = false;
  std::string what;
  global_ptr<i64> counters;  // rank 0 only
  i64 bad = -1;
  shoal::init(job_config());
  {
    shoal_test::watchdog dog(shoal_test::default_run_limit);
    try {
      shoal::run([&] {
        counters = shoal::global_alloc<i64>(C);
        zero(counters, C);
        const auto c = counters;
        // Work still in flight when the root throws: run() must wait for it.
        shoal::on_all_cores([c, C] {
          for (i64 k = 0; k < per_core; ++k)
            for (int d = 0; d < C; ++d) {
              const auto q = c + d;
              shoal::send(q.core(), [q] { *q.local() += 1; });
            }
        });
        for (int d = 0; d < C; ++d) {
          const auto q = counters + d;
          shoal::send(q.core(), [q] { *q.local() += 1000; });
        }
        throw root_failure("root failed on purpose");
      });
    } catch (const root_failure& e) {
      threw = true;
      what = e.what();
    }
  }
  {
    SCOPED_TRACE("first run, whose root throws");
    shoal_test::expect_clean_teardown();
  }
  // The runtime is usable after the exception.
  {
    SCOPED_TRACE("second run, after the exception");
    shoal_test::run_once([&] {
      bad = count_mismatches(
          counters, C, [](i64) { return 1000 + static_cast<i64>(shoal::cores()) * per_core; });
      shoal::global_free(counters);
    });
  }
  shoal::finalize();
  if (rank0()) {
    EXPECT_TRUE(threw) << "run() did not rethrow the root's exception on rank 0";
    EXPECT_EQ(what, "root failed on purpose");
    EXPECT_EQ(bad, 0);
  } else {
    EXPECT_FALSE(threw) << "run() threw on rank " << g_rank << ", where no root ran";
  }
}

}  // namespace

SHOAL_DIST_MAIN()
