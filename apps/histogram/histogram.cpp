// `shoal histogram`: the bale histogram kernel on shoal.
//
//   shoal histogram [--table-per-core T] [--requests-per-core N] [--seed s] [--json]
//
// A table of T 64-bit counters per core (T * cores in all, block-distributed)
// starts at zero; every core makes N increments of counters drawn at random
// over the whole table (histogram/plain/bale.hpp: the streams). The increment phase
// is timed. Validation (untimed, independent of the message path): each core
// regenerates every core's stream sequentially, counts the increments that
// fall in its slice, and compares counter by counter; the counters must also
// sum to N * cores.
//
// The implementations (--impl):
//   channel   (the default) an SPMD task per core walks its stream; an
//             increment of its own slice is done at once, any other goes to
//             the owner as a bare 32-bit local index on a typed channel (4
//             bytes on the wire), whose handler increments the counter. A
//             core ends its phase with an end marker to every other core on
//             the same channel; values on one channel from one core to
//             another are handled in order, so a core holding every other
//             core's marker has applied all their increments (the pattern of
//             apps/bfs/spmd.hpp). Chunk markers and their acks on the same
//             channel bound the increments a core has in flight (see
//             chunk_sends).
//   delegate  Grappa: one async delegate per remote increment, a closure
//             message, counted by a global_completion_event (delegate_share).
#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "histogram/plain/bale.hpp"

