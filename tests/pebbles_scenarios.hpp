// Scenarios for target channels, distributions and message reductions,
// shared by tests/test_distribution.cpp, tests/test_reduction.cpp (one
// process) and tests/mpi/dist_pebbles.cpp (several processes).
//
// SPMD: every core sends to every target of [0, n) from its task, then the
// channel's end_phase; handlers check on the owner that the record arrived
// where the distribution says (core and local index) and count. Job-wide
// sums (allreduce) are compared with closed forms by global core 0, which
// writes them to globals checked after run() (g_check_here: this process
// checks them).
#pragma once

#include "shoal/shoal.hpp"

#include <climits>
#include <concepts>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace pebbles {

using i64 = std::int64_t;
using u64 = std::uint64_t;

inline bool g_check_here = true;

enum class kind { block, cyclic, block_cyclic, hashed };

/// A distribution of any of the built-in kinds over the job's cores.
struct any_distribution {
  kind k = kind::block;
  u64 n = 0;
  int cores = 1;
  shoal::target_location locate(u64 t) const {
    switch (k) {
      case kind::block:
        return shoal::block_distribution(n, cores).locate(t);
      case kind::cyclic:
        return shoal::cyclic_distribution(cores).locate(t);
      case kind::block_cyclic:
        return shoal::block_cyclic_distribution(3, cores).locate(t);
      case kind::hashed:
        return shoal::hashed_distribution(cores, 11).locate(t);
    }
    return {};
  }
  u64 targets() const { return n; }
  const char* name() const { return "any_distribution"; }
};

/// Per-core state (threads are new in every run).
struct core_state {
  i64 handled = 0;
  i64 misplaced = 0;
  i64 value_sum = 0;
  std::vector<i64> per_local;  // reductions: the value seen per local index
};
inline thread_local core_state t_state;

/// Results, written by global core 0.
inline i64 g_handled = 0, g_misplaced = 0, g_value_sum = 0, g_hits = 0, g_lookups = 0, g_wrong = 0,
           g_forwarded = 0;

inline void publish(i64 hits = 0, i64 lookups = 0, i64 wrong = 0, i64 forwarded = 0) {
  const bool first_of_process = shoal::mycore() % shoal::local_cores() == 0;
  const i64 h = shoal::allreduce_sum(t_state.handled);
  const i64 m = shoal::allreduce_sum(t_state.misplaced);
  const i64 v = shoal::allreduce_sum(t_state.value_sum);
  const i64 hi = shoal::allreduce_sum(first_of_process ? hits : i64{0});
  const i64 lo = shoal::allreduce_sum(first_of_process ? lookups : i64{0});
  const i64 w = shoal::allreduce_sum(wrong);
  const i64 f = shoal::allreduce_sum(first_of_process ? forwarded : i64{0});
  if (shoal::mycore() == 0) {
    g_handled = h;
    g_misplaced = m;
    g_value_sum = v;
    g_hits = hi;
    g_lookups = lo;
    g_wrong = w;
    g_forwarded = f;
  }
}

/// Value target t carries: t + 1 (so the owner can check where t landed).
struct placed {
  any_distribution d;
  void operator()(u64 local, const i64& v) const {
    const shoal::target_location at = d.locate(static_cast<u64>(v - 1));
    if (at.core != shoal::mycore() || at.local != local) ++t_state.misplaced;
    ++t_state.handled;
    t_state.value_sum += v;
  }
};

/// publish() of the values this process's cores forwarded on `ch` at
/// routing hops (from one core of each process).
template <class C>
void publish_forwarded(const C& ch) {
  publish(0, 0, 0, static_cast<i64>(ch.local_route_stats().forwarded));
}

/// Closes the channel of handle `ch` (through a copy: a job's lambda may
/// hold it const).
template <class C>
void close_handle(C ch) {
  ch.close();
}

/// What check_sums and check_keyed_sums expect (on the process that
/// checks): each of the `cores` cores sent t + 1 to every target t of
/// [0, n), and each value was handled once, by the owner of its target.
inline void expect_sums(int cores, u64 n) {
  if (!g_check_here) return;
  const i64 nn = static_cast<i64>(n);
  EXPECT_EQ(g_handled, cores * nn);
  EXPECT_EQ(g_misplaced, 0);
  EXPECT_EQ(g_value_sum, cores * nn * (nn + 1) / 2);
}

/// Every core sends t + 1 to every target t: each lands where the
/// distribution says, exactly once per sending core.
/// With a routing (routing.hpp), values between processes take its hops.
template <class Job, class Route = shoal::direct_routing>
void check_sums(Job job, int cores, kind k, bool short_circuit = true, Route route = {},
                std::uint32_t max_in_flight = 0) {
  const u64 n = 997;  // prime: blocks and cycles do not divide it
  job([n, k, short_circuit, route, max_in_flight] {
    const any_distribution d{k, n, shoal::cores()};
    auto ch = shoal::make_target_channel<i64>(
        d, placed{d}, {.max_in_flight = max_in_flight, .short_circuit = short_circuit},
        shoal::reduction::none{}, route);
    shoal::on_all_cores([ch, n] {
      for (u64 t = 0; t < n; ++t) ch.send(t, static_cast<i64>(t + 1));
      ch.end_phase();
      publish_forwarded(ch);
    });
    close_handle(ch);
  });
  expect_sums(cores, n);
}

