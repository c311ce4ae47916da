// shoal-baseline-indexgather: the bale index-gather kernel in plain C++ and
// MPI, the baseline `shoal indexgather` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-indexgather [--table-per-core T] [--requests-per-core N]
//                                           [--seed s] [--round n] [--json]
//
// Same problem as the app with ranks in the place of cores (histogram/plain/
// bale.hpp): rank r owns entries [r * T, (r + 1) * T), entry i holding
// table_value(seed, i), and makes the N reads of stream r into tgt. Bucketed
// exchange in rounds of --round reads (bounded buffers, about 40 bytes a read
// of a round; every rank runs the same number of rounds): each rank generates
// a round, sorts its local indices by owner (counting sort, 4 bytes a read)
// remembering each one's slot, reads its own bucket's entries, exchanges the bucket
// sizes (MPI_Alltoall) and the indices (MPI_Alltoallv), reads the entries
// asked of it, sends the values back (MPI_Alltoallv, 8 bytes a read, in the
// order asked) and stores each in its slot. The reply needs no slot: the
// exchange keeps the order. Validation as in the app: each rank regenerates
// its stream and checks every tgt[k] against table_value. Rank 0 prints the
// report. Accepts --impl and ignores it.
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

/// One rank's table slice, target array and exchange buffers.
class gather_rank {
 public:
  gather_rank(const bale_problem& p, int rank, int ranks, std::int64_t round)
      : p_(p),
        rank_(rank),
        ranks_(ranks),
        round_(round),
        table_(static_cast<std::size_t>(p.table_per_core)),
        tgt_(static_cast<std::size_t>(p.requests_per_core), 0),
        owner_(static_cast<std::size_t>(round)),
        local_(static_cast<std::size_t>(round)),
        send_(static_cast<std::size_t>(round)),
        send_slots_(static_cast<std::size_t>(round)),
        values_back_(static_cast<std::size_t>(round)),
        send_counts_(ranks),
        send_displs_(ranks),
        recv_counts_(ranks),
        recv_displs_(ranks) {
    const std::uint64_t base =
        static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(p.table_per_core);
    for (std::size_t i = 0; i < table_.size(); ++i)
      table_[i] = shoal_apps::bale::table_value(p.seed, base + i);
  }

  /// Makes this rank's N reads (collective: every rank).
  void gather_all() {
    const shoal_apps::bale::index_stream stream(p_, rank_);
    const std::int64_t n = p_.requests_per_core;
    for (std::int64_t first = 0; first < n; first += round_)
      round(stream, first, std::min(n, first + round_));
  }

  std::vector<std::uint64_t>& tgt() noexcept { return tgt_; }

