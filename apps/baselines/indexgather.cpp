// shoal-baseline-indexgather: the bale index-gather kernel in plain C++ and
// MPI, the baseline `shoal indexgather` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-indexgather [--table-per-core T] [--requests-per-core N]
//                                           [--seed s] [--round n] [--json]
//
// Same problem as the app with ranks in the place of cores (common/plain/
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
#include <span>
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

/// One rank's table slice, target array and rounds of the bucketed exchange.
class gather_rank {
 public:
  gather_rank(const bale_problem& p, int rank, int ranks, std::int64_t round)
      : rank_(rank),
        ranks_(ranks),
        table_(static_cast<std::size_t>(p.table_per_core)),
        tgt_(static_cast<std::size_t>(p.requests_per_core), 0),
        send_slots_(static_cast<std::size_t>(round)),
        values_back_(static_cast<std::size_t>(round)),
        rounds_(p, rank, round) {
    const std::uint64_t base =
        static_cast<std::uint64_t>(rank) * static_cast<std::uint64_t>(p.table_per_core);
    for (std::size_t i = 0; i < table_.size(); ++i)
      table_[i] = shoal_apps::bale::table_value(p.seed, base + i);
  }

  /// Makes this rank's N reads (collective: every rank).
  void gather_all() {
    std::uint32_t* slots = send_slots_.data();
    rounds_.run([slots](std::size_t slot, std::uint32_t k) { slots[slot] = k; },
                [this] { exchange_round(); });
  }

  std::vector<std::uint64_t>& tgt() noexcept { return tgt_; }

 private:
  /// Reads the own bucket here, sends the others' reads to their owners,
  /// answers the reads received and stores the answers that come back.
  void exchange_round() {
    shoal_baseline::alltoallv_exchange<std::uint32_t>& ex = rounds_.exchange();
    const std::uint64_t* table = table_.data();
    std::uint64_t* tgt = tgt_.data();
    const std::size_t own_at = ex.offset(rank_);
    const std::span<const std::uint32_t> own = ex.bucket(rank_);
    for (std::size_t i = 0; i < own.size(); ++i) tgt[send_slots_[own_at + i]] = table[own[i]];
    ex.withhold(rank_);
    const std::span<const std::uint32_t> asked = ex.exchange();
    answers_.resize(asked.size());
    for (std::size_t i = 0; i < asked.size(); ++i) answers_[i] = table[asked[i]];
    // Back the other way: what this rank received, it answers in the same
    // order, and the answers land in the send buffer's layout.
    ex.reply(answers_.data(), values_back_.data());
    for (int q = 0; q < ranks_; ++q) {
      const std::size_t at = ex.offset(q);
      for (std::size_t i = at, end = at + ex.bucket(q).size(); i < end; ++i)
        tgt[send_slots_[i]] = values_back_[i];
    }
  }

  int rank_;
  int ranks_;
  std::vector<std::uint64_t> table_;
  std::vector<std::uint64_t> tgt_;
  std::vector<std::uint32_t> send_slots_;   ///< beside the send buffer: each read's number k
  std::vector<std::uint64_t> values_back_;  ///< the answers, in the send buffer's layout
  std::vector<std::uint64_t> answers_;
  shoal_baseline::bale_rounds rounds_;
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
