// PageRank by pull over in-links with a per-process copy of every vertex's
// contribution (ghost values refreshed once per iteration): `--impl pull`
// (contributions as doubles) and `--impl pull-float` (as floats: half the
// bytes gathered and read; sums still in double). Floats carry a relative
// error near 1e-7, so pull-float meets the validation bound (1e-9 on ranks
// summing to 1) only while every rank stays below about 1e-2: on Kronecker
// graphs of scale 14 and up, not on tiny graphs.
//
// Per iteration, SPMD: each core sums, for each of its vertices, the
// contributions (rank[u] / out-degree(u); 0 without out-links, whose rank
// is spread uniformly as in the push) of its in-neighbours u, read from its
// process's copy of every vertex's contribution; the same pass that turns
// the sums into new ranks writes the core's block of the other copy (two
// per process, alternating by iteration parity), and the iteration's one
// collective (the sums of the change and of the dangling ranks) is the
// barrier after which every block is in place. The cores of a process are
// threads and share the copies: nothing is copied per core and nothing is
// allocated per iteration. Between processes, every core's block also
// travels into the other processes' copies on a typed channel, in 128-byte
// values (30 floats or 15 doubles and their first vertex), one core of each
// other process receiving it and writing the values to their places; the
// channel's end_phase ends the exchange. shoal::allgatherv did this before
// (2 x 1, scale 18: the channel about 1.35x its rate; the collective moves
// the blocks up and down a tree as 224-byte closures, all of them through
// rank 0).
// The copies hold the contributions in order of decreasing out-degree
// (ties by vertex id; every process computes the same order from the edge
// list), not by vertex id: the hubs of a Kronecker graph, which most links
// read, then share cache lines and the first segment. Each core scatters its
// block's new contributions to their places once per iteration (n writes
// per iteration in all, against one read per link); ownership, ranks and
// the result stay in vertex order.
// The links are walked in segments of sources (--segment-kib; by default 2^17 sources: 1 MiB
// of doubles or 512 KiB of floats, inside a core's L2 cache), each segment in
// destination order, so the random reads of contributions hit L2 rather than
// L3 on large graphs. Within a segment the links of one destination form a
// run summed in registers (four partial sums), then added to the destination
// once: an accumulator in memory would chain every add of a row through a
// store and a load. Each run is padded to a multiple of four links with the
// place n, a slot of the copies that stays zero: the sum then has no
// remainder loop, whose trip count (most runs are 1 to 3 links long)
// mispredicted about once per run; the padding adds about 11% more reads, all
// of one cached slot (Kronecker scale 20, 1 x 2: 6% less CPU time per
// iteration for pull, about 1% for pull-float; bench/results/new_impls.md). 4 bytes per link and
// padding plus 8 per run. No message per link travels: the exchange is n values per process and
// iteration, the work one read per link. The streaming push (`channel`) stays for graphs that
// arrive as a stream of increments (Grappa's case) or that do not fit a vertex-sized array per
// core.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pagerank/plain/pagerank.hpp"

namespace shoal_apps::pagerank {

/// How the pull lays out its reads (--impl pull and pull-float only).
struct pull_options {
  /// --pull-order: "degree" (the copies in order of decreasing out-degree)
  /// or "vertex" (by vertex id).
  std::string order = "degree";
  /// --segment-kib: KiB of contributions per source segment; 0: one
  /// segment (every link of a vertex in one run). Unless given: 1024 for
  /// doubles, 512 for floats (2^17 sources either way: at scale 20, 1 x 2,
  /// pull-float ran 1.10x faster with 512 than with 1024, pull 0.96x;
  /// bench/results/new_impls.md).
  std::uint32_t segment_kib = 1024;
  bool segment_given = false;  ///< --segment-kib was given
  /// Either flag was given (the other impls refuse them).
  bool given = false;
};

/// Adds --pull-order and --segment-kib to `cmd` (values checked by CLI11:
/// a bad value ends the job with a message naming the flag).
void add_pull_options(CLI::App& cmd, pull_options& p);

/// Builds the in-link rows (timed: construction_s) and iterates (timed:
/// time_s) on every core of the job; every process holds `edges`. Fills
/// `out` and, on rank 0, `ranks` (every vertex's rank). Every rank calls it.
void run_pull(const pagerank_options& o, const pull_options& p, std::int64_t n,
              const std::vector<edge>& edges, bool single_precision, outcome& out,
              std::vector<double>& ranks);

}  // namespace shoal_apps::pagerank
