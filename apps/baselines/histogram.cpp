// shoal-baseline-histogram: the bale histogram kernel in plain C++ and MPI,
// the baseline `shoal histogram` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-histogram [--table-per-core T] [--requests-per-core N]
//                                         [--seed s] [--round n] [--json]
//
// Same problem as the app with ranks in the place of cores (histogram/plain/
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
#include "common/app.hpp"
#include "common/report.hpp"
#include "histogram/plain/bale.hpp"

namespace {

using shoal_apps::bale::bale_problem;
using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

/// One rank's counters and the buffers of the bucketed exchange.
class histogram_rank {
 public:
  histogram_rank(const bale_problem& p, int rank, int ranks, std::int64_t round)
      : p_(p),
        rank_(rank),
        ranks_(ranks),
        round_(round),
        counts_(static_cast<std::size_t>(p.table_per_core), 0),
        owner_(static_cast<std::size_t>(round)),
        local_(static_cast<std::size_t>(round)),
        send_(static_cast<std::size_t>(round)),
        send_counts_(ranks),
        send_displs_(ranks),
        recv_counts_(ranks),
        recv_displs_(ranks) {}

  /// Makes this rank's N increments (collective: every rank).
  void increment_all() {
    const shoal_apps::bale::index_stream stream(p_, rank_);
    const std::int64_t n = p_.requests_per_core;
    for (std::int64_t first = 0; first < n; first += round_)
      round(stream, first, std::min(n, first + round_));
  }

  std::vector<std::uint64_t>& counts() noexcept { return counts_; }

 private:
  /// One round: requests [first, last) of the stream.
  void round(const shoal_apps::bale::index_stream& stream, std::int64_t first, std::int64_t last) {
    std::fill(send_counts_.begin(), send_counts_.end(), 0);
    std::uint64_t* counts = counts_.data();
    // Every request is bucketed, this rank's own too: no branch on a coin
    // toss per request (see bale::block_split); the own bucket is applied
    // here and left out of the exchange.
    std::size_t m = 0;
    for (std::int64_t k = first; k < last; ++k, ++m) {
      const shoal_apps::bale::target t = stream.at(static_cast<std::uint64_t>(k));
      owner_[m] = t.owner;
      local_[m] = t.local;
      ++send_counts_[t.owner];
    }
    int offset = 0;
    for (int q = 0; q < ranks_; ++q) {
      send_displs_[q] = offset;
      offset += send_counts_[q];
    }
    std::vector<int>& fill = recv_displs_;  // scratch until the exchange sets it
    std::copy(send_displs_.begin(), send_displs_.end(), fill.begin());
    for (std::size_t k = 0; k < m; ++k)
      send_[static_cast<std::size_t>(fill[owner_[k]]++)] = local_[k];
    const std::uint32_t* own = send_.data() + send_displs_[rank_];
    for (int i = 0; i < send_counts_[rank_]; ++i) ++counts[own[i]];
    send_counts_[rank_] = 0;
    MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int q = 0; q < ranks_; ++q) {
      recv_displs_[q] = total;
      total += recv_counts_[q];
    }
    recv_.resize(static_cast<std::size_t>(total));
    MPI_Alltoallv(send_.data(), send_counts_.data(), send_displs_.data(), MPI_UINT32_T,
                  recv_.data(), recv_counts_.data(), recv_displs_.data(), MPI_UINT32_T,
                  MPI_COMM_WORLD);
    for (const std::uint32_t l : recv_) ++counts[l];
  }

  const bale_problem& p_;
  int rank_;
  int ranks_;
  std::int64_t round_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint32_t> owner_;
  std::vector<std::uint32_t> local_;
  std::vector<std::uint32_t> send_;
  std::vector<std::uint32_t> recv_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
};

/// Verdict sums, on rank 0.
struct outcome {
  double seconds = 0;
  std::int64_t wrong = 0;
  std::int64_t total = 0;
};

/// Times the increments, then validates; the verdict is summed on rank 0.
outcome run(const bale_problem& p, std::int64_t round) {
  histogram_rank me(p, my_rank(), rank_count(), round);
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
