// `shoal histogram`: the bale histogram kernel on shoal.
//
//   shoal histogram [--table-per-core T] [--requests-per-core N] [--seed s] [--json]
//
// A table of T 64-bit counters per core (T * cores in all, block-distributed)
// starts at zero; every core makes N increments of counters drawn at random
// over the whole table (common/plain/bale.hpp: the streams). The increment phase
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
//             core ends with the channel's end_phase(), which returns once
//             every core's increments have been applied. The channel bounds
//             the increments a core has in flight to each other core (flow
//             control: see max_in_flight).
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
#include "common/plain/bale.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps {

namespace {

using bale::bale_problem;

/// Flow control: the channel lets a core have at most this many increments
/// unapplied at each other core; a sender beyond it suspends until the
/// receiver acknowledges a batch. Its core then idles, handling what
/// arrives, and gives its CPU up to the OS when nothing does, instead of
/// spinning on back-pressure once all its buffers are in flight (which, on
/// an oversubscribed machine, starved the very thread it waited for).
/// 32768 increments of 4 bytes: eight aggregation buffers per destination,
/// two network buffers to another process, so that one travels while the
/// other is handled (with one, the sender stops at every network buffer
/// until it is acknowledged).
constexpr std::uint32_t max_in_flight = 32768;

/// The delegate implementation's window (delegate_share): chunks of this
/// many remote increments, at most two unfinished at once.
constexpr std::int64_t delegate_chunk = 16384;

/// The problem, set on every process before shoal::run (closures name it
/// rather than carry it).
bale_problem g_problem;

/// One core's slice of the table.
struct histogram_core {
  std::vector<std::uint64_t> counts;
};
shoal::per_core<histogram_core> g_cores;
/// The calling core's g_cores slot, for the handlers (a thread-local load
/// instead of per_core::local()'s lookup per message). Set on each core
/// before the increments.
thread_local histogram_core* t_core = nullptr;

/// The channel's handler, replicated on every core: increments a counter of
/// the receiving core's slice.
struct count_increment {
  void operator()(const std::uint32_t& local) const { ++t_core->counts[local]; }
};

/// Makes the calling core's N increments, then ends the channel's phase:
/// returns once every core's increments have been applied. One task per
/// core.
void increment_share(const shoal::channel<std::uint32_t>& ch) {
  const bale_problem& p = g_problem;
  histogram_core& st = g_cores.local();
  const auto mine = static_cast<std::uint32_t>(shoal::mycore());
  const bale::index_stream stream(p, static_cast<int>(mine));
  std::uint64_t* counts = st.counts.data();
  const auto n = static_cast<std::uint64_t>(p.requests_per_core);
  yield_every pacing;  // apply what the others send meanwhile, and return their buffers
  bale::block_split b;
  for (std::uint64_t first = 0; first < n; first += bale::block_split::capacity) {
    b.fill(stream, mine, first, std::min(n, first + bale::block_split::capacity));
    for (std::uint32_t i = 0; i < b.own; ++i) ++counts[b.own_local[i]];
    for (std::uint32_t i = 0; i < b.remote; ++i) {
      ch.send(static_cast<int>(b.owner[i]), b.remote_local[i]);
      pacing.tick();
    }
  }
  ch.end_phase();
}

/// --impl delegate: the calling core's N increments as Grappa would make
/// them, one delegate::post per remote increment (a closure message
/// of 8 bytes plus its share of a run header), counted by a
/// global_completion_event. Delegates have no flow control of their own,
/// so the app bounds what is in flight by completion: chunk j is counted by
/// event j % 2, and chunk j + 2 starts once chunk j has run everywhere. One
/// task per core.
void delegate_share() {
  const bale_problem& p = g_problem;
  histogram_core& st = g_cores.local();
  const auto mine = static_cast<std::uint32_t>(shoal::mycore());
  const bale::index_stream stream(p, static_cast<int>(mine));
  std::uint64_t* counts = st.counts.data();
  const auto n = static_cast<std::uint64_t>(p.requests_per_core);
  std::array<shoal::global_completion_event, 2> chunks;
  std::size_t chunk = 0;
  yield_every pacing;
  std::int64_t chunk_left = delegate_chunk;
  bale::block_split b;
  for (std::uint64_t first = 0; first < n; first += bale::block_split::capacity) {
    b.fill(stream, mine, first, std::min(n, first + bale::block_split::capacity));
    for (std::uint32_t i = 0; i < b.own; ++i) ++counts[b.own_local[i]];
    for (std::uint32_t i = 0; i < b.remote; ++i) {
      const std::uint32_t local = b.remote_local[i];
      shoal::delegate::post(
          static_cast<int>(b.owner[i]), [local] { ++t_core->counts[local]; }, chunks[chunk]);
      pacing.tick();
    }
    chunk_left -= b.remote;
    if (chunk_left > 0) continue;
    chunk_left = delegate_chunk;
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
  const shoal::channel<std::uint32_t> ch =
      shoal::make_channel<std::uint32_t>(count_increment{}, {.max_in_flight = max_in_flight});
  shoal::on_all_cores([] {
    histogram_core& st = g_cores.local();
    st.counts.assign(static_cast<std::size_t>(g_problem.table_per_core), 0);
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