namespace shoal_apps {

namespace {

using bale::bale_problem;

// Channel values: a local index (below 2^31), or a control value with the
// top bit set.
constexpr std::uint32_t control_bit = 0x80000000U;
/// Ends the sender's phase (after all its increments on this channel).
constexpr std::uint32_t end_marker = 0xffffffffU;
/// Acknowledges one chunk marker.
constexpr std::uint32_t chunk_ack = 0xc0000000U;
/// chunk_marker | sender: the sender's chunk before it has been applied here.
constexpr std::uint32_t chunk_marker = 0x80000000U;
constexpr std::uint32_t sender_mask = 0x3fffffffU;

/// Flow control: after every chunk of remote increments a core puts a chunk
/// marker to every other core on the channel; each answers it with an ack
/// once it has applied everything before it (values on one channel from one
/// core to another are handled in order). A core with more than
/// max_chunks_out chunks unacknowledged suspends until half are; its core
/// then idles, handling what arrives, and gives its CPU up to the OS when
/// nothing does, instead of spinning on back-pressure once all its buffers
/// are in flight (which, on an oversubscribed machine, starved the very
/// thread it waited for). 8192 increments of 4 bytes: two aggregation
/// buffers; four chunks out: a quarter of a core's 64 buffers.
constexpr std::int64_t chunk_sends = 8192;
constexpr std::int64_t max_chunks_out = 4;

/// The problem, set on every process before shoal::run (closures name it
/// rather than carry it).
bale_problem g_problem;

/// One core's slice of the table and its phase bookkeeping.
struct histogram_core {
  std::vector<std::uint64_t> counts;
  shoal::channel<std::uint32_t> channel;      ///< to send acks on
  std::int64_t ends = 0;                      ///< end markers received this phase
  std::int64_t acks = 0;                      ///< acks of this core's chunk markers
  std::int64_t wake_ends = 0;                 ///< the waiting task wants this many ends
  std::int64_t wake_acks = 0;                 ///< and this many acks
  shoal::completion_event* waiter = nullptr;  ///< the core's task, while it waits
};
shoal::per_core<histogram_core> g_cores;
/// The calling core's g_cores slot, for the handler (a thread-local load
/// instead of per_core::local()'s lookup per message). Set on each core
/// before the increments.
thread_local histogram_core* t_core = nullptr;

/// Wakes the core's task if what it waits for has arrived.
void wake_if_done(histogram_core& st) {
  if (st.waiter != nullptr && st.ends >= st.wake_ends && st.acks >= st.wake_acks) {
    st.waiter->complete();
    st.waiter = nullptr;
  }
}

/// The channel's handler, replicated on every core: increments a counter of
/// the receiving core's slice, or handles a control value.
struct count_increment {
  void operator()(const std::uint32_t& v) const {
    histogram_core& st = *t_core;
    if (v < control_bit) [[likely]] {
      ++st.counts[v];
      return;
    }
    if (v == end_marker) {
      ++st.ends;
    } else if (v == chunk_ack) {
      ++st.acks;
    } else {
      st.channel.send(static_cast<int>(v & sender_mask), chunk_ack);
      return;
    }
    wake_if_done(st);
  }
};

/// Suspends the calling task until `st` has `ends` end markers and `acks`
/// acks.
void wait_for(histogram_core& st, std::int64_t ends, std::int64_t acks) {
  shoal::flush();
  if (st.ends >= ends && st.acks >= acks) return;
  shoal::completion_event done(1);
  st.wake_ends = ends;
  st.wake_acks = acks;
  st.waiter = &done;
  done.wait();
}

/// Makes the calling core's N increments, then waits until every other
/// core's increments of its slice have been applied and every other core
/// has acknowledged its chunks (so that no message of the phase is left in
/// flight when the tasks end). One task per core.
void increment_share(const shoal::channel<std::uint32_t>& ch) {
  const bale_problem& p = g_problem;
  histogram_core& st = g_cores.local();
  const int me = shoal::mycore();
  const int cores = shoal::cores();
  const auto mine = static_cast<std::uint32_t>(me);
  const bale::index_stream stream(p, me);
  std::uint64_t* counts = st.counts.data();
  const auto n = static_cast<std::uint64_t>(p.requests_per_core);
  const auto acks_per_chunk = static_cast<std::int64_t>(cores - 1);
  // Yield now and then so that this core applies what the others send it
  // (and returns their buffers) while it sends (see bfs/spmd.hpp yield_every).
  std::int64_t pace = 64;
  std::int64_t chunk_left = chunk_sends;
  std::int64_t chunks = 0;
  bale::block_split b;
  for (std::uint64_t first = 0; first < n; first += bale::block_split::capacity) {
    b.fill(stream, mine, first, std::min(n, first + bale::block_split::capacity));
    for (std::uint32_t i = 0; i < b.own; ++i) ++counts[b.own_local[i]];
    for (std::uint32_t i = 0; i < b.remote; ++i) {
      ch.send(static_cast<int>(b.owner[i]), b.remote_local[i]);
      if (--pace == 0) {
        pace = 64;
        shoal::yield();
      }
    }
    chunk_left -= b.remote;
    if (chunk_left > 0) continue;
    chunk_left = chunk_sends;
    for (int c = 0; c < cores; ++c)
      if (c != me) ch.send(c, chunk_marker | mine);
    ++chunks;
    if ((chunks - max_chunks_out) * acks_per_chunk > st.acks)
      wait_for(st, 0, (chunks - max_chunks_out / 2) * acks_per_chunk);
  }
  for (int c = 0; c < cores; ++c)
    if (c != me) ch.send(c, end_marker);
  wait_for(st, cores - 1, chunks * acks_per_chunk);
}

/// --impl delegate: the calling core's N increments as Grappa would make
/// them, one delegate::async_call per remote increment (a closure message
/// of 8 bytes plus its share of a run header), counted by a
/// global_completion_event. The same flow control as the channel's, by
/// completion instead of acks: chunk j is counted by event j % 2, and chunk
/// j + 2 starts once chunk j has run everywhere. One task per core.
void delegate_share() {
  const bale_problem& p = g_problem;
  histogram_core& st = g_cores.local();
  const auto mine = static_cast<std::uint32_t>(shoal::mycore());
  const bale::index_stream stream(p, static_cast<int>(mine));
  std::uint64_t* counts = st.counts.data();
  const auto n = static_cast<std::uint64_t>(p.requests_per_core);
  std::array<shoal::global_completion_event, 2> chunks;
  std::size_t chunk = 0;
  std::int64_t pace = 64;
  std::int64_t chunk_left = chunk_sends * max_chunks_out / 2;
  bale::block_split b;
  for (std::uint64_t first = 0; first < n; first += bale::block_split::capacity) {
    b.fill(stream, mine, first, std::min(n, first + bale::block_split::capacity));
    for (std::uint32_t i = 0; i < b.own; ++i) ++counts[b.own_local[i]];
    for (std::uint32_t i = 0; i < b.remote; ++i) {
      const std::uint32_t local = b.remote_local[i];
      shoal::delegate::async_call(
          static_cast<int>(b.owner[i]), [local] { ++t_core->counts[local]; }, chunks[chunk]);
      if (--pace == 0) {
        pace = 64;
        shoal::yield();
      }
    }
    chunk_left -= b.remote;
    if (chunk_left > 0) continue;
    chunk_left = chunk_sends * max_chunks_out / 2;
    chunk ^= 1;
    shoal::flush();
    chunks[chunk].wait();  // the chunk before the one just sent has run everywhere
  }
  for (shoal::global_completion_event& e : chunks) e.wait();
}

/// Counters wrong against the sequential reference, and the sum of all.
struct check_sums {
  std::int64_t wrong = 0;
  std::int64_t total = 0;
};
check_sums g_check;  // written by global core 0 (on rank 0, the root's process)

/// Compares the calling core's slice with the counts of a sequential
/// regeneration of every core's stream; sums the verdict over the job.
/// One task per core.
void check_slice() {
  const bale_problem& p = g_problem;
  histogram_core& st = g_cores.local();
  const int me = shoal::mycore();
  if (p.corrupt && me == 0) ++st.counts[0];  // fault injection: the check must see it
  std::vector<std::uint64_t> reference(st.counts.size(), 0);
  const auto mine = static_cast<std::uint32_t>(me);
  for (int q = 0; q < p.participants; ++q) {
    const bale::index_stream stream(p, q);
    for (std::int64_t k = 0; k < p.requests_per_core; ++k) {
      const bale::target t = stream.at(static_cast<std::uint64_t>(k));
      if (t.owner == mine) ++reference[t.local];
    }
  }
  check_sums mine_sums;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    mine_sums.wrong += st.counts[i] != reference[i] ? 1 : 0;
    mine_sums.total += static_cast<std::int64_t>(st.counts[i]);
  }
  const check_sums all = shoal::allreduce(mine_sums, [](const check_sums& a, const check_sums& b) {
    return check_sums{a.wrong + b.wrong, a.total + b.total};
  });
  if (me == 0) g_check = all;
  st.counts = {};
}

/// The whole run: table, timed increments, validation. Root task.
void run_in_root(const std::string& impl, report& out) {
  const bale_problem& p = g_problem;
  const shoal::channel<std::uint32_t> ch = shoal::make_channel<std::uint32_t>(count_increment{});
  shoal::on_all_cores([ch] {
    histogram_core& st = g_cores.local();
    st.counts.assign(static_cast<std::size_t>(g_problem.table_per_core), 0);
    st.channel = ch;
    st.ends = 0;
    st.acks = 0;
    st.waiter = nullptr;
    t_core = &st;
  });
  const auto t0 = std::chrono::steady_clock::now();
  if (impl == "delegate") {
    shoal::on_all_cores([] { delegate_share(); });
  } else {
    shoal::on_all_cores([ch] { increment_share(ch); });
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  shoal::on_all_cores([] { check_slice(); });
  shoal::channel<std::uint32_t> open = ch;
  open.close();
  const bool ok = g_check.wrong == 0 && g_check.total == p.requests();
  bale::fill_report(out, p, {"increments", "updates", "updates_per_s", "M updates/s"}, "core",
                    seconds, ok,
                    fmt::format("{} of {} counters differ from a sequential count of every "
                                "core's stream; counters sum to {} (expected {})",
                                g_check.wrong, p.table_size(), g_check.total, p.requests()));
  out.set("wrong_counters", g_check.wrong);
}

/// Runs on every rank; fills the report on rank 0, where the root runs.
void run_histogram(const bale::bale_options& opts, run_context& ctx) {
  // Per core: the counters and, while validating, their reference.
  g_problem = bale::make_problem(opts, shoal::cores(), shoal::local_cores(), 16.0, 0.0);
  shoal::run([&] { run_in_root(ctx.impl, ctx.out); });
}

}  // namespace

app_spec histogram_app() {
  return {"histogram",
          "bale histogram: random increments of a distributed table of counters",
          {"channel", "delegate"},
          [](CLI::App& cmd) -> runner {
            auto opts = std::make_shared<bale::bale_options>();
            bale::add_bale_options(cmd, *opts, "increments");
            return [opts](run_context& ctx) { run_histogram(*opts, ctx); };
          }};
}

}  // namespace shoal_apps
