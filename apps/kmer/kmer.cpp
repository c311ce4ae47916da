// `shoal kmer`: k-mer counting, BCL's (thesis section 6.3) way: a Bloom
// filter drops the k-mers seen once (most are sequencing errors), a hash
// table counts the rest (plain/kmer_problem.hpp has the problem, the reads
// and the check).
//
//   shoal kmer [--k K] [--reads FILE | --genome-length G --read-count R
//              --read-length L --error-rate E --seed S]
//              [--impl bcl|bcl-buffer|sequential] [--json]
//
// Each core takes a contiguous block of the reads and, for every canonical
// k-mer x of them (two passes, timed together):
//   pass 1  bloom_filter::insert(x) (one remote fetch_or); when it says x
//           was already present, x goes into the hash_map with add(x, 1).
//           The map then holds every k-mer seen at least twice, and some
//           seen once: Bloom false positives.
//   pass 2  each core zeroes the counts of its own part of the map, then
//           every occurrence is counted again with add_existing(x, 1),
//           which inserts nothing. The counts are now exact; a k-mer whose
//           count is 1 was a false positive (reported, not solid).
// Implementations:
//   bcl         the map's operations one at a time (remote atomics).
//   bcl-buffer  the map's operations through hash_map_buffer (buffered per
//               owner, applied by the owner at flush_as); the filter as bcl.
//   sequential  one core: every k-mer into a vector, sorted, runs counted.
// Every run is checked against a sequential std::unordered_map count of
// the same reads (the solid k-mers, their counts, the occurrences).
// The baseline (shoal-baseline-kmer): MPI_Alltoallv of the k-mers to their
// owner ranks, sort and count there.
#include <shoal/bcl/bloom_filter.hpp>
#include <shoal/bcl/hash_map.hpp>
#include <shoal/bcl/hash_map_buffer.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/text_input.hpp"
#include "common/same_input.hpp"
#include "common/yield_every.hpp"
#include "kmer/plain/kmer_problem.hpp"

