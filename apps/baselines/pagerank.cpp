// shoal-baseline-pagerank: PageRank in plain C++ and MPI, no shoal: the
// bulk-synchronous baseline `shoal pagerank` is measured against.
//
// Same flags, graph reading, validation and JSON as `shoal pagerank`
// (apps/pagerank/plain/pagerank.hpp), impl "mpi-alltoallv":
//   1. every rank generates a slice of the Kronecker edge list and
//      MPI_Allgatherv gives every rank the whole list (or every rank reads
//      the file): untimed;
//   2. each rank builds the out-link rows of its block of vertices (timed:
//      construction_s);
//   3. each iteration (timed) pushes the same streaming increments as the
//      shoal app, batched: rank[v] / outdeg(v) for each link v -> w is added
//      at once when this rank owns w, else appended as a 12-byte pair
//      {local index of w, double increment} to the bucket of w's owner
//      (the buckets are one buffer, laid out by per-rank counts fixed at
//      construction); MPI_Alltoall of the counts, MPI_Alltoallv of the
//      pairs, each received pair added; then the new ranks and one
//      MPI_Allreduce of the L1 change and the dangling rank;
//      with --impl combining (as `shoal pagerank --impl combining`) the
//      increments are first summed per target, then one pair per other
//      rank's reached target is bucketed;
//   4. the ranks gathered on rank 0 and compared with the sequential
//      reference run for the same number of iterations (untimed).
// The exit status is 1 when validation fails, 2 on bad input (message on
// stderr from the lowest failing rank), 0 otherwise.
#include "pagerank/plain/pagerank.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/mpi_job.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"

namespace {

namespace pr = shoal_apps::pagerank;
using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

constexpr const char* program = "shoal-baseline-pagerank";

struct options {
  pr::pagerank_options problem;
  bool json = false;
  /// `shoal pagerank`'s --impl (the harness passes its line): "combining"
  /// pre-combines as that impl does; any other value streams every link.
  std::string impl;
  bool combining() const { return impl == "combining"; }
};

using shoal_baseline::job_exit;

/// One increment for the owner of its target: 12 bytes on the wire.
struct __attribute__((packed)) increment {
  std::uint32_t local;
  double value;
};
static_assert(sizeof(increment) == 12);

/// Collective: runs `fn` on every rank; bad input anywhere ends every rank with status 2.
template <class F>
void collectively(F&& fn) {
  shoal_baseline::collectively(program, fn);
}

std::optional<int> parse(options& o, int argc, char** argv) {
  CLI::App cli{"PageRank, plain MPI baseline (streaming increments batched into MPI_Alltoallv)"};
  pr::add_pagerank_options(cli, o.problem);
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", o.impl,
                 "combining: one pair per (rank, target) reached, summed before the exchange, "
                 "as `shoal pagerank --impl combining`; any other value (the line of `shoal "
                 "pagerank` runs here too): one pair per link");
  if (const int status = shoal_baseline::parse_command_line(cli, program, argc, argv); status >= 0)
    return status;
  return std::nullopt;
}

/// An MPI datatype of `bytes` contiguous bytes (counts then stay element counts).
MPI_Datatype bytes_type(int bytes) {
  MPI_Datatype t;
  MPI_Type_contiguous(bytes, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

/// Collective: the whole Kronecker edge list on every rank (each generates
/// a slice; MPI_Allgatherv).
std::vector<pr::edge> whole_edge_list(const pr::pagerank_options& o, std::int64_t edges) {
  const int ranks = rank_count();
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(counts.size());
  for (int r = 0; r < ranks; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(edges * r / ranks);
    counts[static_cast<std::size_t>(r)] =
        static_cast<int>(edges * (r + 1) / ranks - edges * r / ranks);
  }
  const int me = my_rank();
  std::vector<pr::edge> all(static_cast<std::size_t>(edges));
  std::vector<pr::edge> mine;
  shoal_apps::kronecker_edges(
      o.graph, displs[static_cast<std::size_t>(me)],
      displs[static_cast<std::size_t>(me)] + counts[static_cast<std::size_t>(me)], mine);
  MPI_Datatype t = bytes_type(sizeof(pr::edge));
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), t, all.data(), counts.data(),
                 displs.data(), t, MPI_COMM_WORLD);
  MPI_Type_free(&t);
  return all;
}

