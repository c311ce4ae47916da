// `shoal gups`: HPCC RandomAccess (giga-updates per second) on shoal.
//
//   shoal gups [--log-table n] [--impl channel|delegate] [--outstanding sent|applied]
//              [--routing none|direct|hypercube|node] [--reduce none|xor]
//              [--cache-slots n] [--json]
//
// A table of 2^n words in global memory, table[i] = i; every core applies
// its share of 4 * 2^n updates table[r & (2^n - 1)] ^= r, r drawn from its
// own start point of the HPCC stream, with at most 1024 updates outstanding
// per core (updater.hpp says what outstanding means under each --outstanding). The update phase is
// timed; then, untimed, the table is checked against a sequential run for small n, the updates are
// applied again (XOR undoes them) and the words with table[i] != i are
// counted: HPCC accepts up to 1%, shoal should leave none, because every
// update runs at its home core, atomically.
//
// The implementations (--impl):
//   channel   Active Pebbles: a typed channel of bare update values, 8 bytes
//             per update on the wire. The default, being the faster: a fifth
//             of the delegate's bytes per update, no completion message per
//             update across processes, and one queue per core that
//             overlaps the cache misses of its own and received updates
//             (about 1.6x the delegate on 1 process x 2 cores, 1.4x on
//             2 x 1, measured at --log-table 22-24, before that queue).
//   delegate  Grappa: one delegate::post per update (a 40-byte
//             closure message), counted by a global_completion_event.
//
// --routing (Active Pebbles' active routing, routed_updater.cpp): the
// updates go to their table words as targets of a library target channel,
// routed between processes directly, along a hypercube (log2 P hops, log2 P
// peers per process) or in two levels by node (ranks per node from the
// launcher: OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
// RANKS_PER_NODE). none (the default) is the channel updater above.
// The report adds the values forwarded at hops, hops per remote update, and
// the messages, bytes and MPI messages handed to other processes.
// --reduce xor (with a routing; Active Pebbles' message reductions): updates
// of one word staged together, at the source or at a hop, travel as one,
// their values XORed (--cache-slots per core); the report adds the messages
// removed and the caches' hit rate.
//
// --outstanding applied (the stricter reading of the look-ahead limit) puts a
// round trip on every chunk of 256 updates; the default, sent, flushes every
// chunk as HPCC's own MPI code does, and keeps at most 16 chunks per core
// unacknowledged (flow control, not part of the 1024: updater.hpp).
#include <shoal/shoal.hpp>

#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/input_error.hpp"
#include "gups/gups_table.hpp"
#include "gups/plain/gups_problem.hpp"
#include "gups/updater.hpp"

namespace shoal_apps {

namespace {

using gups::gups_outcome;
using gups::gups_problem;

/// The app's options: the problem (shared with the baseline) and the rule.
struct app_options {
  gups::gups_options problem;
  std::string outstanding = "sent";

  std::string routing = "none";
  std::string reduce = "none";
  std::uint32_t cache_slots = 4096;
  const CLI::Option* cache_slots_flag = nullptr;  ///< refused without --reduce

