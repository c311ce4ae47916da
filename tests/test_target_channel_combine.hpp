// Combine until flush over a flat combiner (target_channel.hpp,
// detail/local_combiner.hpp): the sums a target's owner receives equal the
// sequential sum of every value sent to it, whichever way the flush goes
// (the marks scanned in target order when many targets were reached, the
// list of reached targets when few were), with one record per (sending
// core, target reached) and the statistics to match. Shared by
// tests/test_distribution.cpp (one process, 1, 2 and 4 cores) and
// tests/mpi/dist_pebbles.cpp (1 x 2, 2 x 2, 3 x 2, 4 x 1).
#pragma once

#include "shoal/shoal.hpp"

#include <cstdint>
#include <span>
#include <vector>

#include <gtest/gtest.h>

namespace combine_check {

using i64 = std::int64_t;
using u64 = std::uint64_t;

/// Per core (threads are new in every run).
struct core_state {
  std::vector<i64> sums;  // by local index
  i64 records = 0;        // handler calls
};
inline thread_local core_state t_state;

/// Results, written by global core 0; g_check_here: this process checks.
inline bool g_check_here = true;
inline i64 g_wrong = 0, g_records = 0, g_lookups = 0, g_hits = 0, g_expected_records = 0;

struct add_up {
  void operator()(u64 local, const i64& v) const {
    ++t_state.records;
    t_state.sums[local] += v;
  }
};

inline constexpr u64 targets = 4096;
inline constexpr int rounds = 4;
/// The value core c sends to target t in round r (distinct per triple).
inline i64 value(int c, int r, u64 t) { return (c + 1) * 1000003 + r * 7919 + static_cast<i64>(t); }
/// Phase `p`'s targets of core c: every target (p = 0, dense: the flush
/// scans the marks), or 8 scattered ones (p = 1, sparse: the list).
inline std::vector<u64> targets_of(int p, int c) {
  std::vector<u64> out;
  if (p == 0) {
    for (u64 k = 0; k < targets; ++k)
      out.push_back((k * 1031 + static_cast<u64>(c) * 13) % targets);
  } else {
    for (u64 k = 0; k < 8; ++k) out.push_back((static_cast<u64>(c) * 37 + k * 509) % targets);
  }
  return out;
}

/// Two phases (dense, then sparse) on one channel; each core sends every
/// round of its targets, rounds 0 mod 4 through combining(), 2 mod 4
/// through local_combine()'s sender, odd ones through send(); the sparse
/// phase ends inside local_combine. After each phase every owner compares its sums with the
/// sequential sum over every core's values.
/// `drop_identity`: the combiner without marks (every value here is
/// positive, so every target reached has a sum other than 0 and is sent).
/// `own_in_place` (with drop_identity): a core's own targets get no
/// record; their sums are read from local_own_values() and cleared there.
template <class Job>
void check_combined_sums(Job job, int cores, bool drop_identity = false,
                         bool own_in_place = false) {
  job([drop_identity, own_in_place] {
    const shoal::block_distribution d(targets, shoal::cores());
    auto ch = shoal::make_target_channel<i64>(
        d, add_up{},
        {.combine_until_flush = true, .drop_identity = drop_identity, .own_in_place = own_in_place},
        shoal::reduction::sum{});
    // Every core's sums exist before any core's values arrive.
    shoal::on_all_cores([d] {
      t_state = {};
      t_state.sums.assign(d.local_count(shoal::mycore()), 0);
    });
    shoal::on_all_cores([ch] {
      const shoal::block_distribution& d = ch.distribution();
      const int me = shoal::mycore();
      std::vector<i64> want(t_state.sums.size(), 0);
      i64 wrong = 0;
      i64 expected = 0;  // records: one per (core, distinct target) of each phase
      for (int p = 0; p < 2; ++p) {
        ch.local_combine([&](const auto& lc) {
          const auto to = ch.combining();
          for (int r = 0; r < rounds; ++r)
            for (const u64 t : targets_of(p, me)) {
              if (r % 4 == 0) {
                to.send(t, value(me, r, t));
              } else if (r % 4 == 2) {
                lc.send(t, value(me, r, t));
              } else {
                ch.send(t, value(me, r, t));
              }
            }
          // The sparse phase ends inside local_combine: what its sender
          // added travels all the same.
          if (p == 1) ch.end_phase();
        });
        if (p == 0) ch.end_phase();
        for (int c = 0; c < shoal::cores(); ++c) {
          std::vector<bool> reached(targets, false);
          for (const u64 t : targets_of(p, c)) {
            const shoal::target_location at = d.locate(t);
            // In place, a core's own targets stay in its combiner: no record.
            if (!reached[t] && !(ch.own_in_place() && at.core == c)) ++expected;
            reached[t] = true;
            if (at.core != me) continue;
            for (int r = 0; r < rounds; ++r) want[at.local] += value(c, r, t);
          }
        }
        if (ch.own_in_place()) {
          const std::span<i64> own = ch.local_own_values();
          wrong += own.size() != want.size();
          for (std::size_t l = 0; l < own.size() && l < want.size(); ++l) {
            t_state.sums[l] += own[l];
            own[l] = 0;  // consumed: the identity back for the next phase
          }
        }
        for (std::size_t l = 0; l < want.size(); ++l) wrong += want[l] != t_state.sums[l];
        // No core's next phase reaches this core before it has checked.
        shoal::barrier();
      }
      const bool first = me % shoal::local_cores() == 0;
      const shoal::reduction_stats s = ch.local_reduction_stats();
      const i64 w = shoal::allreduce_sum(wrong);
      const i64 rec = shoal::allreduce_sum(t_state.records);
      const i64 lo = shoal::allreduce_sum(first ? static_cast<i64>(s.lookups) : i64{0});
      const i64 hi = shoal::allreduce_sum(first ? static_cast<i64>(s.hits) : i64{0});
      if (me == 0) {
        g_wrong = w;
        g_records = rec;
        g_lookups = lo;
        g_hits = hi;
        g_expected_records = expected;
      }
    });
    auto c = ch;
    c.close();
  });
  if (!g_check_here) return;
  EXPECT_EQ(g_wrong, 0) << "targets whose sum differs from the sequential sum";
  EXPECT_EQ(g_records, g_expected_records) << "one record per (core, target reached)";
  EXPECT_EQ(g_lookups, i64{cores} * rounds * static_cast<i64>(targets + 8)) << "every value sent";
  EXPECT_EQ(g_hits, g_lookups - g_records) << "hits are the values folded into another";
}

}  // namespace combine_check
