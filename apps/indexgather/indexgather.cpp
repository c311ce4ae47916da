// `shoal indexgather`: the bale index-gather kernel on shoal.
//
//   shoal indexgather [--table-per-core T] [--requests-per-core N] [--seed s] [--json]
//
// A table of T 64-bit entries per core (T * cores in all, block-distributed),
// entry i holding bale::table_value(seed, i); every core reads N entries
// drawn at random over the whole table (common/plain/bale.hpp: the
// streams) into its target array, tgt[k] = table[index_k]. The gather is
// timed. Validation (untimed, independent of the message path): each core
// regenerates its stream and checks tgt[k] == table_value(seed, index_k) for
// every k (computed, not read from the table), and that it received exactly
// one reply per request it sent (tgt starts at zero, so a slot written
// twice leaves another one unwritten, which the value check catches).
//
// The implementation (--impl channel): an SPMD task per core walks its
// stream; a read of its own slice is done at once, any other goes to the
// owner on a request channel as (local index, slot, requester), packed into
// 8 bytes when the three fit in 64 bits (else 12 bytes); the owner's handler
// reads the entry and sends (slot, value), 12 bytes, on a reply channel to
// the requester, whose handler stores it in tgt[slot] and counts it (for
// the validation). The request channel bounds the reads a core has
// unanswered at each other core (flow control: see max_in_flight). Cores
// that are done keep serving requests (handlers run whether or not a task
// does); the gather ends with a draining barrier(), which returns once every
// request and every reply it caused has been handled.
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/bale.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps {

namespace {

using bale::bale_problem;

/// A read of another core's entry, in 12 bytes (any sizes).
struct read_request {
  std::uint32_t local;      ///< entry in the owner's slice
  std::uint32_t slot;       ///< where the requester stores it
  std::uint32_t requester;  ///< global core to reply to
};

/// Requests as read_request values on the wire.
struct wide_codec {
  using value_type = read_request;
  value_type make(std::uint32_t local, std::uint32_t slot, std::uint32_t requester) const noexcept {
    return {local, slot, requester};
  }
  read_request open(const value_type& v) const noexcept { return v; }
};

/// Requests packed into 64 bits, (requester, local, slot) from high to low:
/// 8 bytes on the wire, when the three fields fit (almost always:
/// bits(T) + bits(N) + bits(cores) <= 64).
struct packed_codec {
  using value_type = std::uint64_t;
  int local_shift;      ///< bits of a slot
  int requester_shift;  ///< bits of a slot and a local index

  value_type make(std::uint32_t local, std::uint32_t slot, std::uint32_t requester) const noexcept {
    return static_cast<std::uint64_t>(slot) | (static_cast<std::uint64_t>(local) << local_shift) |
           (static_cast<std::uint64_t>(requester) << requester_shift);
  }
  read_request open(value_type v) const noexcept {
    const std::uint64_t slot_mask = (std::uint64_t{1} << local_shift) - 1;
    const std::uint64_t local_mask = (std::uint64_t{1} << (requester_shift - local_shift)) - 1;
    return {static_cast<std::uint32_t>((v >> local_shift) & local_mask),
            static_cast<std::uint32_t>(v & slot_mask),
            static_cast<std::uint32_t>(v >> requester_shift)};
  }
};

/// The value read, for the requester's slot: 12 bytes (the value in two halves
/// keeps the struct 4-byte aligned, so no padding).
/// The value's halves come first: the handler builds the reply on its stack
/// with one 8-byte store of the value and one 4-byte store of the slot, and
/// send() copies it out with an 8-byte and a 4-byte load that each match a
/// store. With the slot first, the 8-byte load spanned both stores, which
/// defeats store-to-load forwarding: a stall per reply, 80% of the request
/// handler's time (perf, 1 process x 2 cores).
struct read_reply {
  std::uint32_t low;
  std::uint32_t high;
  std::uint32_t slot;
};

/// The app's options: the problem (shared with the baseline) and a test switch.
struct app_options {
  bale::bale_options bale;
  bool wide_requests = false;
};

/// The problem, set on every process before shoal::run.
bale_problem g_problem;

/// One core's slice of the table, its target array and reply count.
struct gather_core {
  std::vector<std::uint64_t> table;
  std::vector<std::uint64_t> tgt;
  std::int64_t replies = 0;  ///< replies received (the validation checks the count)
};
shoal::per_core<gather_core> g_cores;
/// The calling core's g_cores slot, for the handlers (a thread-local load
/// instead of per_core::local()'s lookup per message). Set on each core
/// before the gather.
thread_local gather_core* t_core = nullptr;

/// Request handler, replicated on every core: reads the entry and replies.
template <class Codec>
struct serve_read {
  Codec codec;
  shoal::channel<read_reply> replies;

  void operator()(const typename Codec::value_type& v) const {
    const read_request r = codec.open(v);
    const std::uint64_t value = t_core->table[r.local];
    replies.send(static_cast<int>(r.requester),
                 read_reply{static_cast<std::uint32_t>(value),
                            static_cast<std::uint32_t>(value >> 32), r.slot});
  }
};

/// Reply handler: stores the value and counts it.
struct store_reply {
  void operator()(const read_reply& r) const {
    gather_core& st = *t_core;
    st.tgt[r.slot] = (static_cast<std::uint64_t>(r.high) << 32) | r.low;
    ++st.replies;
  }
};

/// Most reads a core has sent to one other core and not yet seen served
/// there (the request channel's flow control): 16 aggregation buffers of
/// 8-byte requests. Beyond it the sender suspends until the owner
/// acknowledges a batch. Its core then idles, handling what arrives, and
/// gives its CPU up to the OS when nothing does, instead of spinning on
/// back-pressure (which, on an oversubscribed machine, starved the very
/// thread it waited for: 1 process x 2 cores ran 2-4x slower without a
/// window).
constexpr std::uint32_t max_in_flight = 32768;

/// Makes the calling core's N reads, then waits until every read of every
/// core has been answered. One task per core.
template <class Codec>
void gather_share(const shoal::channel<typename Codec::value_type>& ch, const Codec& codec) {
  const bale_problem& p = g_problem;
  gather_core& st = g_cores.local();
  const int me = shoal::mycore();
  const auto mine = static_cast<std::uint32_t>(me);
  const bale::index_stream stream(p, me);
  const std::uint64_t* table = st.table.data();
  std::uint64_t* tgt = st.tgt.data();
  const auto n = static_cast<std::uint64_t>(p.requests_per_core);
  yield_every pacing;  // answer the others' reads meanwhile
  bale::block_split b;
  for (std::uint64_t first = 0; first < n; first += bale::block_split::capacity) {
    b.fill(stream, mine, first, std::min(n, first + bale::block_split::capacity));
    for (std::uint32_t i = 0; i < b.own; ++i) tgt[b.own_slot[i]] = table[b.own_local[i]];
    for (std::uint32_t i = 0; i < b.remote; ++i) {
      ch.send(static_cast<int>(b.owner[i]), codec.make(b.remote_local[i], b.remote_slot[i], mine));
      pacing.tick();
    }
  }
  shoal::barrier();  // drains both channels: every request and every reply
}

/// Opens the request channel for `codec`, runs the timed gather, closes it.
/// Returns the seconds taken. Root task.
template <class Codec>
double timed_gather(const Codec& codec, const shoal::channel<read_reply>& back) {
  using value = typename Codec::value_type;
  shoal::channel<value> ch =
      shoal::make_channel<value>(serve_read<Codec>{codec, back}, {.max_in_flight = max_in_flight});
  const auto t0 = std::chrono::steady_clock::now();
  shoal::on_all_cores([ch, codec] { gather_share(ch, codec); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ch.close();
  return seconds;
}

/// Validation sums over the job.
struct check_sums {
  std::int64_t wrong = 0;        ///< slots whose value is not the entry's
  std::int64_t bad_replies = 0;  ///< |replies received - remote requests|, summed
};
check_sums g_check;  // written by global core 0 (on rank 0, the root's process)

/// Checks the calling core's target array against the table's defining
/// function; sums the verdict over the job. One task per core.
void check_targets() {
  const bale_problem& p = g_problem;
  gather_core& st = g_cores.local();
  const int me = shoal::mycore();
  if (p.corrupt && me == 0) st.tgt[0] ^= 1;  // fault injection: the check must see it
  const auto mine = static_cast<std::uint32_t>(me);
  const bale::index_stream stream(p, me);
  check_sums sums;
  std::int64_t remote = 0;
  for (std::int64_t k = 0; k < p.requests_per_core; ++k) {
    const bale::target t = stream.at(static_cast<std::uint64_t>(k));
    remote += t.owner != mine ? 1 : 0;
    const std::uint64_t want = bale::table_value(p.seed, bale::global_index(p, t));
    sums.wrong += st.tgt[static_cast<std::size_t>(k)] != want ? 1 : 0;
  }
  sums.bad_replies = st.replies > remote ? st.replies - remote : remote - st.replies;
  const check_sums all = shoal::allreduce(sums, [](const check_sums& a, const check_sums& b) {
    return check_sums{a.wrong + b.wrong, a.bad_replies + b.bad_replies};
  });
  if (me == 0) g_check = all;
  st.table = {};
  st.tgt = {};
}

/// The whole run: table, timed gather, validation. Root task.
void run_in_root(report& out, bool force_wide) {
  const bale_problem& p = g_problem;
  shoal::channel<read_reply> back = shoal::make_channel<read_reply>(store_reply{});
  shoal::on_all_cores([] {
    gather_core& st = g_cores.local();
    const bale_problem& q = g_problem;
    const auto base =
        static_cast<std::uint64_t>(shoal::mycore()) * static_cast<std::uint64_t>(q.table_per_core);
    st.table.resize(static_cast<std::size_t>(q.table_per_core));
    for (std::size_t i = 0; i < st.table.size(); ++i)
      st.table[i] = bale::table_value(q.seed, base + i);
    st.tgt.assign(static_cast<std::size_t>(q.requests_per_core), 0);
    st.replies = 0;
    t_core = &st;
  });
  const int slot_bits = bits_for(static_cast<std::uint64_t>(p.requests_per_core));
  const int local_bits = bits_for(static_cast<std::uint64_t>(p.table_per_core));
  const int core_bits = bits_for(static_cast<std::uint64_t>(p.participants));
  const bool packed = !force_wide && slot_bits + local_bits + core_bits <= 64;
  const double seconds = packed
                             ? timed_gather(packed_codec{slot_bits, slot_bits + local_bits}, back)
                             : timed_gather(wide_codec{}, back);
  shoal::on_all_cores([] { check_targets(); });
  back.close();
  const bool ok = g_check.wrong == 0 && g_check.bad_replies == 0;
  bale::fill_report(out, p, {"reads", "reads", "reads_per_s", "M reads/s"}, "core", seconds, ok,
                    fmt::format("{} of {} gathered values differ from the table's entries; {} "
                                "replies missing or extra",
                                g_check.wrong, p.requests(), g_check.bad_replies));
  out.set("wrong_values", g_check.wrong);
  out.set("request_bytes", packed ? 8 : 12, false);
}

/// Runs on every rank; fills the report on rank 0, where the root runs.
void run_indexgather(const app_options& opts, run_context& ctx) {
  // Per core: the table slice (8 bytes an entry) and the targets (8 a read).
  g_problem = bale::make_problem(opts.bale, shoal::cores(), shoal::local_cores(), 8.0, 8.0);
  shoal::run([&] { run_in_root(ctx.out, opts.wide_requests); });
}

}  // namespace

app_spec indexgather_app() {
  return {"indexgather",
          "bale index-gather: random reads of a distributed table, returned to the requester",
          {"channel"},
          [](CLI::App& cmd) -> runner {
            auto opts = std::make_shared<app_options>();
            bale::add_bale_options(cmd, opts->bale, "reads");
            // For the tests: the 12-byte requests that sizes too large to pack would use.
            hide_from_help(cmd, cmd.add_flag("--wide-requests", opts->wide_requests,
                                             "send 12-byte requests even when 8 would do (tests)"));
            return [opts](run_context& ctx) { run_indexgather(*opts, ctx); };
          }};
}

}  // namespace shoal_apps
