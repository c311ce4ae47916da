// shoal-baseline-isx: ISx in plain C++ and MPI, the baseline `shoal isx` is
// measured against. No shoal.
//
//   mpirun -np R shoal-baseline-isx [--keys-per-core N] [--max-key M] ... [--json]
//
// ISx's MPI design: each rank makes its keys (the same keys as the app's
// cores, isx/plain/isx_problem.hpp), and each sort buckets them by owner
// rank (a counting sort into the send buffer), sends the counts with
// MPI_Alltoall and the keys with MPI_Alltoallv, and sorts what it received
// by counting. Same flags, checks and JSON as the app (impl
// "mpi-alltoallv"); --impl is accepted and ignored.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/mpi_job.hpp"
#include "isx/plain/isx_problem.hpp"

namespace {

using shoal_apps::isx::isx_problem;
using shoal_apps::isx::isx_tally;
using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

struct result {
  double seconds = 0;
  isx_tally tally;
};

/// The untimed sort, the timed ones, the check (summed on rank 0).
result run(const isx_problem& p, const std::string& fault) {
  const int me = my_rank();
  const std::uint64_t lo = p.range_begin(me);
  const std::uint64_t hi = p.range_begin(me + 1);
  std::vector<std::uint32_t> input(static_cast<std::size_t>(p.keys_per_core()));
  shoal_apps::isx::make_keys(p, me, input);
  shoal_baseline::alltoallv_exchange<std::uint32_t> ex;
  ex.reserve(input.size(), static_cast<std::size_t>(p.receive_bound()));
  std::vector<std::uint32_t> counts;
  std::vector<std::uint32_t> sorted;
  std::uint64_t lost = 0;
  auto sort_once = [&] {
    ex.begin_round();
    for (const std::uint32_t k : input) ex.count(p.owner(k));
    ex.lay_out();
    for (const std::uint32_t k : input) ex.place(p.owner(k), k);
    lost = shoal_apps::isx::counting_sort(ex.exchange(), lo, hi, counts, sorted);
  };
  sort_once();
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < p.iterations(); ++i) sort_once();
  MPI_Barrier(MPI_COMM_WORLD);
  result r;
  r.seconds = MPI_Wtime() - t0;
  if (me == 0) shoal_apps::isx::inject_fault(fault, sorted);
  std::uint64_t size = sorted.size();
  std::uint64_t base = 0;
  MPI_Exscan(&size, &base, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) base = 0;  // MPI_Exscan leaves rank 0's result undefined
  const isx_tally t = shoal_apps::isx::check_output(input, sorted, base, lo, hi, lost);
  const std::array<std::uint64_t, 6> mine{t.keys,       t.out_of_order, t.out_of_range,
                                          t.input_hash, t.output_hash,  t.sorted_hash};
  std::array<std::uint64_t, 6> sum{};
  MPI_Reduce(mine.data(), sum.data(), 6, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  r.tally = isx_tally{sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]};
  return r;
}

int run_main(int argc, char** argv) {
  shoal_apps::isx::isx_options o;
  bool json = false;
  std::string impl;
  CLI::App cli{"shoal-baseline-isx: ISx in plain MPI (MPI_Alltoallv)"};
  shoal_apps::isx::add_options(cli, o);
  cli.add_flag("--json", json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", impl, "accepted and ignored (the app's flag)");
  if (const int status = shoal_baseline::parse_command_line(cli, "shoal-baseline-isx", argc, argv);
      status >= 0)
    return status;
  std::unique_ptr<isx_problem> p;
  shoal_baseline::collectively("shoal-baseline-isx",
                               [&] { p = std::make_unique<isx_problem>(o, rank_count()); });
  const result r = run(*p, o.fault);
  if (my_rank() != 0) return 0;
  shoal_apps::report out("isx", "mpi-alltoallv");
  shoal_apps::isx::fill_report(out, *p, r.seconds, r.tally);
  return shoal_baseline::print_rank0_report(out, json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-isx", argc, argv, run_main);
}
