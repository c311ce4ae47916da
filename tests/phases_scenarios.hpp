// Scenarios for draining barriers, channel phases and flow control, shared
// by tests/test_phases.cpp (one process, 1/2/4 cores) and
// tests/mpi/dist_phases.cpp (1x2, 2x2, 3x2).
//
// Every message carries its phase; a handler counts it in its core's
// per-phase counter and, while its TTL lasts, sends a successor to a
// pseudo-random core (a cascade). A core snapshots its counter of phase p
// the moment its barrier()/end_phase() of phase p returns; the snapshots,
// summed over the job (allreduce), must equal the number of messages of
// the phase computed in closed form: cores * starts * (ttl + 1). A barrier
// that does not drain leaves some cascades unhandled at the snapshot.
// Each scenario is run from the root task; results land in globals written
// by global core 0 and are checked on rank 0 after run().
#pragma once

#include "shoal/shoal.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <span>

namespace phases {

using i64 = std::int64_t;
constexpr int max_phases = 24;
constexpr int max_cores = 64;

/// One core's counters (the SPMD task and the handlers of a core share its
/// thread; threads are new in every run, so these start at zero).
struct core_counts {
  std::array<i64, max_phases> got_a{};
  std::array<i64, max_phases> got_b{};
  std::array<i64, max_phases> snap_a{};
  std::array<i64, max_phases> snap_b{};
};
inline thread_local core_counts t_counts;

/// Job-wide sums of the snapshots, per phase (global core 0 writes them).
inline std::array<i64, max_phases> g_sum_a{};
inline std::array<i64, max_phases> g_sum_b{};

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline int pick_core(std::uint64_t seed) {
  return static_cast<int>(seed % static_cast<std::uint64_t>(shoal::cores()));
}
inline std::uint64_t start_seed(int phase, int k) {
  return mix(static_cast<std::uint64_t>(shoal::mycore()) * 1000003ULL +
             static_cast<std::uint64_t>(phase) * 7919ULL + static_cast<std::uint64_t>(k));
}

struct cascade_msg {
  std::int32_t phase;
  std::int32_t ttl;
  std::uint64_t seed;
};

/// Channel handles, per core (set by set_channels on every core).
inline thread_local shoal::channel<cascade_msg> t_a;
inline thread_local shoal::channel<cascade_msg> t_b;
/// TTL of the B message an A handler forwards (forwarding scenario only).
inline thread_local std::int32_t t_forward_ttl = -1;

inline void closure_cascade(std::int32_t phase, std::int32_t ttl, std::uint64_t seed) {
  ++t_counts.got_a[static_cast<std::size_t>(phase)];
  if (ttl == 0) return;
  const std::uint64_t next = mix(seed);
  shoal::send(pick_core(next), [phase, ttl, next] { closure_cascade(phase, ttl - 1, next); });
}

/// Channel A's handler: counts, cascades on A, and (when t_forward_ttl >= 0)
/// sends one B message per A value.
struct a_handler {
  void operator()(const cascade_msg& m) const {
    ++t_counts.got_a[static_cast<std::size_t>(m.phase)];
    const std::uint64_t next = mix(m.seed);
    if (m.ttl > 0) t_a.send(pick_core(next), cascade_msg{m.phase, m.ttl - 1, next});
    if (t_forward_ttl >= 0) {
      const std::uint64_t other = mix(next ^ 0x5555);
      t_b.send(pick_core(other), cascade_msg{m.phase, t_forward_ttl, other});
    }
  }
};
struct b_handler {
  void operator()(const cascade_msg& m) const {
    ++t_counts.got_b[static_cast<std::size_t>(m.phase)];
    if (m.ttl == 0) return;
    const std::uint64_t next = mix(m.seed);
    t_b.send(pick_core(next), cascade_msg{m.phase, m.ttl - 1, next});
  }
};

/// Messages of one phase when each core starts `starts` chains of `ttl` + 1.
inline i64 per_phase(i64 starts, i64 ttl) { return shoal::cores() * starts * (ttl + 1); }

/// Sums every core's snapshots into g_sum_a / g_sum_b. One task per core.
inline void publish_snapshots() {
  shoal::allreduce_sum(std::span<i64>(t_counts.snap_a));
  shoal::allreduce_sum(std::span<i64>(t_counts.snap_b));
  if (shoal::mycore() == 0) {
    g_sum_a = t_counts.snap_a;
    g_sum_b = t_counts.snap_b;
  }
}

inline void set_channels(shoal::channel<cascade_msg> a, shoal::channel<cascade_msg> b,
                         std::int32_t forward_ttl) {
  shoal::on_all_cores([a, b, forward_ttl] {
    t_a = a;
    t_b = b;
    t_forward_ttl = forward_ttl;
  });
}

// ---------------------------------------------------------------- scenarios

/// SPMD: `phases` rounds of closure cascades, each ended by barrier().
inline void barrier_rounds(int phases, int starts, int ttl) {
  shoal::on_all_cores([phases, starts, ttl] {
    for (int p = 0; p < phases; ++p) {
      for (int k = 0; k < starts; ++k) {
        const std::uint64_t s = start_seed(p, k);
        shoal::send(pick_core(s), [p, ttl, s] { closure_cascade(p, ttl, s); });
      }
      shoal::barrier();
      t_counts.snap_a[static_cast<std::size_t>(p)] = t_counts.got_a[static_cast<std::size_t>(p)];
    }
    publish_snapshots();
  });
}

/// SPMD body: `phases` phases on channel `ch` (t_a or t_b), starting at
/// phase `first`; snapshots into `snap` from `got`.
template <class Which>
void channel_phases(int first, int phases, int starts, int ttl, Which which) {
  for (int p = first; p < first + phases; ++p) {
    const shoal::channel<cascade_msg>& ch = which.channel();
    for (int k = 0; k < starts; ++k) {
      const std::uint64_t s = start_seed(p, k);
      ch.send(pick_core(s), cascade_msg{p, ttl, s});
    }
    ch.end_phase();
    which.snap()[static_cast<std::size_t>(p)] = which.got()[static_cast<std::size_t>(p)];
  }
}
struct on_a {
  const shoal::channel<cascade_msg>& channel() const { return t_a; }
  std::array<i64, max_phases>& got() const { return t_counts.got_a; }
  std::array<i64, max_phases>& snap() const { return t_counts.snap_a; }
};
struct on_b {
  const shoal::channel<cascade_msg>& channel() const { return t_b; }
  std::array<i64, max_phases>& got() const { return t_counts.got_b; }
  std::array<i64, max_phases>& snap() const { return t_counts.snap_b; }
};

/// Root: channel A opened, `phases` phases, closed; then reopened for as
/// many more (phases 0 .. 2*phases-1).
inline void reopened_channel_phases(int phases, int starts, int ttl) {
  for (int opening = 0; opening < 2; ++opening) {
    auto a = shoal::make_channel<cascade_msg>(a_handler{});
    set_channels(a, {}, -1);
    const int first = opening * phases;
    shoal::on_all_cores([first, phases, starts, ttl] {
      channel_phases(first, phases, starts, ttl, on_a{});
      if (first > 0) publish_snapshots();
    });
    a.close();
  }
}

/// Root: channels A and B, each with its own phases, run by two tasks per
/// core at once (A: phases_a phases, B: phases_b).
inline void independent_channel_phases(int phases_a, int phases_b, int starts, int ttl) {
  auto a = shoal::make_channel<cascade_msg>(a_handler{});
  auto b = shoal::make_channel<cascade_msg>(b_handler{});
  set_channels(a, b, -1);
  shoal::on_all_cores([phases_a, phases_b, starts, ttl] {
    shoal::completion_event b_done(1);
    shoal::completion_event* d = &b_done;
    shoal::spawn([d, phases_b, starts, ttl] {
      channel_phases(0, phases_b, starts, ttl + 1, on_b{});
      d->complete();
    });
    channel_phases(0, phases_a, starts, ttl, on_a{});
    b_done.wait();
    publish_snapshots();
  });
  a.close();
  b.close();
}

/// Root: A's handler forwards one B message (TTL forward_ttl) per A value;
/// each phase ends A, snapshots A, then ends B and snapshots B.
inline void forwarding_phases(int phases, int starts, int ttl, int forward_ttl) {
  auto a = shoal::make_channel<cascade_msg>(a_handler{});
  auto b = shoal::make_channel<cascade_msg>(b_handler{});
  set_channels(a, b, forward_ttl);
  shoal::on_all_cores([phases, starts, ttl] {
    for (int p = 0; p < phases; ++p) {
      for (int k = 0; k < starts; ++k) {
        const std::uint64_t s = start_seed(p, k);
        t_a.send(pick_core(s), cascade_msg{p, ttl, s});
      }
      t_a.end_phase();
      t_counts.snap_a[static_cast<std::size_t>(p)] = t_counts.got_a[static_cast<std::size_t>(p)];
      t_b.end_phase();
      t_counts.snap_b[static_cast<std::size_t>(p)] = t_counts.got_b[static_cast<std::size_t>(p)];
    }
    publish_snapshots();
  });
  a.close();
  b.close();
}

/// Root (global view): per phase, every core's task sends its starts on A
/// (on_all_cores returns once the tasks have sent, not once the values are
/// handled), then the root drains A and reads every core's count by
/// delegate. Phase sums land in g_sum_a. The same, with closure cascades
/// (counted as phases `phases` ..) and drain_messages(), into g_sum_b.
inline void drained_from_root(int phases, int starts, int ttl) {
  auto a = shoal::make_channel<cascade_msg>(a_handler{});
  set_channels(a, {}, -1);
  for (int p = 0; p < phases; ++p) {
    shoal::on_all_cores([p, starts, ttl] {
      for (int k = 0; k < starts; ++k) {
        const std::uint64_t s = start_seed(p, k);
        t_a.send(pick_core(s), cascade_msg{p, ttl, s});
      }
    });
    a.drain();
    i64 sum = 0;
    for (int c = 0; c < shoal::cores(); ++c)
      sum += shoal::delegate::call(c, [p] { return t_counts.got_a[static_cast<std::size_t>(p)]; });
    g_sum_a[static_cast<std::size_t>(p)] = sum;
  }
  a.close();
  for (int p = 0; p < phases; ++p) {
    const int q = p + phases;
    shoal::on_all_cores([q, starts, ttl] {
      for (int k = 0; k < starts; ++k) {
        const std::uint64_t s = start_seed(q, k);
        shoal::send(pick_core(s), [q, ttl, s] { closure_cascade(q, ttl, s); });
      }
    });
    shoal::drain_messages();
    i64 sum = 0;
    for (int c = 0; c < shoal::cores(); ++c)
      sum += shoal::delegate::call(c, [q] { return t_counts.got_a[static_cast<std::size_t>(q)]; });
    g_sum_b[static_cast<std::size_t>(p)] = sum;
  }
}

// ------------------------------------------------------------ flow control

struct fc_value {
  std::int32_t source;
  std::int32_t pad;
};
/// Values sent from core s to core d (s * max_cores + d), counted by the
/// sender after send() returned; read by receivers of the same process.
inline std::array<std::atomic<i64>, max_cores * max_cores> g_fc_sent{};
struct fc_core {
  std::array<i64, max_cores> handled{};
  i64 max_in_flight = 0;  // over senders of this process
  i64 total = 0;
};
inline thread_local fc_core t_fc;

/// Counts at the receiver: values sent (and returned from send) minus
/// values handled here before this one is at least what the library had in
/// flight for the pair, so it can never exceed the bound.
struct fc_handler {
  void operator()(const fc_value& v) const {
    const int me = shoal::mycore();
    if (shoal::rank_of(v.source) == shoal::myrank()) {
      const i64 sent = g_fc_sent[static_cast<std::size_t>(v.source * max_cores + me)].load(
          std::memory_order_relaxed);
      const i64 seen = sent - t_fc.handled[static_cast<std::size_t>(v.source)];
      if (seen > t_fc.max_in_flight) t_fc.max_in_flight = seen;
    }
    ++t_fc.handled[static_cast<std::size_t>(v.source)];
    ++t_fc.total;
  }
};

struct fc_result {
  i64 max_in_flight = 0;
  i64 total = 0;
};
inline fc_result g_fc;

/// Root: every core sends `per_pair` values to every core (itself
/// included), round robin, on a channel bounded by `bound` (0: none), ends
/// the phase, and reports the largest in-flight count seen at a receiver
/// for a pair of one process, and the values handled.
inline void flow_controlled(std::uint32_t bound, int per_pair) {
  auto ch = shoal::make_channel<fc_value>(fc_handler{}, {.max_in_flight = bound});
  shoal::on_all_cores([ch, per_pair] {
    const int me = shoal::mycore();
    for (int d = 0; d < shoal::cores(); ++d)
      g_fc_sent[static_cast<std::size_t>(me * max_cores + d)].store(0);
    shoal::barrier();
    for (int i = 0; i < per_pair; ++i)
      for (int d = 0; d < shoal::cores(); ++d) {
        ch.send(d, fc_value{me, 0});
        g_fc_sent[static_cast<std::size_t>(me * max_cores + d)].fetch_add(
            1, std::memory_order_relaxed);
      }
    ch.end_phase();
    const i64 worst = shoal::allreduce_max(t_fc.max_in_flight);
    const i64 total = shoal::allreduce_sum(t_fc.total);
    if (me == 0) g_fc = {worst, total};
  });
  ch.close();
}

// A flood from a computing core, without a window of the sender's own: every
// core sends `per_core` values round-robin to every core, in a loop that
// never yields, then ends the phase. The runtime's send bound
// (aggregator.hpp) must make the loop yield through the scheduler's poll
// once per poll_after_batches (8) batches: a task spawned on the core just
// before the loop runs early in it (long before the pool of buffers runs
// out, which also yields: back-pressure), and the core counts
// polls_on_send. Every value must be handled exactly once (count and sum).
struct flood_handler {
  void operator()(const std::uint64_t& v) const;
};
struct flood_core {
  i64 handled = 0;
  i64 value_sum = 0;
};
inline thread_local flood_core t_flood;
inline void flood_handler::operator()(const std::uint64_t& v) const {
  ++t_flood.handled;
  t_flood.value_sum += static_cast<i64>(v);
}
struct flood_result {
  i64 handled = 0;
  i64 value_sum = 0;
  i64 cores_with_poll_on_send = 0;  // cores whose loop polled through the bound
  i64 latest_side_task_bytes = 0;   // most bytes a core sent before its side task ran
  i64 pool_bytes = 0;               // one core's buffer pool (--buffers-per-core x bytes)
};
inline flood_result g_flood;

inline void flood_from_computing_cores(int per_core) {
  auto ch = shoal::make_channel<std::uint64_t>(flood_handler{});
  shoal::on_all_cores([ch, per_core] {
    const int me = shoal::mycore();
    const auto local = static_cast<std::size_t>(me - shoal::rank_of(me) * shoal::local_cores());
    const std::uint64_t polls_before = shoal::stats_per_core()[local].polls_on_send;
    shoal::barrier();  // every core starts its loop at about the same time
    bool side_ran = false;
    bool* flag = &side_ran;  // this task waits in end_phase at the latest: the frame lives
    shoal::spawn<shoal::local>([flag] { *flag = true; });
    int side_seen = per_core;
    for (int i = 0; i < per_core; ++i) {
      ch.send((me + i) % shoal::cores(),
              static_cast<std::uint64_t>(me) * 1000003ULL + static_cast<std::uint64_t>(i));
      if (side_ran && side_seen == per_core) side_seen = i;
    }
    const std::uint64_t polls = shoal::stats_per_core()[local].polls_on_send - polls_before;
    ch.end_phase();
    const i64 handled = shoal::allreduce_sum(t_flood.handled);
    const i64 sum = shoal::allreduce_sum(t_flood.value_sum);
    const i64 polled = shoal::allreduce_sum(i64{polls > 0});
    const i64 latest =
        shoal::allreduce_max(static_cast<i64>(side_seen) * static_cast<i64>(sizeof(std::uint64_t)));
    const shoal::config& c = shoal::current_config();
    if (me == 0) g_flood = {handled, sum, polled, latest, c.buffers_per_core * c.aggregation_bytes};
  });
  ch.close();
}

// ---------------------------------------------------------------- fences

/// Rounds of fenced_rounds() (see there); values carry their round and
/// sender.
constexpr int fence_rounds = 6;
struct fence_msg {
  std::int32_t round;
  std::int32_t source;
};
/// One core's record: what its handlers saw, by round and source core, and
/// the steady clock (one clock for every process of the host) when each
/// handler ran and when each of its own fences was seen complete.
struct fence_counts {
  std::array<std::array<i64, max_cores>, fence_rounds> got{};
  std::array<std::array<i64, max_cores>, fence_rounds> last_ns{};
  std::array<i64, fence_rounds> sent{};
  std::array<i64, fence_rounds> done_ns{};
};
inline thread_local fence_counts t_fence;

inline i64 clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct fence_handler {
  void operator()(const fence_msg& m) const {
    const auto r = static_cast<std::size_t>(m.round);
    const auto s = static_cast<std::size_t>(m.source);
    ++t_fence.got[r][s];
    t_fence.last_ns[r][s] = clock_ns();
  }
};

/// Failures summed over the job (global core 0 writes them).
struct fence_result {
  i64 late = 0;            // (round, sender): a fence complete before a handler it covers ran
  i64 miscounted = 0;      // (round, sender): values not handled exactly once
  i64 out_of_order = 0;    // a fence complete before one made before it
  i64 own_unhandled = 0;   // own-core values not handled when the fence completed
  i64 empty_not_free = 0;  // an empty fence not complete at once, or one that sent a batch
};
inline fence_result g_fence;

/// SPMD (one task per core), channel `ch` of fence_msg. Each round sends,
/// fences and waits, and records when the fence was seen complete:
///  0: to every core (own included), a different number to each (the
///     fence rides in the staged batches);
///  1: to its own core only, flushed first (the fence's marker is an empty
///     batch; its handlers' count checked at once);
///  2, 3: two fences outstanding: round 2 to every other core, round 3 to
///     its own core; round 3's wait must find round 2's fence complete;
///  4: to the next core, flushed, then an empty fence right after (made with round
///     4's outstanding): waiting for it must find round 4's complete;
///  5: an empty fence with nothing outstanding: complete at once, no batch.
/// After a barrier the job's counts and latest handler times per (round,
/// sender) are reduced, and each sender checks its own against its fences.
inline void fenced_rounds(shoal::channel<fence_msg> ch) {
  const int me = shoal::mycore();
  const int cores = shoal::cores();
  const auto mine = static_cast<std::size_t>(me);
  fence_result bad;
  auto send_to = [&](int round, int dest, int n) {
    for (int i = 0; i < n; ++i) ch.send(dest, fence_msg{round, me});
    t_fence.sent[static_cast<std::size_t>(round)] += n;
  };
  auto done = [](int round) { t_fence.done_ns[static_cast<std::size_t>(round)] = clock_ns(); };

  if (!shoal::channel_fence{}.ready()) ++bad.empty_not_free;
  for (int d = 0; d < cores; ++d) send_to(0, d, 20 + 7 * ((me + d) % 3));
  ch.fence().wait();
  done(0);
  if (t_fence.got[0][mine] != 20 + 7 * ((2 * me) % 3)) ++bad.own_unhandled;

  send_to(1, me, 30);
  ch.flush();  // nothing staged: the fence's marker is an empty batch
  const shoal::channel_fence own = ch.fence();
  own.wait();
  done(1);
  if (t_fence.got[1][mine] != 30) ++bad.own_unhandled;

  for (int d = 0; d < cores; ++d)
    if (d != me || cores == 1) send_to(2, d, 40);
  const shoal::channel_fence first = ch.fence();
  send_to(3, me, 5);
  const shoal::channel_fence second = ch.fence();
  second.wait();
  if (!first.ready()) ++bad.out_of_order;
  done(2);
  done(3);

  send_to(4, (me + 1) % cores, 25);
  ch.flush();
  const shoal::channel_fence sent = ch.fence();
  const shoal::channel_fence empty = ch.fence();
  empty.wait();
  if (!sent.ready()) ++bad.out_of_order;
  done(4);

  const auto local = static_cast<std::size_t>(me - shoal::rank_of(me) * shoal::local_cores());
  const std::uint64_t packets = shoal::stats_per_core()[local].packets_sent;
  if (!ch.fence().ready()) ++bad.empty_not_free;
  if (shoal::stats_per_core()[local].packets_sent != packets) ++bad.empty_not_free;
  done(5);

  shoal::barrier();  // every value handled: the counts are final
  const std::size_t n = std::size_t{fence_rounds} * max_cores;
  shoal::allreduce_sum(std::span<i64>(t_fence.got[0].data(), n));
  shoal::allreduce(std::span<i64>(t_fence.last_ns[0].data(), n),
                   [](i64 a, i64 b) { return a < b ? b : a; });
  for (std::size_t r = 0; r < fence_rounds; ++r) {
    if (t_fence.got[r][mine] != t_fence.sent[r]) ++bad.miscounted;
    if (t_fence.sent[r] > 0 && t_fence.last_ns[r][mine] > t_fence.done_ns[r]) ++bad.late;
  }
  std::array<i64, 5> sums{bad.late, bad.miscounted, bad.out_of_order, bad.own_unhandled,
                          bad.empty_not_free};
  shoal::allreduce_sum(std::span<i64>(sums));
  if (me == 0) g_fence = {sums[0], sums[1], sums[2], sums[3], sums[4]};
}

/// Root: fenced_rounds on every core of a fresh channel.
inline void fence_scenario() {
  auto ch = shoal::make_channel<fence_msg>(fence_handler{});
  shoal::on_all_cores([ch] { fenced_rounds(ch); });
  ch.close();
}

}  // namespace phases