namespace shoal_apps {

namespace {

using kmer::kmer_problem;
using kmer::kmer_t;
using kmer::kmer_tally;
using count_map = shoal::bcl::hash_map<kmer_t, std::uint64_t>;
using count_buffer = shoal::bcl::hash_map_buffer<kmer_t, std::uint64_t>;
using filter = shoal::bcl::bloom_filter<kmer_t>;

/// Entries buffered per owner before a push (hash_map_buffer's message).
constexpr std::uint64_t message_entries = 256;

/// Every rank's copy of the problem (set before shoal::run, read by cores).
std::unique_ptr<kmer_problem> g_problem;

/// Set on every rank before shoal::run (on_all_cores' closure holds only
/// the two handles, 48 bytes).
bool g_buffered = false;

/// What core 0 hands the root task.
struct outcome {
  double seconds = 0;
  kmer_tally tally;
};
outcome g_result;

/// Table sizes: buckets per core, filter words, queue entries per core.
struct sizes {
  std::uint64_t buckets_per_core = 0;
  std::uint64_t filter_words = 0;
  std::uint64_t queue_entries = 0;
};

sizes size_for(const kmer_problem& p, int cores) {
  const double n = static_cast<double>(p.windows());
  const double per_core = n / cores;
  sizes s;
  // Solid k-mers are at most half the occurrences; false positives add a
  // few per cent; 0.6 leaves the table at most ~80% full at that worst case.
  s.buckets_per_core = static_cast<std::uint64_t>(0.6 * per_core) + 256;
  // 16 bits per occurrence (k = 3 bits per value): a few per cent of false
  // positives at high coverage, where most occurrences repeat.
  s.filter_words = std::max<std::uint64_t>(64, p.windows() / 4);
  // Pass 2 sends every occurrence to its owner: its share and a margin. A
  // full queue costs speed, not counts (the buffer falls back to atomics).
  s.queue_entries = static_cast<std::uint64_t>(1.2 * per_core + 4.0 * std::sqrt(per_core)) +
                    4 * message_entries * static_cast<std::uint64_t>(cores);
  return s;
}

/// The tables' room on each core's slice of the global heap.
void check_heap(const kmer_problem& p, bool buffered) {
  const shoal::config& cfg = shoal::current_config();
  const int cores = cfg.cores * shoal::ranks();
  const sizes s = size_for(p, cores);
  const double slice = static_cast<double>(cfg.heap_mb) * 1048576.0 / cfg.cores;
  double need = static_cast<double>(s.buckets_per_core) * sizeof(count_map::bucket) +
                static_cast<double>(s.filter_words) * 8.0 / cores + 65536.0;
  // fast_queue allocates its capacity on every core: P queues per slice.
  if (buffered) need += static_cast<double>(cores) * static_cast<double>(s.queue_entries) * 16.0;
  if (need > 0.9 * slice)
    throw input_error(fmt::format(
        "{} k-mer windows: the filter and table need {} of each core's global heap slice, which "
        "has {} (--heap-mb {} over {} cores); raise --heap-mb or count fewer reads",
        p.windows(), human_bytes(need), human_bytes(slice), cfg.heap_mb, cfg.cores));
}

/// Calls fn(x) for every k-mer of this core's reads.
template <class F>
void for_my_kmers(const kmer_problem& p, F&& fn) {
  const int me = shoal::mycore();
  const int n = shoal::cores();
  yield_every pace;
  p.for_each_read(p.part_begin(me, n), p.part_begin(me + 1, n), [&](std::string_view read) {
    kmer::for_each_kmer(read, p.k(), [&](kmer_t x) {
      fn(x);
      pace.tick();
    });
  });
}

/// The two passes and the check on one core; SPMD.
void run_core(count_map map, filter bloom) {
  const kmer_problem& p = *g_problem;
  const bool buffered = g_buffered;
  const sizes s = size_for(p, shoal::cores());
  std::optional<count_buffer> buf;
  if (buffered) buf.emplace(map, s.queue_entries, message_entries);
  kmer_tally mine;
  shoal::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  // Pass 1: the filter, and the map for what it has seen.
  for_my_kmers(p, [&](kmer_t x) {
    ++mine.occurrences;
    if (bloom.insert(x) != shoal::bcl::bloom_insert::already_present) return;
    if (buf)
      buf->add(x, 1);
    else if (map.add(x, 1) == shoal::bcl::hash_insert::full)
      ++mine.full;
  });
  if (buf) {
    // Job-wide totals on every core: core 0 keeps them for the sum.
    const std::uint64_t full = buf->flush_as(shoal::bcl::hash_apply::add).full;
    if (shoal::mycore() == 0) mine.full += full;
  } else {
    shoal::barrier();
  }
  // Pass 2: exact counts of what the map holds.
  map.for_each_local([](kmer_t, std::uint64_t& n) { n = 0; });
  shoal::barrier();
  for_my_kmers(p, [&](kmer_t x) {
    if (buf)
      buf->add_existing(x, 1);
    else
      map.add_existing(x, 1);
  });
  if (buf)
    (void)buf->flush_as(shoal::bcl::hash_apply::add_existing);
  else
    shoal::barrier();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (buf) buf->destroy();

  bool spoiled = shoal::mycore() != 0;  // the fault spoils one count, on core 0
  map.for_each_local([&](kmer_t x, std::uint64_t& n) {
    kmer::spoil_count(p.fault(), spoiled, n);
    kmer::tally_entry(mine, x, n);
  });
  std::array<std::uint64_t, 6> parts{mine.occurrences, mine.solid, mine.checksum,
                                     mine.singletons,  mine.zero,  mine.full};
  shoal::allreduce_sum(std::span<std::uint64_t>(parts));  // wraps mod 2^64, as the checksum does
  const double slowest = shoal::allreduce_max(seconds);
  if (shoal::mycore() == 0)
    g_result =
        outcome{slowest, kmer_tally{parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]}};
}

void run_kmer(const kmer::kmer_options& o, run_context& ctx) {
  g_problem = std::make_unique<kmer_problem>(o);
  const kmer_problem& p = *g_problem;
  if (!o.reads.empty())
    check_same_input_on_every_rank(p.digest(), "--reads " + printable(o.reads, 200));
  g_buffered = ctx.impl == "bcl-buffer";
  if (ctx.impl != "sequential") check_heap(p, g_buffered);
  shoal::run([&] {
    std::uint64_t distinct = 0;
    if (ctx.impl == "sequential") {
      const auto t0 = std::chrono::steady_clock::now();
      const kmer_tally t = p.count_by_sort();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const kmer_tally ref = p.reference(distinct);
      kmer::fill_report(ctx.out, p, seconds, t, ref, distinct);
      return;
    }
    const sizes s = size_for(p, shoal::cores());
    count_map map = count_map::make(s.buckets_per_core);
    filter bloom = filter::make(s.filter_words, 3);
    shoal::on_all_cores([map, bloom] { run_core(map, bloom); });
    map.destroy();
    bloom.destroy();
    const kmer_tally ref = p.reference(distinct);
    kmer::fill_report(ctx.out, p, g_result.seconds, g_result.tally, ref, distinct);
  });
  g_problem.reset();
}

}  // namespace

app_spec kmer_app() {
  return {"kmer",
          "k-mer counting (BCL: Bloom filter + hash table), exact counts of k-mers seen twice, "
          "Mkmers/s",
          {"bcl", "bcl-buffer", "sequential"},
          [](CLI::App& cmd) -> runner {
            auto o = std::make_shared<kmer::kmer_options>();
            kmer::add_options(cmd, *o);
            return [o](run_context& ctx) { run_kmer(*o, ctx); };
          }};
}

}  // namespace shoal_apps
