// NPB IS on shoal: the SPMD ranking loop and full verification (rank_spmd.hpp).
#include "intsort/rank_spmd.hpp"

#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <vector>

#include <fmt/format.h>

namespace shoal_apps::intsort {

namespace {

/// An empty slot of a core's sorted slice (keys >= 0).
constexpr std::int32_t unfilled = -1;

/// Up to `capacity` keys for one core (their counters' indices there):
/// the value of the blocks channel (64 bytes).
struct key_block {
  static constexpr int capacity = 15;
  std::int32_t count = 0;
  std::array<std::int32_t, capacity> keys;
};

/// Keys staged per stream before they are counted or sent: 8 blocks.
constexpr int stage_keys = 8 * key_block::capacity;

/// Counters (8-bit) one stream's keys fall into at most: 32 KiB, an L1 data
/// cache. Keys are staged per stream, a run of NPB buckets ranked by one
/// core, so that counting a run (here or on its ranking core) touches this
/// cache-sized part of the histogram, not all of it: the histogram of class
/// B at 4 cores is 512 KiB, and counting keys spread over all of it missed the
/// L1 cache on about every key (the MPI baseline counts keys that arrive
/// sorted by bucket). Many streams also break the chain of dependent stores
/// on one fill counter that few destinations made.
constexpr std::int32_t stream_counters = 32768;

/// Keys of one chunk that route_pair splits in registers.
constexpr int pair_chunk = 2048;

/// A histogram counter: 8 bits. Counting is a random increment per key into
/// the histogram of a core's range (1 MiB per parity for class B at 2
/// cores, against 2 MiB with 16 bits): on this machine's EPYC, whose two
/// vCPUs can share one core's 1 MiB L2 cache, the 16-bit histogram ran 2 x 1
/// at 0.88-0.99x the baseline in the near placement.
using counter = std::uint8_t;

/// What each iteration's scan combines: the keys a core ranked and the test
/// keys' values (each held by one core, 0 elsewhere).
struct scan_part {
  std::int64_t keys = 0;
  std::array<std::int64_t, test_keys> test{};
};

scan_part operator+(scan_part a, const scan_part& b) {
  a.keys += b.keys;
  for (std::size_t i = 0; i < a.test.size(); ++i) a.test[i] += b.test[i];
  return a;
}

/// A core's part of the problem and of the current phase.
struct core_state {
  const is_class* cls = nullptr;  ///< this process's class table entry
  int me = 0;
  std::int64_t first = 0;           ///< global index of keys[0]
  std::vector<std::int32_t> keys;   ///< the held keys
  std::vector<std::int32_t> owner;  ///< bucket -> ranking core
  /// bucket -> stream: consecutive buckets of one ranking core, at most
  /// stream_counters key values per stream.
  std::vector<std::int32_t> stream;
  std::vector<std::int32_t> stream_dest;  ///< stream -> ranking core
  std::int32_t lo = 0;              ///< this core ranks the key values [lo, hi)
  std::int32_t hi = 0;
  /// Histograms of [lo, hi), one per iteration parity, one after the other:
  /// keys of the next iteration may arrive while this core still reads this
  /// one's ranks. 8-bit counters (counter) halve the cache footprint
  /// that 16-bit ones had; no NPB class puts more than about 100 keys on one value,
  /// and finish_iteration ends the job if a count wrapped. A key of
  /// iteration s travels as its counter's index here (see code), so that
  /// the receiver's count is one increment.
  std::vector<counter> hist;
  /// code[p][s]: added to a key of stream s, ranked by core c, in an
  /// iteration of parity p gives its counter's index in c's hist:
  /// p * (c's range) - (c's lo).
  std::array<std::vector<std::int32_t>, 2> code;
  std::array<std::vector<std::int32_t>, 2> core_code;  ///< the same per core
  /// After the prefix sum, ranks[v - lo] = keys in [lo, v] (ranks minus base).
  std::vector<std::int32_t> ranks;
  std::int64_t base = 0;             ///< keys below lo, over all cores
  std::int64_t ranked = 0;           ///< keys in [lo, hi) (all ranked here)
  std::vector<std::int32_t> stage;   ///< route_keys: stage_keys keys per stream
  std::vector<int> fill;             ///< route_keys: keys staged per stream
  std::vector<std::int32_t> sorted;  ///< full verification: ranks [base, base + ranked)
  std::int64_t misplaced = 0;        ///< full verification: keys with no valid slot
  is_outcome out;                    ///< this core's partial verification counts
};

shoal::per_core<core_state> g_core;

/// This core's state, for the channel handlers: a thread-local pointer is one
/// load, where per_core::local() is a call per value. Each shoal core is one
/// thread; setup_core sets it before the barrier that precedes every send.
thread_local core_state* t_state = nullptr;

/// What core 0 hands the root task (this process's memory: core 0 is on rank 0).
is_outcome g_result;

/// Sets up this core's keys and buffers, then splits the key values over the
/// cores by NPB's buckets, balanced with the bucket sizes of the first
/// (untimed) iteration's keys. The split only balances the work: any split
/// ranks correctly, and the keys change by 2 per iteration. Untimed; SPMD.
void setup_core(core_state& st, char class_name) {
  st = core_state{};
  t_state = &st;
  const is_class& c = find_class(std::string(1, class_name));
  st.cls = &c;
  st.me = shoal::mycore();
  const int cores = shoal::cores();
  st.first = share_begin(c.total_keys(), st.me, cores);
  st.keys.resize(
      static_cast<std::size_t>(share_begin(c.total_keys(), st.me + 1, cores) - st.first));
  generate_keys(c, st.first, st.keys);
  modify_keys(c, 1, st.first, st.keys);
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(c.buckets()));
  for (const std::int32_t k : st.keys) ++sizes[static_cast<std::size_t>(k >> c.bucket_shift())];
  shoal::allreduce_sum(std::span<std::int64_t>(sizes));
  const std::vector<std::int32_t> bounds = split_buckets(sizes, cores);
  st.owner.resize(sizes.size());
  for (int o = 0; o < cores; ++o)
    std::fill(st.owner.begin() + bounds[static_cast<std::size_t>(o)],
              st.owner.begin() + bounds[static_cast<std::size_t>(o) + 1], o);
  st.lo = bounds[static_cast<std::size_t>(st.me)] << c.bucket_shift();
  st.hi = bounds[static_cast<std::size_t>(st.me) + 1] << c.bucket_shift();
  st.hist.assign(2 * static_cast<std::size_t>(st.hi - st.lo), 0);
  // Streams: each core's buckets cut into runs of at most stream_counters
  // key values (at least one bucket).
  const std::int32_t per_stream = std::max<std::int32_t>(1, stream_counters >> c.bucket_shift());
  st.stream.resize(sizes.size());
  for (int o = 0; o < cores; ++o) {
    const std::int32_t first = bounds[static_cast<std::size_t>(o)];
    for (std::int32_t b = first; b < bounds[static_cast<std::size_t>(o) + 1]; ++b) {
      if ((b - first) % per_stream == 0) st.stream_dest.push_back(o);
      st.stream[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(st.stream_dest.size()) - 1;
    }
  }
  const std::size_t streams = st.stream_dest.size();
  for (int p = 0; p < 2; ++p) {
    std::vector<std::int32_t>& per_core = st.core_code[static_cast<std::size_t>(p)];
    per_core.resize(static_cast<std::size_t>(cores));
    for (int o = 0; o < cores; ++o) {
      const std::int32_t lo = bounds[static_cast<std::size_t>(o)] << c.bucket_shift();
      const std::int32_t hi = bounds[static_cast<std::size_t>(o) + 1] << c.bucket_shift();
      per_core[static_cast<std::size_t>(o)] = p * (hi - lo) - lo;
    }
    std::vector<std::int32_t>& code = st.code[static_cast<std::size_t>(p)];
    code.resize(streams);
    for (std::size_t s = 0; s < streams; ++s)
      code[s] = per_core[static_cast<std::size_t>(st.stream_dest[s])];
  }
  st.ranks.assign(static_cast<std::size_t>(st.hi - st.lo), 0);
  st.stage.resize(std::max(streams * stage_keys, std::size_t{2} * pair_chunk));
  st.fill.assign(streams, 0);
  shoal::barrier();  // every core's histograms and range ready before keys travel
}

/// route_keys for a job of two cores: each chunk of keys split into this
/// core's and the other's with both fill counts in registers (every key
/// stored to both lists, each count advanced by a comparison), then this
/// core's counted and the other's sent as one run. The staging of the
/// general path keeps each fill count in memory, and with one other core
/// every key's store waited on the last key's count (3.05 ns per key
/// against 1.59 ns for this: bench-key-staging on the EPYC of
/// bench/results/recheck_amd.md).
template <class Send>
void route_pair(core_state& st, int parity, const Send& send) {
  const int other = st.me ^ 1;
  const std::int32_t lo = st.lo;
  const auto width = static_cast<std::uint32_t>(st.hi - st.lo);
  // Both codes of a key: its counter's index here, or on the other core.
  const std::vector<std::int32_t>& code = st.core_code[static_cast<std::size_t>(parity)];
  const std::int32_t here = code[static_cast<std::size_t>(st.me)];
  const std::int32_t there = code[static_cast<std::size_t>(other)];
  counter* count = st.hist.data();
  std::int32_t* mine = st.stage.data();
  std::int32_t* theirs = mine + pair_chunk;
  const std::int32_t* keys = st.keys.data();
  const std::size_t total = st.keys.size();
  for (std::size_t at = 0; at < total; at += pair_chunk) {
    const int n = static_cast<int>(std::min<std::size_t>(pair_chunk, total - at));
    int own = 0;
    int sent = 0;
    for (int j = 0; j < n; ++j) {
      const std::int32_t k = keys[at + static_cast<std::size_t>(j)];
      const bool is_mine = static_cast<std::uint32_t>(k - lo) < width;
      mine[own] = k + here;
      theirs[sent] = k + there;
      own += static_cast<int>(is_mine);
      sent += static_cast<int>(!is_mine);
    }
    if (sent > 0) send(other, theirs, sent);
    for (int j = 0; j < own; ++j) ++count[mine[j]];
  }
}

/// Every held key counted here or sent to its ranking core. Keys are first
/// staged per stream (core_state::stream) in small buffers as their
/// counters' indices there (core_state::code), then each full buffer is
/// either counted here or sent. `send(dest, run, n)` sends n staged keys to
/// another core.
template <class Send>
void route_keys(core_state& st, int parity, const Send& send) {
  if (shoal::cores() == 1) {  // every key is counted here
    counter* count = st.hist.data();
    const std::int32_t at = st.core_code[static_cast<std::size_t>(parity)][0];
    for (const std::int32_t k : st.keys) ++count[k + at];
    return;
  }
  if (shoal::cores() == 2) {
    route_pair(st, parity, send);
    return;
  }
  // Locals, so that stores into the histogram cannot alias what the loop reads.
  const int me = st.me;
  const int shift = st.cls->bucket_shift();
  const std::int32_t* stream = st.stream.data();
  const std::int32_t* dest_of = st.stream_dest.data();
  const std::int32_t* code = st.code[static_cast<std::size_t>(parity)].data();
  counter* count = st.hist.data();
  const int streams = static_cast<int>(st.stream_dest.size());
  std::int32_t* stage = st.stage.data();
  int* fill = st.fill.data();
  // Own keys are staged too and counted a stage at a time: a test of the
  // destination per key would mispredict on about every other key.
  for (const std::int32_t k : st.keys) {
    const int s = stream[k >> shift];
    std::int32_t* run = stage + static_cast<std::ptrdiff_t>(s) * stage_keys;
    const int n = fill[s];
    run[n] = k + code[s];
    fill[s] = n + 1;
    if (n + 1 == stage_keys) {
      fill[s] = 0;
      const int dest = dest_of[s];
      if (dest == me) {
        for (int j = 0; j < stage_keys; ++j) ++count[run[j]];
        continue;
      }
      // The runs' sender does not yield here: the channel's send bound
      // yields to the poll once per few batches (channel.hpp, Floods), and
      // a yield per run cost a switch and a poll per stage_keys keys.
      send(dest, run, stage_keys);
    }
  }
  for (int s = 0; s < streams; ++s) {
    const std::int32_t* run = stage + static_cast<std::ptrdiff_t>(s) * stage_keys;
    const int dest = dest_of[s];
    if (dest == me) {
      for (int j = 0; j < fill[s]; ++j) ++count[run[j]];
    } else if (fill[s] > 0) {
      send(dest, run, fill[s]);
    }
    fill[s] = 0;
  }
}

/// Routing with bare keys (their counters' indices): one channel send per
/// key, or with `runs` one send_run per staged run.
void route_bare(core_state& st, int parity, const shoal::channel<std::int32_t>& ch, bool runs) {
  if (runs) {
    route_keys(st, parity, [&ch](int dest, const std::int32_t* run, int n) {
      ch.send_run(dest, std::span<const std::int32_t>(run, static_cast<std::size_t>(n)));
    });
  } else {
    route_keys(st, parity, [&ch](int dest, const std::int32_t* run, int n) {
      for (int i = 0; i < n; ++i) ch.send(dest, run[i]);
      shoal::yield();  // let this core handle what others sent it meanwhile
    });
  }
  ch.end_phase();
}

/// Routing with blocks: one channel value per key_block::capacity keys.
void route_blocks(core_state& st, int parity, const shoal::channel<key_block>& ch) {
  route_keys(st, parity, [&ch](int dest, const std::int32_t* run, int n) {
    for (int i = 0; i < n; i += key_block::capacity) {
      key_block b;
      b.count = std::min(key_block::capacity, n - i);
      std::copy_n(run + i, b.count, b.keys.begin());
      ch.send(dest, b);
    }
    shoal::yield();  // let this core handle what others sent it meanwhile
  });
  ch.end_phase();
}

/// After routing: the local prefix sum, the scan that gives the rank base
/// and the test keys' values, and the partial verification of the test keys
/// whose rank this core holds. Also zeroes the other parity's histogram for
/// the next iteration, whose keys can arrive once the scan is done. SPMD.
void finish_iteration(core_state& st, int iteration, int parity, fault_kind fault,
                      is_outcome& into) {
  const is_class& c = *st.cls;
  const auto range = static_cast<std::size_t>(st.hi - st.lo);
  const std::span<const counter> count(st.hist.data() + parity * range, range);
  std::vector<std::int32_t>& cum = st.ranks;
  std::int32_t running = 0;
  for (std::size_t v = 0; v < count.size(); ++v) {
    running += count[v];
    cum[v] = running;
  }
  counter* next = st.hist.data() + (parity ^ 1) * range;
  std::fill(next, next + range, 0);
  scan_part mine;
  mine.keys = running;
  for (int i = 0; i < test_keys; ++i) {
    const std::int64_t at = c.test_index[static_cast<std::size_t>(i)] - st.first;
    if (at >= 0 && at < static_cast<std::int64_t>(st.keys.size()))
      mine.test[static_cast<std::size_t>(i)] = st.keys[static_cast<std::size_t>(at)];
  }
  const shoal::scan_result<scan_part> scan = shoal::exclusive_scan_sum(mine);
  if (scan.total.keys != c.total_keys())  // a counter wrapped: its value got 256 keys or more
    shoal::abort_job(
        fmt::format("shoal intsort: failed: {} keys ranked in iteration {} of {}: an 8-bit "
                    "counter of the histogram overflowed (a key value got 256 keys or more)",
                    scan.total.keys, iteration, c.total_keys()),
        1);
  st.base = scan.before.keys;
  st.ranked = running;
  if (fault == fault_kind::partial && iteration == 3) ++st.base;
  for (int i = 0; i < test_keys; ++i) {
    const std::int64_t k = scan.total.test[static_cast<std::size_t>(i)];
    if (!checks_test_key(c, k) || k - 1 < st.lo || k - 1 >= st.hi) continue;
    ++into.partial_checked;
    if (st.base + cum[static_cast<std::size_t>(k - 1 - st.lo)] == expected_rank(c, i, iteration))
      ++into.partial_passed;
  }
}

/// Places one key at its rank in this core's slice (the placement handler;
/// `cum` holds the last iteration's ranks).
void place_key(core_state& st, std::vector<std::int32_t>& cum, std::int32_t k) {
  if (k < st.lo || k >= st.hi) {
    ++st.misplaced;
    return;
  }
  const std::int64_t slot = --cum[static_cast<std::size_t>(k - st.lo)];
  if (slot < 0 || slot >= static_cast<std::int64_t>(st.sorted.size())) {
    ++st.misplaced;
    return;
  }
  st.sorted[static_cast<std::size_t>(slot)] = k;
}

/// Full verification: every key placed at its rank (of the last iteration)
/// by its ranking core, each slice checked (sorted, every slot filled, every
/// key within the core's range, so the slices are in order too). Returns the
/// keys found wrong over all cores. SPMD.
std::int64_t full_verify(core_state& st, const shoal::channel<std::int32_t>& place,
                         fault_kind fault) {
  st.sorted.assign(static_cast<std::size_t>(st.ranked), unfilled);
  st.misplaced = 0;
  std::vector<std::int32_t>& cum = st.ranks;
  shoal::barrier();  // every slice ready before keys arrive
  const int shift = st.cls->bucket_shift();
  std::int64_t sent = 0;
  for (const std::int32_t k : st.keys) {
    const int dest = st.owner[static_cast<std::size_t>(k >> shift)];
    if (dest == st.me) {
      place_key(st, cum, k);
      continue;
    }
    place.send(dest, k);
    if (++sent % 64 == 0) shoal::yield();
  }
  place.end_phase();
  if (fault == fault_kind::full && st.me == 0 && st.sorted.size() > 1)
    std::swap(st.sorted.front(), st.sorted.back());
  std::int64_t wrong = st.misplaced;
  for (std::size_t i = 0; i < st.sorted.size(); ++i) {
    const std::int32_t k = st.sorted[i];
    if (k < st.lo || k >= st.hi || (i > 0 && st.sorted[i - 1] > k)) ++wrong;
  }
  const std::int64_t placed = shoal::allreduce_sum(static_cast<std::int64_t>(st.sorted.size()));
  wrong = shoal::allreduce_sum(wrong);
  const std::int64_t total = st.cls->total_keys();
  return wrong + (placed > total ? placed - total : total - placed);
}

/// The channels of a run; `bare` or `blocks` is open, as the impl asks.
struct run_channels {
  shoal::channel<std::int32_t> bare;
  shoal::channel<key_block> blocks;
  shoal::channel<std::int32_t> place;
  bool runs = false;  ///< bare keys go by send_run
};

/// Counts a key sent as its counter's index (core_state::code): per value,
/// or a whole batch at once (the runs' receiving side).
struct count_bare {
  void operator()(std::int32_t v) const { ++t_state->hist[static_cast<std::size_t>(v)]; }
  void deliver_run(const std::int32_t* v, std::uint32_t n) const {
    counter* const count = t_state->hist.data();
    for (std::uint32_t i = 0; i < n; ++i) ++count[v[i]];
  }
};

/// The whole run on one core. SPMD (one task per core).
void run_core(char class_name, fault_kind fault, const run_channels& chs) {
  core_state& st = g_core.local();
  setup_core(st, class_name);
  is_outcome untimed;
  if (fault == fault_kind::overflow && st.me == 0) {
    // Past NPB's modified keys (indices 1 to 20); 300 > 255 keys of one value.
    constexpr std::size_t from = 32, many = 300;
    if (st.keys.size() < from + many)
      shoal::abort_job("shoal intsort: --inject-fault overflow needs 332 keys on core 0", 2);
    std::fill_n(st.keys.begin() + from, many, st.keys[from]);
  }
  // Step s = 0 is NPB's free iteration (iteration 1, untimed, not counted);
  // steps 1..10 are the timed iterations.
  auto iterate = [&](int step, is_outcome& into) {
    const int iteration = std::max(step, 1);
    const int parity = step & 1;
    modify_keys(*st.cls, iteration, st.first, st.keys);
    if (chs.blocks)
      route_blocks(st, parity, chs.blocks);
    else
      route_bare(st, parity, chs.bare, chs.runs);
    finish_iteration(st, iteration, parity, fault, into);
  };
  iterate(0, untimed);
  shoal::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 1; step <= max_iterations; ++step) iterate(step, st.out);
  shoal::barrier();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  is_outcome total;
  total.seconds = seconds;
  total.partial_passed = shoal::allreduce_sum(st.out.partial_passed);
  total.partial_checked = shoal::allreduce_sum(st.out.partial_checked);
  total.out_of_order = full_verify(st, chs.place, fault);
  if (st.me == 0) g_result = total;
  st = core_state{};  // free the keys
}

}  // namespace

is_outcome run_channel(char class_name, route_kind route, fault_kind fault) {
  run_channels chs;
  if (route == route_kind::block) {
    chs.blocks = shoal::make_channel<key_block>([](const key_block& b) {
      counter* count = t_state->hist.data();
      for (int i = 0; i < b.count; ++i) ++count[b.keys[static_cast<std::size_t>(i)]];
    });
  } else if (route == route_kind::run) {
    chs.bare = shoal::make_channel<std::int32_t>(count_bare{});
    chs.runs = true;
  } else {
    // Per value, as Grappa's key-at-a-time handler would.
    chs.bare = shoal::make_channel<std::int32_t>([](std::int32_t v) { count_bare{}(v); });
  }
  chs.place = shoal::make_channel<std::int32_t>([](std::int32_t v) {
    core_state& st = *t_state;
    place_key(st, st.ranks, v);
  });
  shoal::on_all_cores([class_name, fault, chs] { run_core(class_name, fault, chs); });
  chs.bare.close();
  chs.blocks.close();
  chs.place.close();
  return g_result;
}

}  // namespace shoal_apps::intsort
