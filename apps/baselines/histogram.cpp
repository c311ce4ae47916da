// shoal-baseline-histogram: the bale histogram kernel in plain C++ and MPI,
// the baseline `shoal histogram` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-histogram [--table-per-core T] [--requests-per-core N]
//                                         [--seed s] [--round n] [--json]
//
// Same problem as the app with ranks in the place of cores (common/plain/
// bale.hpp): rank r owns counters [r * T, (r + 1) * T) and makes the N
// increments of stream r. Bucketed exchange in rounds of --round increments
// (bounded buffers, about 16 bytes an increment of a round; every rank runs
// the same number of rounds, as the collectives need): each rank generates a
// round, sorts its local indices by owner into one buffer (counting sort,
// 4 bytes an increment, as on the app's wire), applies its own bucket,
// exchanges the bucket sizes with MPI_Alltoall and the indices with
// MPI_Alltoallv, then increments what it received. Validation as in the
// app: each rank regenerates every rank's stream and compares its slice
// counter by counter; the counters must sum to N * R. Rank 0 prints the
// report. Accepts --impl and ignores it, so a harness can pass the app's
// command line unchanged.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include "baselines/bale_job.hpp"
#include "baselines/mpi_job.hpp"
#include "common/plain/bale.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"

namespace {

using shoal_apps::bale::bale_problem;
using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

/// One rank's counters and its rounds of the bucketed exchange.
class histogram_rank {
 public:
  histogram_rank(const bale_problem& p, int rank, std::int64_t round)
      : rank_(rank),
        counts_(static_cast<std::size_t>(p.table_per_core), 0),
        rounds_(p, rank, round) {}

  /// Makes this rank's N increments (collective: every rank).
  void increment_all() {
    shoal_baseline::alltoallv_exchange<std::uint32_t>& ex = rounds_.exchange();
    std::uint64_t* counts = counts_.data();
    rounds_.run([](std::size_t, std::uint32_t) {},
                [&] {
                  for (const std::uint32_t l : ex.bucket(rank_)) ++counts[l];
                  ex.withhold(rank_);
                  for (const std::uint32_t l : ex.exchange()) ++counts[l];
                });
  }

  std::vector<std::uint64_t>& counts() noexcept { return counts_; }

 private:
  int rank_;
  std::vector<std::uint64_t> counts_;
  shoal_baseline::bale_rounds rounds_;
};

/// Verdict sums, on rank 0.
struct outcome {
  double seconds = 0;
  std::int64_t wrong = 0;
  std::int64_t total = 0;
};

/// Times the increments, then validates; the verdict is summed on rank 0.
outcome run(const bale_problem& p, std::int64_t round) {
  histogram_rank me(p, my_rank(), round);
  outcome o;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  me.increment_all();
  MPI_Barrier(MPI_COMM_WORLD);
  o.seconds = MPI_Wtime() - t0;
  std::vector<std::uint64_t>& counts = me.counts();
  if (p.corrupt && my_rank() == 0) ++counts[0];  // fault injection: the check must see it
  std::vector<std::uint64_t> reference(counts.size(), 0);
  const auto mine = static_cast<std::uint32_t>(my_rank());
  for (int q = 0; q < p.participants; ++q) {
    const shoal_apps::bale::index_stream stream(p, q);
    for (std::int64_t k = 0; k < p.requests_per_core; ++k) {
      const shoal_apps::bale::target t = stream.at(static_cast<std::uint64_t>(k));
      if (t.owner == mine) ++reference[t.local];
    }
  }
  std::int64_t sums[2] = {0, 0};
  for (std::size_t i = 0; i < counts.size(); ++i) {
    sums[0] += counts[i] != reference[i] ? 1 : 0;
    sums[1] += static_cast<std::int64_t>(counts[i]);
  }
  std::int64_t all[2] = {0, 0};
  MPI_Reduce(sums, all, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  o.wrong = all[0];
  o.total = all[1];
  return o;
}

int run_main(int argc, char** argv) {
  shoal_baseline::bale_job o;
  if (const std::optional<int> stop = shoal_baseline::parse_bale_job(
          argc, argv, "shoal-baseline-histogram",
          "shoal-baseline-histogram: bale histogram in plain MPI (MPI_Alltoallv rounds)",
          "increments", 16.0, 0.0, o))
    return *stop;
  const bale_problem& p = o.problem;
  const outcome r = run(p, o.round);
  if (my_rank() != 0) return 0;
  shoal_apps::report out("histogram", "mpi-alltoallv");
  const bool ok = r.wrong == 0 && r.total == p.requests();
  shoal_apps::bale::fill_report(
      out, p, {"increments", "updates", "updates_per_s", "M updates/s"}, "rank", r.seconds, ok,
      fmt::format("{} of {} counters differ from a sequential count of every rank's stream; "
                  "counters sum to {} (expected {})",
                  r.wrong, p.table_size(), r.total, p.requests()));
  out.set("wrong_counters", r.wrong);
  out.set("round", o.round, false);
  return shoal_baseline::print_rank0_report(out, o.json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-histogram", argc, argv, run_main);
}
