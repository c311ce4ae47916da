// `shoal isx`: ISx, the bucket sort of uniform random keys that BCL's thesis
// (section 5.3) runs on its queues (plain/isx_problem.hpp has the problem and
// the checks).
//
//   shoal isx [--keys-per-core N] [--max-key M] [--iterations I]
//             [--message-keys K] [--seed S] [--impl queue|channel|sequential] [--json]
//
// Each timed sort: a barrier (queue: none, see run_core), the distribution stage (every core sends
// each of its keys to the core owning the key's value), then the local sort stage (each core sorts
// what it got by counting). Keys are counted where they land, with no copy in between: this core's
// own keys as their stage fills, a queue's keys in the queue's storage, a channel's in the handler;
// then the counts are written out in order. The implementations:
//   queue       BCL's way (its figure 5.2): bcl::fast_queues on every core
//               (two sets, used by alternate sorts);
//               a core stages K keys per destination (in a job of two
//               cores: splits each chunk of K keys in registers) and pushes each full
//               stage into the destination's queue (one remote atomic and
//               one remote write of K keys); rflush and an arrival
//               barrier end the stage; each core then takes its queue's
//               keys locally, in place, and rewinds the emptied queue to
//               its first slot. Two untimed sorts, one per set, before the
//               timer.
//   channel     the same stages travel as 64-byte values (15 keys) of a
//               shoal channel: aggregated messages, handled on the owner;
//               end_phase ends the stage.
//   sequential  std::sort of the whole input on one core: the reference.
// The baseline (shoal-baseline-isx) is ISx's MPI design: counts by
// MPI_Alltoall, keys by MPI_Alltoallv.
#include <shoal/bcl/fast_queue.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/memory.hpp"
#include "isx/plain/isx_problem.hpp"

