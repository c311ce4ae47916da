// shoal-baseline-gups: HPCC RandomAccess in plain C++ and MPI, the baseline
// `shoal gups` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-gups [--log-table n] [--json]
//
// HPCC style: rank r owns a contiguous slice of the table. Each rank
// generates its share of the updates from its own start point of the HPCC
// stream, in rounds of at most 1024 updates (HPCC's look-ahead limit):
// it buckets the updates of other ranks' words by owner, applies its own,
// exchanges the bucket sizes with MPI_Alltoall and the updates with
// MPI_Alltoallv, then applies what it received. Every rank runs the same
// number of rounds (the collectives need all of them). The table uses huge
// pages and the apply loops prefetch a few updates ahead, as the app does,
// so that the comparison measures communication, not memory tricks. Validation as in the app (see
// gups/plain/gups_problem.hpp); rank 0 prints the report. Accepts --impl
// and ignores it, so a harness can pass the app's command line unchanged.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/mpi_job.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"
#include "gups/plain/gups_problem.hpp"
#include "gups/plain/hpcc_stream.hpp"
#include "gups/plain/huge_pages.hpp"

namespace {

using shoal_apps::gups::gups_problem;

using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

/// Contiguous slices: rank r owns words [start(r), start(r+1)), with
/// start(r) = ceil(r * 2^n / R), so the owner of word i is floor(i * R / 2^n)
/// (a multiply and a shift, no division per update).
struct slices {
  int ranks;
  int log_table;

  int owner(std::uint64_t i) const noexcept {
    return static_cast<int>((i * static_cast<std::uint64_t>(ranks)) >> log_table);
  }
  std::uint64_t start(int r) const noexcept {
    const std::uint64_t scaled = static_cast<std::uint64_t>(r) << log_table;
    const auto n = static_cast<std::uint64_t>(ranks);
    return (scaled + n - 1) / n;
  }
};

/// One rank's table slice and the buffers of the bucketed exchange.
class gups_rank {
 public:
  gups_rank(const gups_problem& p, int rank, int ranks)
      : p_(p),
        rank_(rank),
        ranks_(ranks),
        layout_{ranks, p.log_table},
        base_(layout_.start(rank)),
        words_(layout_.start(rank + 1) - base_),
        table_(shoal_apps::gups::allocate_words(words_)),
        dest_(shoal_apps::gups::max_outstanding),
        values_(shoal_apps::gups::max_outstanding),
        own_(shoal_apps::gups::max_outstanding) {
    exchange_.reserve(std::size_t{shoal_apps::gups::max_outstanding},
                      std::size_t{shoal_apps::gups::max_outstanding});
    reset_table();
  }

  void reset_table() {
    for (std::size_t j = 0; j < words_; ++j) table_[j] = base_ + j;
  }

  /// Applies this rank's share of the updates (collective: every rank).
  void apply_all_updates() {
    const std::int64_t first = p_.first_update(rank_, ranks_);
    const std::int64_t last = p_.first_update(rank_ + 1, ranks_);
    std::int64_t most = 0;  // the largest share fixes the number of rounds
    for (int q = 0; q < ranks_; ++q)
      most = std::max(most, p_.first_update(q + 1, ranks_) - p_.first_update(q, ranks_));
    const std::int64_t rounds =
        (most + shoal_apps::gups::max_outstanding - 1) / shoal_apps::gups::max_outstanding;
    std::uint64_t r = shoal_apps::gups::hpcc_starts(static_cast<std::uint64_t>(first));
    std::int64_t next = first;
    for (std::int64_t k = 0; k < rounds; ++k) {
      // A rank whose share is used up still takes part, with nothing to send.
      const std::int64_t n = std::min<std::int64_t>(shoal_apps::gups::max_outstanding, last - next);
      round(r, n);
      next += n;
    }
  }

  /// Words of this slice with table[i] != i.
  std::int64_t count_wrong() const {
    std::int64_t wrong = 0;
    for (std::size_t j = 0; j < words_; ++j) wrong += table_[j] != base_ + j ? 1 : 0;
    return wrong;
  }

  /// This slice's part of the table digest.
  std::uint64_t digest() const {
    std::uint64_t d = 0;
    for (std::size_t j = 0; j < words_; ++j)
      d += shoal_apps::gups::digest_term(base_ + j, table_[j]);
    return d;
  }