 private:
  /// One round: reads [first, last) of the stream.
  void round(const shoal_apps::bale::index_stream& stream, std::int64_t first, std::int64_t last) {
    std::fill(send_counts_.begin(), send_counts_.end(), 0);
    const std::uint64_t* table = table_.data();
    std::uint64_t* tgt = tgt_.data();
    // Every request is bucketed, this rank's own too: no branch on a coin
    // toss per request (see bale::block_split); the own bucket is read here
    // and left out of the exchange.
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
    for (std::size_t k = 0; k < m; ++k) {
      const auto at = static_cast<std::size_t>(fill[owner_[k]]++);
      send_[at] = local_[k];
      send_slots_[at] = static_cast<std::uint32_t>(first) + static_cast<std::uint32_t>(k);
    }
    const std::size_t own_at = static_cast<std::size_t>(send_displs_[rank_]);
    for (int i = 0; i < send_counts_[rank_]; ++i)
      tgt[send_slots_[own_at + i]] = table[send_[own_at + i]];
    send_counts_[rank_] = 0;
    MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int q = 0; q < ranks_; ++q) {
      recv_displs_[q] = total;
      total += recv_counts_[q];
    }
    asked_.resize(static_cast<std::size_t>(total));
    answers_.resize(static_cast<std::size_t>(total));
    MPI_Alltoallv(send_.data(), send_counts_.data(), send_displs_.data(), MPI_UINT32_T,
                  asked_.data(), recv_counts_.data(), recv_displs_.data(), MPI_UINT32_T,
                  MPI_COMM_WORLD);
    for (std::size_t i = 0; i < asked_.size(); ++i) answers_[i] = table[asked_[i]];
    // Back the other way: what this rank received, it answers in the same order.
    MPI_Alltoallv(answers_.data(), recv_counts_.data(), recv_displs_.data(), MPI_UINT64_T,
                  values_back_.data(), send_counts_.data(), send_displs_.data(), MPI_UINT64_T,
                  MPI_COMM_WORLD);
    // values_back_ follows send_'s layout (the own bucket's place stays unused).
    for (int q = 0; q < ranks_; ++q)
      for (int i = send_displs_[q], end = send_displs_[q] + send_counts_[q]; i < end; ++i)
        tgt[send_slots_[static_cast<std::size_t>(i)]] = values_back_[static_cast<std::size_t>(i)];
  }

  const bale_problem& p_;
  int rank_;
  int ranks_;
  std::int64_t round_;
  std::vector<std::uint64_t> table_;
  std::vector<std::uint64_t> tgt_;
  std::vector<std::uint32_t> owner_;
  std::vector<std::uint32_t> local_;
  std::vector<std::uint32_t> send_;
  std::vector<std::uint32_t> send_slots_;
  std::vector<std::uint64_t> values_back_;
  std::vector<std::uint32_t> asked_;
  std::vector<std::uint64_t> answers_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
};

/// Verdict sums, on rank 0.
struct outcome {
  double seconds = 0;
  std::int64_t wrong = 0;
};

/// Times the gather, then validates; the verdict is summed on rank 0.
outcome run(const bale_problem& p, std::int64_t round) {
  gather_rank me(p, my_rank(), rank_count(), round);
  outcome o;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  me.gather_all();
  MPI_Barrier(MPI_COMM_WORLD);
  o.seconds = MPI_Wtime() - t0;
  std::vector<std::uint64_t>& tgt = me.tgt();
  if (p.corrupt && my_rank() == 0) tgt[0] ^= 1;  // fault injection: the check must see it
  const shoal_apps::bale::index_stream stream(p, my_rank());
  std::int64_t wrong = 0;
  for (std::int64_t k = 0; k < p.requests_per_core; ++k) {
    const shoal_apps::bale::target t = stream.at(static_cast<std::uint64_t>(k));
    const std::uint64_t want =
        shoal_apps::bale::table_value(p.seed, shoal_apps::bale::global_index(p, t));
    wrong += tgt[static_cast<std::size_t>(k)] != want ? 1 : 0;
  }
  MPI_Reduce(&wrong, &o.wrong, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  return o;
}

int run_main(int argc, char** argv) {
  shoal_baseline::bale_job o;
  if (const std::optional<int> stop = shoal_baseline::parse_bale_job(
          argc, argv, "shoal-baseline-indexgather",
          "shoal-baseline-indexgather: bale index-gather in plain MPI (MPI_Alltoallv rounds)",
          "reads", 8.0, 8.0, o))
    return *stop;
  const bale_problem& p = o.problem;
  const outcome r = run(p, o.round);
  if (my_rank() != 0) return 0;
  shoal_apps::report out("indexgather", "mpi-alltoallv");
  shoal_apps::bale::fill_report(
      out, p, {"reads", "reads", "reads_per_s", "M reads/s"}, "rank", r.seconds, r.wrong == 0,
      fmt::format("{} of {} gathered values differ from the table's entries", r.wrong,
                  p.requests()));
  out.set("wrong_values", r.wrong);
  out.set("round", o.round, false);
  return shoal_baseline::print_rank0_report(out, o.json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-indexgather", argc, argv, run_main);
}