/// Cascades on a target channel: every handled value with ttl > 0 sends one
/// on to a pseudo-random target (local ones short-circuit, nested).
struct cascade_value {
  std::int32_t ttl;
  std::uint32_t pad;
  u64 seed;
};
template <class Route>
inline thread_local shoal::target_channel<cascade_value, shoal::block_distribution,
                                          shoal::reduction::none, Route>
    t_cascade;
inline u64 mix(u64 x) { return shoal::hashed_distribution::mix(x + 0x9e3779b97f4a7c15ULL); }

template <class Job, class Route = shoal::direct_routing>
void check_cascade(Job job, int cores, Route route = {}) {
  constexpr int starts = 200, ttl = 12;
  constexpr u64 n = 500;
  job([route] {
    shoal::block_distribution d(n, shoal::cores());
    auto ch = shoal::make_target_channel<cascade_value>(
        d,
        [](u64, const cascade_value& v) {
          ++t_state.handled;
          if (v.ttl > 0) t_cascade<Route>.send(mix(v.seed) % n, {v.ttl - 1, 0, mix(v.seed)});
        },
        {}, shoal::reduction::none{}, route);
    // Every core knows the handle before any value can reach it.
    shoal::on_all_cores([ch] { t_cascade<Route> = ch; });
    shoal::on_all_cores([ch] {
      for (int i = 0; i < starts; ++i)
        ch.send(static_cast<u64>(i) % n, {ttl, 0, static_cast<u64>(shoal::mycore() * 7919 + i)});
      ch.end_phase();
      publish();
    });
    close_handle(ch);
  });
  if (!g_check_here) return;
  EXPECT_EQ(g_handled, static_cast<i64>(cores) * starts * (ttl + 1));
}

// ---------------------------------------------------- depth-limited phases

/// A value of a dependent chain: its depth, and the depth the chain stops at.
struct chain_value {
  std::int32_t depth;
  std::int32_t last;
  u64 seed;
};
inline thread_local shoal::channel<chain_value> t_chain;
inline thread_local std::array<i64, 8> t_by_depth{};

/// Every core sends `starts` values (depth 1) to pseudo-random cores; a
/// handler of a value below `last` sends one on at the next depth. The phase
/// ends with end_phase_depth(`rounds`); each depth's count, summed over the
/// job at that moment, must be cores * starts (checked on rank 0 through
/// g_wrong: depths whose count differs).
template <class Job>
void check_depth(Job job, int cores, int last, int rounds) {
  constexpr int starts = 300;
  job([last, rounds] {
    auto ch = shoal::make_channel<chain_value>([](const chain_value& v) {
      ++t_by_depth[static_cast<std::size_t>(v.depth)];
      if (v.depth < v.last) {
        const u64 next = mix(v.seed);
        t_chain.send(static_cast<int>(next % static_cast<u64>(shoal::cores())),
                     {v.depth + 1, v.last, next});
      }
    });
    shoal::on_all_cores([ch] {
      t_chain = ch;
      t_by_depth = {};
    });
    shoal::on_all_cores([ch, last, rounds] {
      for (int i = 0; i < starts; ++i) {
        const u64 seed = mix(static_cast<u64>(shoal::mycore()) * 7919 + static_cast<u64>(i));
        ch.send(static_cast<int>(seed % static_cast<u64>(shoal::cores())), {1, last, seed});
      }
      ch.end_phase_depth(rounds);
      i64 wrong = 0;
      for (int d = 1; d <= last; ++d) {
        const i64 total = shoal::allreduce_sum(t_by_depth[static_cast<std::size_t>(d)]);
        if (total != static_cast<i64>(shoal::cores()) * starts) ++wrong;
      }
      publish(0, 0, wrong);
      ch.end_phase_depth(1);  // an empty phase after: rounds repeat
    });
    close_handle(ch);
  });
  if (!g_check_here) return;
  (void)cores;
  EXPECT_EQ(g_wrong, 0) << "a depth's values were not all handled when the phase ended";
}

// ------------------------------------------------------------ reductions

enum class op { min, max, sum, drop };