 private:
  /// One round: generate `n` updates, bucket, exchange, apply.
  void round(std::uint64_t& r, std::int64_t n) {
    bucket(r, n);
    const std::span<const std::uint64_t> in = exchange_.exchange();
    apply(in.data(), in.size());
  }

  std::uint64_t& word(std::uint64_t r) noexcept { return table_[(r & p_.mask) - base_]; }

  /// XORs each update into its word, prefetching a few updates ahead so
  /// that the cache misses overlap.
  void apply(const std::uint64_t* v, std::size_t n) noexcept {
    constexpr std::size_t ahead = 8;
    for (std::size_t k = 0; k < n; ++k) {
      if (k + ahead < n) __builtin_prefetch(&word(v[k + ahead]), 1);
      word(v[k]) ^= v[k];
    }
  }

  /// Generates `n` updates; applies this rank's own and sorts the others by
  /// owner into the exchange's send buffer (counting sort).
  void bucket(std::uint64_t& r, std::int64_t n) {
    exchange_.begin_round();
    int remote = 0;
    std::size_t own = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      r = shoal_apps::gups::hpcc_next(r);
      const int o = layout_.owner(r & p_.mask);
      if (o == rank_) {
        own_[own++] = r;
        continue;
      }
      dest_[static_cast<std::size_t>(remote)] = o;
      values_[static_cast<std::size_t>(remote)] = r;
      ++remote;
      exchange_.count(o);
    }
    apply(own_.data(), own);
    exchange_.lay_out();
    for (int k = 0; k < remote; ++k)
      exchange_.place(dest_[static_cast<std::size_t>(k)], values_[static_cast<std::size_t>(k)]);
  }

  const gups_problem& p_;
  int rank_;
  int ranks_;
  slices layout_;
  std::uint64_t base_;
  std::size_t words_;
  shoal_apps::gups::word_array table_;  // huge pages, like the app's table
  std::vector<int> dest_;
  std::vector<std::uint64_t> values_;
  std::vector<std::uint64_t> own_;
  shoal_baseline::alltoallv_exchange<std::uint64_t> exchange_;
};

struct options {
  shoal_apps::gups::gups_options gups;
  bool json = false;
  std::string impl = "mpi-alltoallv";
};

/// Parses the command line; returns -1 to go on, else the exit status.
int parse(int argc, char** argv, options& o) {
  CLI::App cli{"shoal-baseline-gups: HPCC RandomAccess in plain MPI (MPI_Alltoallv rounds)"};
  shoal_apps::gups::add_gups_options(cli, o.gups);
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", o.impl, "accepted and ignored (the app's flag)");
  return shoal_baseline::parse_command_line(cli, "shoal-baseline-gups", argc, argv);
}

/// Times the update phase, then validates; the outcome is summed on rank 0.
shoal_apps::gups::gups_outcome run(const gups_problem& p) {
  gups_rank me(p, my_rank(), rank_count());
  shoal_apps::gups::gups_outcome o;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  me.apply_all_updates();
  MPI_Barrier(MPI_COMM_WORLD);
  o.seconds = MPI_Wtime() - t0;
  if (p.has_reference()) {
    const std::uint64_t mine = me.digest();
    std::uint64_t sum = 0;
    MPI_Reduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    o.reference_run = true;
    o.reference_ok = my_rank() != 0 || sum == shoal_apps::gups::reference_digest(p);
  }
  me.apply_all_updates();  // XOR undoes the timed phase
  const std::int64_t wrong = me.count_wrong();
  MPI_Reduce(&wrong, &o.wrong, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  return o;
}

int run_main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  gups_problem p;
  try {
    p = shoal_apps::gups::make_problem(o.gups, rank_count(), 0, "");
  } catch (const shoal_apps::input_error& e) {
    // Every rank sees the same options, so every rank stops here.
    if (my_rank() == 0) std::fprintf(stderr, "shoal-baseline-gups: error: %s\n", e.what());
    return 2;
  }
  const shoal_apps::gups::gups_outcome outcome = run(p);
  if (my_rank() != 0) return 0;
  shoal_apps::report out("gups", "mpi-alltoallv");
  shoal_apps::gups::fill_report(out, p, "rank", outcome);
  return shoal_baseline::print_rank0_report(out, o.json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-gups", argc, argv, run_main);
}