namespace shoal_apps {

namespace {

using isx::isx_problem;
using isx::isx_tally;
using key_queue = shoal::bcl::fast_queue<std::uint32_t>;

/// Up to 15 keys for one core: the channel impl's value (64 bytes).
struct key_block {
  static constexpr int capacity = 15;
  std::uint32_t count = 0;
  std::array<std::uint32_t, capacity> keys;
};
static_assert(sizeof(key_block) == 64);

/// A core's part of the sort.
struct core_state {
  const isx_problem* problem = nullptr;
  int me = 0;
  std::uint64_t lo = 0;  ///< this core sorts key values [lo, hi)
  std::uint64_t hi = 0;
  std::vector<std::uint32_t> input;   ///< this core's keys (made once)
  std::uint64_t counted = 0;          ///< this sort's keys counted in [lo, hi)
  std::vector<std::uint32_t> counts;  ///< the counting sort's histogram
  std::vector<std::uint32_t> sorted;  ///< the local sort's output
  std::vector<std::uint32_t> stage;   ///< message_keys per destination
  std::vector<int> fill;              ///< keys staged per destination
  std::uint64_t lost = 0;             ///< keys outside [lo, hi) (none when right)
};

shoal::per_core<core_state> g_core;
/// This core's state for the channel handler (one thread per shoal core).
thread_local core_state* t_state = nullptr;

/// What core 0 hands the root task.
struct outcome {
  double seconds = 0;
  isx_tally tally;
};
outcome g_result;

/// Every rank's copy of the problem (set before shoal::run, read by cores).
std::unique_ptr<isx_problem> g_problem;
std::string g_fault;

void setup_core(core_state& st) {
  st = core_state{};
  t_state = &st;
  const isx_problem& p = *g_problem;
  st.problem = &p;
  st.me = shoal::mycore();
  st.lo = p.range_begin(st.me);
  st.hi = p.range_begin(st.me + 1);
  st.input.resize(static_cast<std::size_t>(p.keys_per_core()));
  isx::make_keys(p, st.me, st.input);
  st.counts.assign(static_cast<std::size_t>(st.hi - st.lo), 0);
  // distribute_pair (two cores) takes 3 message_keys.
  st.stage.resize(static_cast<std::size_t>(std::max(shoal::cores(), 3)) *
                  static_cast<std::size_t>(p.message_keys()));
  st.fill.assign(static_cast<std::size_t>(shoal::cores()), 0);
}

/// Counts keys that reached this core (the first half of its local sort).
void take(core_state& st, std::span<const std::uint32_t> keys) {
  const std::uint64_t outside = isx::count_keys(keys, st.lo, st.counts);
  st.lost += outside;
  st.counted += keys.size() - outside;
}

/// distribute() in a job of two cores: each chunk of message_keys keys split
/// into this core's and the other's with both fill counts in registers
/// (every key stored to both lists, each count advanced by a comparison);
/// this core's are counted a chunk at a time, the other's sent message_keys
/// at a time as before. The general staging keeps each destination's fill
/// count in memory, and with two destinations every key's store waited on
/// the last key's count (bench-key-staging: 3.05 ns against 1.59 ns a key).
template <class Send>
void distribute_pair(core_state& st, const Send& send) {
  const auto k = static_cast<std::size_t>(st.problem->message_keys());
  const int other = st.me ^ 1;
  const std::uint64_t lo = st.lo;
  const std::uint64_t width = st.hi - st.lo;
  std::uint32_t* mine = st.stage.data();  // k keys, then 2 k for the other core
  std::uint32_t* theirs = mine + k;
  std::size_t waiting = 0;  // the other's keys in theirs (< k between chunks)
  const std::uint32_t* keys = st.input.data();
  const std::size_t total = st.input.size();
  for (std::size_t at = 0; at < total; at += k) {
    const std::size_t n = std::min(k, total - at);
    std::size_t own = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint32_t v = keys[at + j];
      const bool is_mine = static_cast<std::uint64_t>(v) - lo < width;
      mine[own] = v;
      theirs[waiting] = v;
      own += static_cast<std::size_t>(is_mine);
      waiting += static_cast<std::size_t>(!is_mine);
    }
    take(st, std::span<const std::uint32_t>(mine, own));
    if (waiting >= k) {
      send(other, theirs, static_cast<int>(k));
      std::copy(theirs + k, theirs + waiting, theirs);
      waiting -= k;
    }
  }
  if (waiting > 0) send(other, theirs, static_cast<int>(waiting));
}

/// The distribution stage's sending side: each key staged for its owner;
/// a full stage is sent with `send(dest, keys, n)` (or kept, for this core);
/// at the end every partial stage goes too.
template <class Send>
void distribute(core_state& st, const Send& send) {
  if (shoal::cores() == 2) {
    distribute_pair(st, send);
    return;
  }
  const isx_problem& p = *st.problem;
  const int k = p.message_keys();
  std::uint32_t* stage = st.stage.data();
  int* fill = st.fill.data();
  auto ship = [&](int dest, int n) {
    const std::uint32_t* run = stage + static_cast<std::ptrdiff_t>(dest) * k;
    if (dest == st.me)
      take(st, std::span<const std::uint32_t>(run, static_cast<std::size_t>(n)));
    else
      send(dest, run, n);
  };
  const isx::isx_problem::owner_map owner = p.owners();
  const std::uint32_t* key = st.input.data();
  const std::uint32_t* const end = key + st.input.size();
  while (key != end) {
    // Stages keys until one destination's stage is full. No call in this
    // loop and the owner map in a local, so the map, the stages and the
    // counts stay in registers (loaded through the problem and the state,
    // with the send inside the loop, they were reloaded on every key: 23
    // instructions a key against 20).
    int full = -1;
    for (; key != end;) {
      const std::uint32_t v = *key++;
      const int dest = owner(v);
      const int n = fill[dest];
      stage[static_cast<std::ptrdiff_t>(dest) * k + n] = v;
      fill[dest] = n + 1;
      if (n + 1 == k) {
        full = dest;
        break;
      }
    }
    if (full >= 0) {
      fill[full] = 0;
      ship(full, k);
    }
  }
  for (int dest = 0; dest < shoal::cores(); ++dest) {
    if (fill[dest] > 0) ship(dest, fill[dest]);
    fill[dest] = 0;
  }
}

/// The queue impl's distribution stage: pushes, then flush, an arrival
/// barrier and the local pops. arrival_barrier, not barrier: the queues
/// carry no messages a draining barrier would wait for (am's pushes are
/// blocking delegates, rma's and shm's puts complete at rflush); it costs
/// 1.7 us at 2 x 1 against barrier's 3.5 us (quiet_checks.md), of a sort
/// of about 6 ms at 2^20 keys per core.
void distribute_by_queue(core_state& st, std::span<key_queue> queues, int set) {
  auto queue_of = [&](int core) -> key_queue& {
    return queues[2 * static_cast<std::size_t>(core) + static_cast<std::size_t>(set)];
  };
  // No yield after a push (there was one under am and rma, h12i): a push
  // that waits for its target already lets this core serve others (am:
  // the delegate's wait suspends the task; rma: rma_request::wait yields
  // while MPI has not completed the atomic), and one that does not wait
  // has nobody to serve (the stage sends no messages; the arrival barrier
  // polls). Under direct and shm a push is this core's own loads and stores.
  distribute(st, [&](int dest, const std::uint32_t* run, int n) {
    if (!queue_of(dest).push(std::span<const std::uint32_t>(run, static_cast<std::size_t>(n))))
      shoal::abort_job(fmt::format("shoal isx: failed: the queue of core {} is full ({} keys): "
                                   "its key range got far more than its share",
                                   dest, queue_of(dest).capacity()),
                       1);
  });
  shoal::rflush();
  shoal::arrival_barrier();
  key_queue& mine = queue_of(st.me);
  mine.local_nonatomic_drain([&](std::span<const std::uint32_t> run) { take(st, run); });
  // Every sort of this set then fills the ring from slot 0 again: the pages
  // the warm-up sort touched, as the baseline reuses its receive buffer (a
  // ring walking on faults on fresh pages, in both processes under shm, in
  // the first timed sorts: about 1100 faults per rank at 2^20 keys per core).
  mine.local_nonatomic_rewind();
}

/// The channel impl's distribution stage.
void distribute_by_channel(core_state& st, const shoal::channel<key_block>& ch) {
  distribute(st, [&](int dest, const std::uint32_t* run, int n) {
    for (int i = 0; i < n; i += key_block::capacity) {
      key_block b;
      b.count = static_cast<std::uint32_t>(std::min(key_block::capacity, n - i));
      std::copy_n(run + i, b.count, b.keys.begin());
      ch.send(dest, b);
    }
    shoal::yield();
  });
  ch.end_phase();
}

/// The whole run on one core; SPMD. Exactly one of `queues` (non-empty) and
/// `ch` is used.
void run_core(std::span<key_queue> queues, const shoal::channel<key_block>& ch) {
  core_state& st = g_core.local();
  setup_core(st);
  const isx_problem& p = *st.problem;
  int sorts = 0;
  auto sort_once = [&] {
    std::ranges::fill(st.counts, 0);
    st.counted = 0;
    st.lost = 0;
    if (!queues.empty()) {
      // Sorts alternate between two sets of queues, so no barrier is needed
      // before pushing: a core pushing into set s in sort i + 1 has passed
      // sort i's arrival barrier, which every owner reached only after
      // draining set s in sort i - 1. One barrier per sort, as the
      // baseline's one all-to-all exchange (at 2^16 keys per core it is
      // most of a sort).
      distribute_by_queue(st, queues, sorts++ % 2);
    } else {
      shoal::barrier();  // every core done with the last sort before keys arrive
      distribute_by_channel(st, ch);
    }
    isx::emit_sorted(st.counts, st.lo, st.counted, st.sorted);
  };
  // Warm-up, untimed (ISx's burn-in): one sort, and under the queue impl
  // one per set of queues. A set's ring is first written by its first sort:
  // with one warm-up sort the first timed sort wrote set 1's pages for the
  // first time (at 2^20 keys per core, 545 page faults on rank 0 at 2 x 1,
  // 1023 at 1 x 2, tmpfs pages under shm: getrusage around the timed
  // sorts; none with two), a fixed cost in the timed sorts that the
  // baseline pays before its timer (its buffers are touched by reserve()).
  const int warm_ups = queues.empty() ? 1 : 2;
  for (int i = 0; i < warm_ups; ++i) sort_once();
  shoal::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < p.iterations(); ++i) sort_once();
  shoal::barrier();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (st.me == 0) isx::inject_fault(g_fault, st.sorted);
  const auto base = shoal::exclusive_scan_sum(static_cast<std::uint64_t>(st.sorted.size())).before;
  const isx_tally mine = isx::check_output(st.input, st.sorted, base, st.lo, st.hi, st.lost);
  std::array<std::uint64_t, 6> parts{mine.keys,       mine.out_of_order, mine.out_of_range,
                                     mine.input_hash, mine.output_hash,  mine.sorted_hash};
  shoal::allreduce_sum(std::span<std::uint64_t>(parts));  // wraps mod 2^64, as the hashes do
  if (st.me == 0)
    g_result =
        outcome{seconds, isx_tally{parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]}};
  st = core_state{};
}