inline i64 sent_value(int core, int round, u64 t) {
  return static_cast<i64>(mix(static_cast<u64>(core) * 1000003ULL +
                              static_cast<u64>(round) * 7919ULL + t * 104729ULL) %
                          100000) +
         1;
}
inline i64 fold_start(op o) { return o == op::min ? INT64_MAX : o == op::max ? INT64_MIN : 0; }
inline i64 fold(op o, i64 a, i64 b) {
  switch (o) {
    case op::min:
      return b < a ? b : a;
    case op::max:
      return a < b ? b : a;
    case op::sum:
      return a + b;
    case op::drop:
      return a + 1;  // counts the values that arrived
  }
  return a;
}

struct folding {
  op o;
  void operator()(u64 local, const i64& v) const {
    ++t_state.handled;
    i64& slot = t_state.per_local[local];
    slot = fold(o, slot, v);
  }
};

/// Every core sends `rounds` values to each of n targets, the rounds of one
/// target back to back (so they meet in the source cache). The owner checks
/// each target's fold against the closed form over every core and round;
/// every value is handled or folded: handled + hits == cores * n * rounds.
/// block_distribution without local_count(): a target channel in
/// combine-until-flush mode then combines in a hash table, not in arrays.
struct uncounted_block {
  shoal::block_distribution d;
  shoal::target_location locate(u64 t) const noexcept { return d.locate(t); }
  u64 global(int core, u64 l) const noexcept { return d.global(core, l); }
  u64 targets() const noexcept { return d.targets(); }
};

/// `combine`: the channel combines until flush (target_channel.hpp), half
/// of the values through send() and half through combining() and
/// local_combine()'s sender; every core
/// then sends exactly one record per target.
template <class R, class Job, class Route = shoal::direct_routing,
          class Dist = shoal::block_distribution>
void check_reduction(Job job, int cores, op o, bool short_circuit, std::uint32_t slots,
                     Route route = {}, bool combine = false) {
  constexpr u64 n = 600;
  constexpr int rounds = 6;
  job([o, short_circuit, slots, route, combine] {
    const shoal::block_distribution block(n, shoal::cores());
    Dist d{block};
    auto ch = shoal::make_target_channel<i64>(
        d, folding{o},
        {.cache_slots = slots, .short_circuit = short_circuit, .combine_until_flush = combine}, R{},
        route);
    shoal::on_all_cores([block, o] {
      t_state.per_local.assign(block.local_count(shoal::mycore()), fold_start(o));
    });
    shoal::on_all_cores([ch, o, combine] {
      const Dist& d = ch.distribution();
      if (combine) {
        ch.local_combine([&](const auto& lc) {
          const auto to = ch.combining();
          for (u64 t = 0; t < n; ++t)
            for (int r = 0; r < rounds; ++r)
              if (r == 4)
                lc.send(t, sent_value(shoal::mycore(), r, t));
              else if (r % 2 == 0)
                to.send(t, sent_value(shoal::mycore(), r, t));
              else
                ch.send(t, sent_value(shoal::mycore(), r, t));
        });
      } else {
        for (u64 t = 0; t < n; ++t)
          for (int r = 0; r < rounds; ++r) ch.send(t, sent_value(shoal::mycore(), r, t));
      }
      ch.end_phase();
      i64 wrong = 0;
      for (u64 l = 0; l < t_state.per_local.size(); ++l) {
        const u64 t = d.global(shoal::mycore(), l);
        i64 want = fold_start(o);
        for (int c = 0; c < shoal::cores(); ++c)
          for (int r = 0; r < rounds; ++r)
            want = o == op::drop ? want : fold(o, want, sent_value(c, r, t));
        const i64 got = t_state.per_local[l];
        // drop_duplicates: at least one value from each source, at most all.
        if (o == op::drop ? got < shoal::cores() || got > shoal::cores() * rounds : got != want)
          ++wrong;
      }
      const shoal::reduction_stats st = ch.local_reduction_stats();
      publish(static_cast<i64>(st.hits), static_cast<i64>(st.lookups), wrong,
              static_cast<i64>(ch.local_route_stats().forwarded));
    });
    close_handle(ch);
  });
  if (!g_check_here) return;
  const i64 total = static_cast<i64>(cores) * static_cast<i64>(n) * rounds;
  EXPECT_EQ(g_wrong, 0);
  // Every value is handled or folded once; forwarded ones are looked up
  // again at their hop.
  EXPECT_EQ(g_handled + g_hits, total);
  if (combine) {
    // At most one record per (core, target): every duplicate removed at the
    // source (and more at routing hops, which look values up again).
    if constexpr (std::same_as<Route, shoal::direct_routing>) {
      EXPECT_EQ(g_handled, static_cast<i64>(cores) * static_cast<i64>(n));
    } else {
      EXPECT_LE(g_handled, static_cast<i64>(cores) * static_cast<i64>(n));
    }
    EXPECT_EQ(g_lookups, total + g_forwarded);
  } else if (!short_circuit) {
    EXPECT_EQ(g_lookups, total + g_forwarded);
    EXPECT_GT(g_hits, total / 2) << "back-to-back values for one target should meet";
  }
}

}  // namespace pebbles