  gups::outstanding_rule rule() const {
    return outstanding == "applied" ? gups::outstanding_rule::until_applied
                                    : gups::outstanding_rule::until_sent;
  }
};

std::unique_ptr<gups::updater> make_updater(const std::string& impl, const gups::gups_table& t,
                                            const gups_problem& p, gups::outstanding_rule rule,
                                            const app_options& opts) {
  if (impl == "delegate") return gups::make_delegate_updater(t, p, rule);
  if (opts.routing != "none")
    return gups::make_routed_updater(t, p, opts.routing, opts.reduce == "xor", opts.cache_slots);
  return gups::make_channel_updater(t, p, rule);
}

/// The whole run: table, timed updates, validation. Root task.
gups_outcome run_in_root(const std::string& impl, const gups_problem& p,
                         gups::outstanding_rule rule, const app_options& opts) {
  gups_outcome o;
  const gups::gups_table t = gups::make_table(p);
  {
    const std::unique_ptr<gups::updater> u = make_updater(impl, t, p, rule, opts);
    const auto t0 = std::chrono::steady_clock::now();
    u->apply_all();
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (p.has_reference()) {
      o.reference_run = true;
      o.reference_ok = gups::table_digest(t) == gups::reference_digest(p);
    }
    // XOR undoes the timed phase, through an independent path (updater.hpp).
    gups::make_reapply_updater(t, p)->apply_all();
    o.wrong = gups::count_wrong(t);
  }
  gups::free_table(t);
  return o;
}

/// Runs on every rank; fills the report on rank 0, where the root runs.
void run_gups(const app_options& opts, run_context& ctx) {
  const double heap_bytes = static_cast<double>(shoal::current_config().heap_mb) * 1024.0 * 1024.0;
  const gups_problem p = gups::make_problem(opts.problem, shoal::ranks(), heap_bytes, "--heap-mb");
  if (opts.routing != "none" && ctx.impl != "channel")
    throw input_error(
        fmt::format("--routing {}: routing applies to --impl channel only, not "
                    "--impl {}",
                    opts.routing, ctx.impl));
  if (opts.routing != "none" && opts.rule() == gups::outstanding_rule::until_applied)
    throw input_error(
        fmt::format("--routing {} with --outstanding applied: routed updates "
                    "arrive out of order, which applied's channel fences need; use "
                    "--outstanding sent",
                    opts.routing));
  if (opts.reduce != "none" && opts.routing == "none")
    throw input_error(
        fmt::format("--reduce {}: reductions run on the routed target channel; add --routing "
                    "direct, hypercube or node",
                    opts.reduce));
  refuse_unused(opts.cache_slots_flag, opts.reduce != "none", "--reduce xor");
  shoal::run([&] {
    gups::fill_report(ctx.out, p, "core", run_in_root(ctx.impl, p, opts.rule(), opts));
    ctx.out.set("outstanding", "until " + opts.outstanding);
    ctx.out.set("routing", opts.routing);
    if (opts.routing != "none") {
      const gups::route_counts r = gups::last_route_counts();
      // Updates that left their process took 1 + forwarded / messages hops
      // on average (a forwarded one is handed to MPI again at its hop).
      const std::int64_t first_hops = r.messages - r.forwarded;
      ctx.out.set("forwarded", r.forwarded);
      ctx.out.set(
          "hops_per_remote_update",
          first_hops > 0 ? static_cast<double>(r.messages) / static_cast<double>(first_hops) : 0.0);
      ctx.out.set("remote_messages", r.messages, false);
      ctx.out.set("remote_bytes", r.bytes, false);
      ctx.out.set("remote_batches", r.batches, false);
      ctx.out.set("mpi_messages", r.mpi_messages, false);
      ctx.out.set("max_network_buffers_per_process", r.max_network_buffers, false);
      ctx.out.set("phase_network_buffers_per_process", r.max_phase_network_buffers, false);
      ctx.out.set("coalescing_buffers_per_process", r.max_coalescing_buffers, false);
      // Buffer memory per process (routing.hpp's network_traffic): the
      // phase's peak of buffers held at once, and its per-peer part, in bytes.
      ctx.out.set("phase_buffer_bytes_per_process", r.max_phase_buffer_bytes, false);
      ctx.out.set("coalescing_buffer_bytes_per_process",
                  r.max_coalescing_buffers * r.network_buffer_bytes, false);
      ctx.out.set("network_buffer_bytes", shoal::current_config().network_bytes, false);
      ctx.out.set("reduce", opts.reduce);
      if (opts.reduce != "none") {
        ctx.out.set("messages_removed", r.reduction_hits);
        ctx.out.set("reduction_hit_rate",
                    r.reduction_lookups > 0 ? static_cast<double>(r.reduction_hits) /
                                                  static_cast<double>(r.reduction_lookups)
                                            : 0.0);
      }
    }
  });
}

}  // namespace

app_spec gups_app() {
  return {"gups",
          "HPCC RandomAccess: random XOR updates of a table in global memory (GUPS)",
          {"channel", "delegate"},
          [](CLI::App& cmd) -> runner {
            auto opts = std::make_shared<app_options>();
            gups::add_gups_options(cmd, opts->problem);
            cmd.add_option("--outstanding", opts->outstanding,
                           "when an update stops counting against the 1024 per core: once sent "
                           "(HPCC's MPI code) or once known applied")
                ->check(CLI::IsMember({"sent", "applied"}))
                ->capture_default_str();
            cmd.add_option("--routing", opts->routing,
                           "route updates between processes on a target channel: direct, "
                           "hypercube (log2 P hops) or node (two levels, ranks per node from "
                           "the launcher); none: the typed channel without routing")
                ->check(CLI::IsMember({"none", "direct", "hypercube", "node"}))
                ->capture_default_str();
            cmd.add_option("--reduce", opts->reduce,
                           "xor: updates of one word staged together travel as one (message "
                           "reductions on the routed channel; needs --routing)")
                ->check(CLI::IsMember({"none", "xor"}))
                ->capture_default_str();
            opts->cache_slots_flag =
                cmd.add_option("--cache-slots", opts->cache_slots,
                               "slots of each core's reduction cache (--reduce xor)")
                    ->check(CLI::Range(1U, shoal::max_cache_slots))
                    ->capture_default_str();
            return [opts](run_context& ctx) { run_gups(*opts, ctx); };
          }};
}

}  // namespace shoal_apps