/// The queues' room on each core's slice of the global heap: fast_queue
/// allocates its capacity on every core, so 2 P queues (two sets) take 2 P
/// capacities.
void check_heap(const isx_problem& p) {
  const shoal::config& cfg = shoal::current_config();
  const double slice = static_cast<double>(cfg.heap_mb) * 1048576.0 / cfg.cores;
  const double need = 2.0 * static_cast<double>(p.cores()) *
                      (static_cast<double>(p.receive_bound()) * 4.0 + 4096.0);
  if (need > 0.9 * slice)
    throw input_error(fmt::format(
        "--keys-per-core {}: the {} queues need {} of each core's global heap slice, which has "
        "{} (--heap-mb {} over {} cores); raise --heap-mb or lower --keys-per-core",
        p.keys_per_core(), 2 * p.cores(), human_bytes(need), human_bytes(slice), cfg.heap_mb,
        cfg.cores));
}

void run_isx(const isx::isx_options& o, run_context& ctx) {
  g_problem = std::make_unique<isx_problem>(o, shoal::cores());
  g_fault = o.fault;
  const isx_problem& p = *g_problem;
  if (ctx.impl == "queue") check_heap(p);
  shoal::run([&] {
    if (ctx.impl == "sequential") {
      double seconds = 0;
      isx_tally t = isx::sort_sequential(p, seconds);
      isx::fill_report(ctx.out, p, seconds, t);
      return;
    }
    if (ctx.impl == "queue") {
      // Two queues per core (one per set), hosted there; every core gets
      // every handle: queue (core c, set s) is at 2 c + s.
      shoal::on_all_cores([] {
        std::array<key_queue, 2> mine{key_queue::make(shoal::mycore(), g_problem->receive_bound()),
                                      key_queue::make(shoal::mycore(), g_problem->receive_bound())};
        const shoal::gathered<key_queue> all =
            shoal::allgatherv(std::span<const key_queue>(mine.data(), mine.size()));
        std::vector<key_queue> queues = all.values;
        run_core(queues, shoal::channel<key_block>{});
        shoal::barrier();  // nobody pushes to a queue any more
        for (key_queue& q : mine) q.destroy();
      });
    } else {
      const shoal::channel<key_block> ch = shoal::make_channel<key_block>([](const key_block& b) {
        take(*t_state, std::span<const std::uint32_t>(b.keys.data(), b.count));
      });
      shoal::on_all_cores([ch] { run_core({}, ch); });
      shoal::channel<key_block> closing = ch;
      closing.close();
    }
    isx::fill_report(ctx.out, p, g_result.seconds, g_result.tally);
  });
  g_problem.reset();
}

}  // namespace

app_spec isx_app() {
  return {"isx",
          "ISx bucket sort of uniform random keys (BCL's queue benchmark), Mkeys/s",
          {"queue", "channel", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<isx::isx_options>();
            isx::add_options(cmd, *o);
            return [o](run_context& ctx) { run_isx(*o, ctx); };
          }};
}

}  // namespace shoal_apps