/// This rank's part of the computation.
struct local_part {
  pr::block_layout layout;
  int me = 0;
  pr::out_rows rows;
  std::vector<double> rank, acc;
  std::vector<double> combined;  ///< combining: a sum per packed id; own slice = accumulator
  double* into = nullptr;        ///< acc, or the own slice of combined
  std::vector<int> send_counts, send_displs;  ///< displacements fixed, counts per iteration
  std::vector<increment> send;
  shoal_baseline::alltoallv_exchange<increment> exchange;
};

/// The timed iterations; returns {iterations, last L1 change}.
std::pair<int, double> iterate(local_part& p, const pr::pagerank_options& o, bool combining) {
  const int ranks = p.layout.parts();
  const int me = p.me;
  const auto count = static_cast<std::size_t>(p.layout.count(me));
  const auto n = static_cast<double>(p.layout.vertices());
  const std::uint64_t* offsets = p.rows.offsets.data();
  const pr::block_layout layout = p.layout;
  std::vector<int> cursor(static_cast<std::size_t>(ranks));
  double sums[2] = {0, 0};  // L1 change, dangling rank
  for (std::size_t v = 0; v < count; ++v)
    if (offsets[v + 1] == offsets[v]) sums[1] += p.rank[v];
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double dangling = sums[1];
  int it = 0;
  double l1 = 0;
  while (it < o.iterations) {
    // Push: own targets at once, the others bucketed by owner.
    double* acc = p.into;
    const double* rank = p.rank.data();
    increment* send = p.send.data();
    std::copy(p.send_displs.begin(), p.send_displs.end(), cursor.begin());
    int* at = cursor.data();
    bool drop_first = o.corrupt && it == 0 && me == 0;
    if (combining) {
      // Every increment summed per target, then one pair per reached target
      // of each other rank (each rank is > 0: a reached target's sum is too).
      double* sums = p.combined.data();
      pr::for_each_share(p.rows, rank, count, drop_first,
                         [sums](std::uint32_t t, double share) { sums[t] += share; });
      for (int r = 0; r < ranks; ++r) {
        if (r == me) continue;
        double* slice = sums + layout.packed(r, 0);
        const auto m = static_cast<std::uint32_t>(layout.count(r));
        for (std::uint32_t l = 0; l < m; ++l) {
          if (slice[l] == 0) continue;
          send[at[r]++] = increment{l, slice[l]};
          slice[l] = 0;
        }
      }
    }
    if (!combining)
      pr::for_each_share(p.rows, rank, count, drop_first, [&](std::uint32_t t, double share) {
        const int owner = layout.packed_owner(t);
        const std::uint32_t l = layout.packed_local(t);
        if (owner == me) {
          acc[l] += share;
          return;
        }
        send[at[owner]++] = increment{l, share};
      });
    if (ranks > 1) {
      // The counts of what was bucketed (a dropped link leaves its slot unsent).
      for (int r = 0; r < ranks; ++r)
        p.send_counts[static_cast<std::size_t>(r)] =
            at[r] - p.send_displs[static_cast<std::size_t>(r)];
      for (const increment& in : p.exchange.exchange(p.send.data(), p.send_counts, p.send_displs))
        acc[in.local] += in.value;
    }
    // New ranks.
    const double base = (1.0 - pr::damping) / n + pr::damping * dangling / n;
    double* r = p.rank.data();
    sums[0] = sums[1] = 0;
    for (std::size_t v = 0; v < count; ++v) {
      const double x = base + pr::damping * acc[v];
      acc[v] = 0;
      sums[0] += std::fabs(x - r[v]);
      r[v] = x;
      if (offsets[v + 1] == offsets[v]) sums[1] += x;
    }
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ++it;
    l1 = sums[0];
    dangling = sums[1];
    if (l1 < o.tolerance) break;
  }
  return {it, l1};
}

