// channel::send_run scenarios, shared by tests/test_channel_run.cpp (one
// process, 1/2/4 cores) and tests/mpi/dist_channel_run.cpp (1x2, 2x2, 3x2).
//
// Every value carries its sender and a sequence number per (sender,
// destination); every core sends to every core (itself included) runs of
// many lengths (empty, 1, around and above a batch, several batches)
// interleaved with single sends. Receivers check that each sender's values
// arrive in sequence, count them, and see each batch whole (deliver_run):
// no batch may hold more values than the channel's batch size (the
// splitting), nor, on a bounded channel, more than its bound. Failures are
// summed over the job (allreduce) and written by global core 0; each
// check runs from the root task and is tested on rank 0 after run().
#pragma once

#include "shoal/shoal.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include <gtest/gtest.h>

namespace run_scenario {

using i64 = std::int64_t;
constexpr int max_cores = 64;

constexpr int max_rounds = 16;

struct run_msg {
  std::int16_t source;
  std::int16_t round;  // of fenced_runs; -1 elsewhere
  std::int32_t seq;
};

inline i64 clock_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// One core's books (the SPMD task and the handlers of a core share its
/// thread; threads are new in every run, so these start at zero).
struct core_books {
  std::array<i64, max_cores> next{};  // by source: the sequence number expected
  std::array<i64, max_cores> sent{};  // by destination: values sent
  i64 got = 0;
  i64 out_of_order = 0;
  i64 batches = 0;
  i64 largest_batch = 0;
  // fenced_runs: by round and source, when a handler here last ran; by
  // round, when this core's fence completed.
  std::array<std::array<i64, max_cores>, max_rounds> last_ns{};
  std::array<i64, max_rounds> done_ns{};
  i64 own_unhandled = 0;  // own-core values not handled when a fence completed
  i64 over_bound = 0;     // bounded_runs: in flight above the bound after a run
  i64 long_runs = 0;      // bounded_runs: runs longer than the bound sent
};
inline thread_local core_books t_books;

struct run_handler {
  void operator()(const run_msg& m) const { deliver_run(&m, 1); }
  void deliver_run(const run_msg* v, std::uint32_t n) const {
    ++t_books.batches;
    t_books.largest_batch = std::max<i64>(t_books.largest_batch, n);
    for (std::uint32_t i = 0; i < n; ++i) {
      i64& next = t_books.next[static_cast<std::size_t>(v[i].source)];
      if (v[i].seq != next) ++t_books.out_of_order;
      next = v[i].seq + 1;
      ++t_books.got;
      if (v[i].round >= 0)
        t_books
            .last_ns[static_cast<std::size_t>(v[i].round)][static_cast<std::size_t>(v[i].source)] =
            clock_ns();
    }
  }
};

/// What the job saw (global core 0 writes it).
struct outcome {
  i64 sent = 0;
  i64 got = 0;
  i64 out_of_order = 0;
  i64 batches = 0;
  i64 largest_batch = 0;
  i64 unhandled_at_fence = 0;   // values a completed fence covered, not handled by then
  i64 over_bound = 0;           // a sender with more in flight to a core than the bound
  i64 runs_past_the_bound = 0;  // runs longer than the bound that went through
};
inline outcome g_out;

/// `n` values of sender `me` to `dest`, numbered on from what it sent there.
inline std::vector<run_msg> next_values(int me, int dest, int n, int round = -1) {
  std::vector<run_msg> v(static_cast<std::size_t>(n));
  i64& sent = t_books.sent[static_cast<std::size_t>(dest)];
  for (run_msg& m : v)
    m = {static_cast<std::int16_t>(me), static_cast<std::int16_t>(round),
         static_cast<std::int32_t>(sent++)};
  return v;
}

/// SPMD: to every core, for each length, a run of that length then one
/// single send; ends the phase.
inline void runs_and_singles(shoal::channel<run_msg> ch, std::span<const int> lengths) {
  const int me = shoal::mycore();
  for (const int n : lengths)
    for (int d = 0; d < shoal::cores(); ++d) {
      const std::vector<run_msg> v = next_values(me, d, n);
      ch.send_run(d, std::span<const run_msg>(v));
      ch.send(d, next_values(me, d, 1)[0]);
    }
  ch.end_phase();
}

/// SPMD: per round, a run to every core, then a fence waited for: by then
/// every value this core sent anywhere has been handled. Handlers note when
/// they ran (the steady clock: one for every process of the host), the
/// sender when its fence completed; compared after the job's maximum.
inline void fenced_runs(shoal::channel<run_msg> ch, std::span<const int> lengths) {
  const int me = shoal::mycore();
  int round = 0;
  for (const int n : lengths) {
    for (int d = 0; d < shoal::cores(); ++d) {
      const std::vector<run_msg> v = next_values(me, d, n, round);
      ch.send_run(d, std::span<const run_msg>(v));
    }
    ch.fence().wait();
    t_books.done_ns[static_cast<std::size_t>(round++)] = clock_ns();
    const auto mine = static_cast<std::size_t>(me);
    if (t_books.next[mine] != t_books.sent[mine]) ++t_books.own_unhandled;
  }
}

/// SPMD on a channel bounded at `bound`: runs of `n` values (n > bound) to
/// every core; after each, this core's count in flight to that core is at
/// most the bound.
inline void bounded_runs(shoal::channel<run_msg> ch, std::uint32_t bound, int runs, int n) {
  const int me = shoal::mycore();
  for (int r = 0; r < runs; ++r)
    for (int d = 0; d < shoal::cores(); ++d) {
      const std::vector<run_msg> v = next_values(me, d, n);
      ch.send_run(d, std::span<const run_msg>(v));
      if (shoal::detail::tls_aggregator->in_flight(ch.id(), d) > static_cast<i64>(bound))
        ++t_books.over_bound;
      ++t_books.long_runs;
    }
  ch.end_phase();
}

/// SPMD, after a barrier: the job's books summed (largest batch: the
/// maximum); a fence late when a value it covers ran after it completed.
inline void reduce_books(int rounds) {
  core_books& b = t_books;
  shoal::allreduce(std::span<i64>(b.last_ns[0].data(), std::size_t{max_rounds} * max_cores),
                   [](i64 x, i64 y) { return x < y ? y : x; });
  i64 late = b.own_unhandled;
  for (std::size_t r = 0; r < static_cast<std::size_t>(rounds); ++r)
    if (b.last_ns[r][static_cast<std::size_t>(shoal::mycore())] > b.done_ns[r]) ++late;
  i64 sent = 0;
  for (const i64 s : b.sent) sent += s;
  std::array<i64, 7> sums{sent, b.got, b.out_of_order, b.batches, late, b.over_bound, b.long_runs};
  shoal::allreduce_sum(std::span<i64>(sums));
  const i64 largest = shoal::allreduce_max(b.largest_batch);
  if (shoal::mycore() == 0)
    g_out = {sums[0], sums[1], sums[2], sums[3], largest, sums[4], sums[5], sums[6]};
}

/// Lengths around a batch of `batch` values, with singles between them.
inline std::vector<int> lengths_around(int batch) {
  return {0, 1, 2, batch - 1, batch, batch + 1, 0, 3 * batch + 2, 1, 5 * batch - 1};
}

/// Values per batch of the channel with `coalesce` (0: as many as the
/// aggregation buffer holds), noted by the root for the checks.
inline int g_batch = 0;

/// Root: runs_and_singles on a channel of `coalesce` values per batch, then
/// fenced runs on it.
inline void ordered_scenario(std::uint32_t coalesce) {
  g_batch = coalesce != 0
                ? static_cast<int>(coalesce)
                : static_cast<int>(shoal::detail::tls_aggregator->capacity() / sizeof(run_msg));
  auto ch = shoal::make_channel<run_msg>(run_handler{}, {.coalesce_values = coalesce});
  // Closures travel as bytes to other processes: the batch, not the lengths.
  shoal::on_all_cores([ch, batch = g_batch] {
    const std::vector<int> lengths = lengths_around(batch);
    runs_and_singles(ch, lengths);
    fenced_runs(ch, lengths);
    shoal::barrier();  // every value handled: the books are final
    reduce_books(static_cast<int>(lengths.size()));
  });
  ch.close();
}

/// Root: bounded_runs, runs of 5 * bound + 3.
inline void bounded_scenario(std::uint32_t bound, int runs) {
  auto ch = shoal::make_channel<run_msg>(run_handler{}, {.max_in_flight = bound});
  shoal::on_all_cores([ch, bound, runs] {
    bounded_runs(ch, bound, runs, static_cast<int>(5 * bound + 3));
    shoal::barrier();
    reduce_books(0);
  });
  ch.close();
}

// ------------------------------------------------------------------ checks

/// Whether this process checks results (rank 0 only in a job of several).
inline bool g_check_here = true;

/// Every value handled once, in order per sender, batches no larger than
/// `batch` values; `run_job(root)` runs root as the job's root task.
template <class RunJob>
void check_ordered(const RunJob& run_job, std::uint32_t coalesce, i64 cores) {
  run_job([coalesce] { ordered_scenario(coalesce); });
  if (!g_check_here) return;
  const int batch = g_batch;
  i64 per_pair = 0;
  for (const int n : lengths_around(batch)) per_pair += 2 * n + 1;  // runs, singles, fenced runs
  EXPECT_EQ(g_out.sent, cores * cores * per_pair);
  EXPECT_EQ(g_out.got, g_out.sent) << "values not handled exactly once";
  EXPECT_EQ(g_out.out_of_order, 0) << "a sender's values arrived out of order";
  EXPECT_LE(g_out.largest_batch, batch) << "a batch held more values than the batch size";
  EXPECT_EQ(g_out.largest_batch, batch) << "runs did not fill their batches";
  EXPECT_EQ(g_out.unhandled_at_fence, 0) << "a fence completed before a value it covers ran";
}

/// A bounded channel: runs past the bound go through, no batch and no
/// sender's count in flight above the bound.
template <class RunJob>
void check_bounded(const RunJob& run_job, std::uint32_t bound, int runs, i64 cores) {
  run_job([bound, runs] { bounded_scenario(bound, runs); });
  if (!g_check_here) return;
  EXPECT_EQ(g_out.sent, cores * cores * runs * (5 * i64{bound} + 3));
  EXPECT_EQ(g_out.got, g_out.sent);
  EXPECT_EQ(g_out.out_of_order, 0);
  EXPECT_LE(g_out.largest_batch, static_cast<i64>(bound)) << "a batch held more than the bound";
  EXPECT_EQ(g_out.over_bound, 0) << "more values in flight to a core than the bound";
  EXPECT_EQ(g_out.runs_past_the_bound, cores * cores * runs);
}

}  // namespace run_scenario
