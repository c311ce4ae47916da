// shoal-baseline-kmer: k-mer counting in plain C++ and MPI, the baseline
// `shoal kmer` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-kmer [--k K] [--reads FILE | generator flags] [--json]
//
// The bulk-synchronous way: each rank takes a contiguous block of the reads
// (kmer/plain/kmer_problem.hpp, the same blocks as the app's cores), lists
// their canonical k-mers, sends each to its owner rank (a hash of the
// k-mer) with one MPI_Alltoallv, sorts what it received and counts the
// runs; no filter (a sort needs none to drop singletons). Same flags,
// checks and JSON as the app (impl "mpi-alltoallv"); --impl is accepted
// and ignored.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/mpi_job.hpp"
#include "kmer/plain/kmer_problem.hpp"

namespace {

using shoal_apps::kmer::kmer_problem;
using shoal_apps::kmer::kmer_t;
using shoal_apps::kmer::kmer_tally;
using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

struct result {
  double seconds = 0;
  kmer_tally tally;  ///< summed on rank 0
};

result run(const kmer_problem& p) {
  const int me = my_rank();
  const int n = rank_count();
  std::vector<kmer_t> mine;
  shoal_baseline::alltoallv_exchange<kmer_t> ex;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  p.for_each_read(p.part_begin(me, n), p.part_begin(me + 1, n), [&](std::string_view read) {
    shoal_apps::kmer::for_each_kmer(read, p.k(), [&](kmer_t x) { mine.push_back(x); });
  });
  ex.begin_round();
  for (const kmer_t x : mine) ex.count(shoal_apps::kmer::kmer_owner(x, n));
  ex.lay_out();
  for (const kmer_t x : mine) ex.place(shoal_apps::kmer::kmer_owner(x, n), x);
  const std::span<const kmer_t> got = ex.exchange();
  std::vector<kmer_t> sorted(got.begin(), got.end());
  std::sort(sorted.begin(), sorted.end());
  kmer_tally t;
  t.occurrences = mine.size();
  bool spoiled = me != 0;  // the fault spoils one count, on rank 0
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    std::uint64_t count = j - i;
    shoal_apps::kmer::spoil_count(p.fault(), spoiled, count);
    if (count >= 2) shoal_apps::kmer::tally_entry(t, sorted[i], count);
    i = j;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  result r;
  r.seconds = MPI_Wtime() - t0;
  const std::array<std::uint64_t, 3> part{t.occurrences, t.solid, t.checksum};
  std::array<std::uint64_t, 3> sum{};
  MPI_Reduce(part.data(), sum.data(), 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  r.tally.occurrences = sum[0];
  r.tally.solid = sum[1];
  r.tally.checksum = sum[2];
  return r;
}

int run_main(int argc, char** argv) {
  shoal_apps::kmer::kmer_options o;
  bool json = false;
  std::string impl;
  CLI::App cli{"shoal-baseline-kmer: k-mer counting in plain MPI (MPI_Alltoallv, sort)"};
  shoal_apps::kmer::add_options(cli, o);
  cli.add_flag("--json", json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", impl, "accepted and ignored (the app's flag)");
  if (const int status = shoal_baseline::parse_command_line(cli, "shoal-baseline-kmer", argc, argv);
      status >= 0)
    return status;
  std::unique_ptr<kmer_problem> p;
  shoal_baseline::collectively("shoal-baseline-kmer",
                               [&] { p = std::make_unique<kmer_problem>(o); });
  const result r = run(*p);
  if (my_rank() != 0) return 0;
  std::uint64_t distinct = 0;
  const kmer_tally ref = p->reference(distinct);
  shoal_apps::report out("kmer", "mpi-alltoallv");
  shoal_apps::kmer::fill_report(out, *p, r.seconds, r.tally, ref, distinct);
  return shoal_baseline::print_rank0_report(out, json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-kmer", argc, argv, run_main);
}