/// Collective: construction, iterations, validation and report.
int run(int argc, char** argv) {
  options o;
  if (const std::optional<int> stop = parse(o, argc, argv)) return *stop;
  pr::input_size in;
  collectively([&] {
    in = pr::size_input(o.problem, {rank_count(), 1, 1, o.combining()});
    if (in.edges > INT_MAX)  // MPI counts are int
      throw shoal_apps::input_error(fmt::format(
          "--scale/--edgefactor: {} edges, more than the baseline's 2^31 - 1", in.edges));
  });
  std::vector<pr::edge> edges = o.problem.graph.file.empty() ? whole_edge_list(o.problem, in.edges)
                                                             : std::move(in.file_edges);
  const int ranks = rank_count();
  local_part p;
  p.me = my_rank();
  p.layout = pr::block_layout(in.vertices, ranks);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  p.rows = pr::build_out_rows(edges, p.layout, p.me);
  const auto count = static_cast<std::size_t>(p.layout.count(p.me));
  p.rank.assign(count, 1.0 / static_cast<double>(in.vertices));
  if (o.combining()) {
    p.combined.assign(p.layout.packed_range(), 0.0);
    p.into = p.combined.data() + p.layout.packed(p.me, 0);
  } else {
    p.acc.assign(count, 0.0);
    p.into = p.acc.data();
  }
  p.send_counts.assign(static_cast<std::size_t>(ranks), 0);
  for (std::uint32_t t : p.rows.targets) {
    const int owner = p.layout.packed_owner(t);
    if (owner != p.me) ++p.send_counts[static_cast<std::size_t>(owner)];
  }
  p.send_displs.assign(static_cast<std::size_t>(ranks), 0);
  std::int64_t total = 0;
  for (int r = 0; r < ranks; ++r) {
    p.send_displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += p.send_counts[static_cast<std::size_t>(r)];
  }
  p.send.resize(static_cast<std::size_t>(total));
  std::int64_t mine[2] = {p.rows.arcs(), 0};
  for (std::size_t v = 0; v < count; ++v) mine[1] += p.rows.offsets[v + 1] == p.rows.offsets[v];
  MPI_Allreduce(MPI_IN_PLACE, mine, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double construction_s = MPI_Wtime() - t0;
  if (my_rank() != 0) std::vector<pr::edge>().swap(edges);

  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  const auto [iterations, l1] = iterate(p, o.problem, o.combining());
  const double time_s = MPI_Wtime() - t0;

  // Gather the ranks on rank 0, validate there.
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(counts.size());
  for (int r = 0; r < ranks; ++r) {
    counts[static_cast<std::size_t>(r)] = static_cast<int>(p.layout.count(r));
    displs[static_cast<std::size_t>(r)] = static_cast<int>(p.layout.first(r));
  }
  std::vector<double> all(my_rank() == 0 ? static_cast<std::size_t>(in.vertices) : 0);
  MPI_Gatherv(p.rank.data(), static_cast<int>(count), MPI_DOUBLE, all.data(), counts.data(),
              displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (my_rank() == 0) {
    pr::outcome out;
    out.vertices = in.vertices;
    out.input_edges = in.edges;
    out.arcs = mine[0];
    out.dangling = mine[1];
    out.iterations = iterations;
    out.l1_change = l1;
    out.time_s = time_s;
    out.construction_s = construction_s;
    pr::graph_counts gc;
    const std::vector<double> ref = pr::reference_pagerank(in.vertices, edges, iterations, &gc);
    out.max_difference = static_cast<double>(in.vertices) * pr::max_abs_difference(all, ref);
    if (gc.arcs != out.arcs || gc.dangling != out.dangling)
      out.max_difference = std::numeric_limits<double>::infinity();  // a different graph
    for (double x : all) out.rank_sum += x;
    out.top = pr::top_ranks(all, 5);
    shoal_apps::report r("pagerank", o.combining() ? "mpi-alltoallv-combining" : "mpi-alltoallv");
    r.set_shape(ranks, ranks);
    pr::fill_report(r, o.problem, out);
    const bool written = shoal_apps::print_report(r, o.json);
    ok = written && r.validated() ? 1 : 0;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok == 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return shoal_baseline::baseline_main(program, argc, argv, run); }