// ------------------------------------------------------------------ checks

#include <gtest/gtest.h>

namespace phases {

/// Whether this process checks results (in a job of several processes,
/// rank 0 only: the root runs there).
inline bool g_check_here = true;

/// Expects sums[first .. first+n) to equal `expected` each.
inline void expect_sums(const std::array<i64, max_phases>& sums, int first, int n, i64 expected,
                        const char* what) {
  for (int p = first; p < first + n; ++p)
    EXPECT_EQ(sums[static_cast<std::size_t>(p)], expected) << what << ", phase " << p;
}

/// The scenarios with their expected counts, for a job of `cores` cores;
/// `run_job(root)` runs root as the job's root task.
template <class RunJob>
void check_barrier_rounds(const RunJob& run_job, i64 cores) {
  constexpr int rounds = 12, starts = 40, ttl = 6;
  run_job([] { barrier_rounds(rounds, starts, ttl); });
  if (g_check_here) expect_sums(g_sum_a, 0, rounds, cores * starts * (ttl + 1), "barrier()");
}

template <class RunJob>
void check_reopened_phases(const RunJob& run_job, i64 cores) {
  constexpr int phases = 8, starts = 30, ttl = 5;
  run_job([] { reopened_channel_phases(phases, starts, ttl); });
  if (g_check_here) expect_sums(g_sum_a, 0, 2 * phases, cores * starts * (ttl + 1), "end_phase()");
}

template <class RunJob>
void check_independent_phases(const RunJob& run_job, i64 cores) {
  constexpr int phases_a = 11, phases_b = 7, starts = 25, ttl = 4;
  run_job([] { independent_channel_phases(phases_a, phases_b, starts, ttl); });
  if (!g_check_here) return;
  expect_sums(g_sum_a, 0, phases_a, cores * starts * (ttl + 1), "channel A");
  expect_sums(g_sum_b, 0, phases_b, cores * starts * (ttl + 2), "channel B");
}

template <class RunJob>
void check_forwarding_phases(const RunJob& run_job, i64 cores) {
  constexpr int phases = 6, starts = 20, ttl = 3, forward_ttl = 2;
  run_job([] { forwarding_phases(phases, starts, ttl, forward_ttl); });
  if (!g_check_here) return;
  const i64 a = cores * starts * (ttl + 1);
  expect_sums(g_sum_a, 0, phases, a, "channel A (end_phase of A)");
  expect_sums(g_sum_b, 0, phases, a * (forward_ttl + 1), "channel B (end_phase of B after A)");
}

template <class RunJob>
void check_drained_from_root(const RunJob& run_job, i64 cores) {
  constexpr int phases = 5, starts = 30, ttl = 6;
  run_job([] { drained_from_root(phases, starts, ttl); });
  if (!g_check_here) return;
  expect_sums(g_sum_a, 0, phases, cores * starts * (ttl + 1), "channel::drain()");
  expect_sums(g_sum_b, 0, phases, cores * starts * (ttl + 1), "drain_messages()");
}

template <class RunJob>
void check_flow_control(const RunJob& run_job, i64 cores, std::uint32_t bound, int per_pair) {
  run_job([bound, per_pair] { flow_controlled(bound, per_pair); });
  if (!g_check_here) return;
  EXPECT_EQ(g_fc.total, cores * cores * per_pair);
  EXPECT_GE(g_fc.max_in_flight, 1);
  EXPECT_LE(g_fc.max_in_flight, static_cast<i64>(bound))
      << "a receiver saw more values in flight from one core than the bound";
}

/// The flood: everything handled once, and on every core the loop yielded
/// to the poll (a closed-form sum of sender * 1000003 + i over the job).
template <class RunJob>
void check_flood(const RunJob& run_job, i64 cores, int per_core) {
  run_job([per_core] { flood_from_computing_cores(per_core); });
  if (!g_check_here) return;
  const i64 n = per_core;
  EXPECT_EQ(g_flood.handled, cores * n);
  EXPECT_EQ(g_flood.value_sum, (cores * (cores - 1) / 2) * n * 1000003 + cores * (n * (n - 1) / 2));
  EXPECT_EQ(g_flood.cores_with_poll_on_send, cores)
      << "a core flooded a channel without polling through the send bound";
  // The bound yields after about 8 + cores batches; the pool lasts 64.
  EXPECT_LT(g_flood.latest_side_task_bytes, g_flood.pool_bytes / 2)
      << "a task of a flooding core waited until the pool ran out (or the flood ended)";
}

/// Per-sender fences (fenced_rounds): every fence completes after the
/// handlers of every value it covers and after the fences made before it.
template <class RunJob>
void check_fences(const RunJob& run_job) {
  g_fence = {-1, -1, -1, -1, -1};
  run_job([] { fence_scenario(); });
  if (!g_check_here) return;
  EXPECT_EQ(g_fence.late, 0) << "a fence completed before a handler of a value it covers ran";
  EXPECT_EQ(g_fence.miscounted, 0) << "values not handled exactly once";
  EXPECT_EQ(g_fence.out_of_order, 0) << "a fence completed before one made before it";
  EXPECT_EQ(g_fence.own_unhandled, 0) << "a fence to the own core completed before its handlers";
  EXPECT_EQ(g_fence.empty_not_free, 0) << "an empty fence waited or sent a batch";
}

}  // namespace phases
