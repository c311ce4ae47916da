// shoal-baseline-intsort: NAS Parallel Benchmarks IS in plain C++ and MPI,
// the baseline `shoal intsort` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-intsort [--class S|W|A|B] [--json]
//
// NPB's MPI approach: rank r holds a block of the keys (generated with the
// jump-ahead). Each iteration it buckets its keys locally (counting sort by
// NPB bucket), sums the bucket sizes with MPI_Allreduce (the 5 test keys'
// values ride along), splits the buckets into one contiguous key range per
// rank with about the same number of keys (as the app does), exchanges the
// send counts with MPI_Alltoall and the keys with MPI_Alltoallv, and ranks
// the keys it received with a histogram of its range and a prefix sum.
// Partial verification by the ranks holding the test keys' ranks; full
// verification places the received keys of the last iteration at their
// ranks and checks the slice. Same flags, validation and JSON as the app
// (impl "mpi-alltoallv"); --impl is accepted and ignored.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/mpi_job.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"
#include "intsort/plain/npb_is.hpp"

namespace {

using shoal_apps::intsort::is_class;
using shoal_apps::intsort::is_outcome;
using shoal_apps::intsort::test_keys;

using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

/// One rank's keys and the buffers of the bucketed exchange.
class is_rank {
 public:
  is_rank(const is_class& c, int rank, int ranks, const std::string& fault)
      : c_(c),
        rank_(rank),
        ranks_(ranks),
        fault_(fault),
        first_(shoal_apps::intsort::share_begin(c.total_keys(), rank, ranks)),
        keys_(static_cast<std::size_t>(
            shoal_apps::intsort::share_begin(c.total_keys(), rank + 1, ranks) - first_)),
        bucketed_(keys_.size()),
        local_sizes_(static_cast<std::size_t>(c.buckets() + test_keys)),
        sizes_(local_sizes_.size()),
        bucket_ptr_(static_cast<std::size_t>(c.buckets())),
        send_counts_(static_cast<std::size_t>(ranks)),
        send_displs_(static_cast<std::size_t>(ranks)) {
    shoal_apps::intsort::generate_keys(c, first_, keys_);
    cum_.reserve(static_cast<std::size_t>(c.max_key()));
  }

  /// One ranking iteration; the partial verification counts go to `into`.
  /// Collective.
  void rank(int iteration, is_outcome& into) {
    shoal_apps::intsort::modify_keys(c_, iteration, first_, keys_);
    bucket_locally();
    MPI_Allreduce(local_sizes_.data(), sizes_.data(), static_cast<int>(sizes_.size()), MPI_INT64_T,
                  MPI_SUM, MPI_COMM_WORLD);
    exchange();
    rank_received();
    if (fault_ == "partial" && iteration == 3)
      for (std::int32_t& r : cum_) ++r;
    verify_partial(iteration, into);
  }

  /// Full verification after the last iteration: keys out of sort or
  /// misplaced, over all ranks (on rank 0). Collective.
  std::int64_t full_verify() {
    std::vector<std::int32_t> sorted(received_.size(), -1);
    std::int64_t wrong = 0;
    for (const std::int32_t k : received_) {
      if (k < lo_ || k >= hi_) {
        ++wrong;
        continue;
      }
      const std::int64_t slot = --cum_[static_cast<std::size_t>(k - lo_)] - base_;
      if (slot < 0 || slot >= static_cast<std::int64_t>(sorted.size())) {
        ++wrong;
        continue;
      }
      sorted[static_cast<std::size_t>(slot)] = k;
    }
    if (fault_ == "full" && rank_ == 0 && sorted.size() > 1)
      std::swap(sorted.front(), sorted.back());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      const std::int32_t k = sorted[i];
      if (k < lo_ || k >= hi_ || (i > 0 && sorted[i - 1] > k)) ++wrong;
    }
    const std::array<std::int64_t, 2> mine{wrong, static_cast<std::int64_t>(sorted.size())};
    std::array<std::int64_t, 2> sum{};
    MPI_Reduce(mine.data(), sum.data(), 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    const std::int64_t missing =
        sum[1] > c_.total_keys() ? sum[1] - c_.total_keys() : c_.total_keys() - sum[1];
    return sum[0] + missing;
  }

 private:
  /// Counting sort of the held keys by bucket into bucketed_; bucket sizes
  /// and the test keys' values into local_sizes_.
  void bucket_locally() {
    const int shift = c_.bucket_shift();
    const int buckets = c_.buckets();
    std::fill(local_sizes_.begin(), local_sizes_.end(), 0);
    for (const std::int32_t k : keys_) ++local_sizes_[static_cast<std::size_t>(k >> shift)];
    std::int64_t at = 0;
    for (int b = 0; b < buckets; ++b) {
      bucket_ptr_[static_cast<std::size_t>(b)] = at;
      at += local_sizes_[static_cast<std::size_t>(b)];
    }
    std::int64_t* ptr = bucket_ptr_.data();
    std::int32_t* out = bucketed_.data();
    for (const std::int32_t k : keys_) out[ptr[k >> shift]++] = k;
    for (int i = 0; i < test_keys; ++i) {
      const std::int64_t j = c_.test_index[static_cast<std::size_t>(i)] - first_;
      if (j >= 0 && j < static_cast<std::int64_t>(keys_.size()))
        local_sizes_[static_cast<std::size_t>(buckets + i)] = keys_[static_cast<std::size_t>(j)];
    }
  }

  /// Splits the buckets over the ranks, then sends each rank its keys.
  void exchange() {
    const int buckets = c_.buckets();
    const std::vector<std::int32_t> bounds = shoal_apps::intsort::split_buckets(
        std::span<const std::int64_t>(sizes_.data(), static_cast<std::size_t>(buckets)), ranks_);
    int offset = 0;
    for (int q = 0; q < ranks_; ++q) {
      std::int64_t n = 0;
      for (std::int32_t b = bounds[static_cast<std::size_t>(q)];
           b < bounds[static_cast<std::size_t>(q) + 1]; ++b)
        n += local_sizes_[static_cast<std::size_t>(b)];
      send_counts_[static_cast<std::size_t>(q)] = static_cast<int>(n);
      send_displs_[static_cast<std::size_t>(q)] = offset;
      offset += static_cast<int>(n);
    }
    received_ = exchange_.exchange(bucketed_.data(), send_counts_, send_displs_);
    const int shift = c_.bucket_shift();
    lo_ = bounds[static_cast<std::size_t>(rank_)] << shift;
    hi_ = bounds[static_cast<std::size_t>(rank_) + 1] << shift;
    base_ = 0;
    for (std::int32_t b = 0; b < bounds[static_cast<std::size_t>(rank_)]; ++b)
      base_ += sizes_[static_cast<std::size_t>(b)];
  }

  /// Histogram of the received keys over [lo_, hi_), then ranks.
  void rank_received() {
    cum_.assign(static_cast<std::size_t>(hi_ - lo_), 0);
    std::int32_t* cum = cum_.data();
    const std::int32_t lo = lo_;
    for (const std::int32_t k : received_) ++cum[k - lo];
    std::int64_t running = base_;
    for (std::int32_t& r : cum_) {
      running += r;
      r = static_cast<std::int32_t>(running);
    }
  }

  void verify_partial(int iteration, is_outcome& into) const {
    const int buckets = c_.buckets();
    for (int i = 0; i < test_keys; ++i) {
      const std::int64_t k = sizes_[static_cast<std::size_t>(buckets + i)];
      if (!shoal_apps::intsort::checks_test_key(c_, k) || k - 1 < lo_ || k - 1 >= hi_) continue;
      ++into.partial_checked;
      if (cum_[static_cast<std::size_t>(k - 1 - lo_)] ==
          shoal_apps::intsort::expected_rank(c_, i, iteration))
        ++into.partial_passed;
    }
  }

  const is_class& c_;
  int rank_;
  int ranks_;
  std::string fault_;
  std::int64_t first_;
  std::vector<std::int32_t> keys_;
  std::vector<std::int32_t> bucketed_;
  std::vector<std::int64_t> local_sizes_;  ///< bucket sizes, then the test keys' values
  std::vector<std::int64_t> sizes_;        ///< the same, summed over all ranks
  std::vector<std::int64_t> bucket_ptr_;
  std::vector<int> send_counts_, send_displs_;
  shoal_baseline::alltoallv_exchange<std::int32_t> exchange_;
  std::span<const std::int32_t> received_;  ///< this rank's keys, valid until the next exchange
  std::vector<std::int32_t> cum_;           ///< ranks of the values [lo_, hi_)
  std::int32_t lo_ = 0;
  std::int32_t hi_ = 0;
  std::int64_t base_ = 0;  ///< keys below lo_ over all ranks
};

struct options {
  std::string class_name = "S";
  std::string fault = "none";
  bool json = false;
  std::string impl = "mpi-alltoallv";
};

/// Parses the command line; returns -1 to go on, else the exit status.
int parse(int argc, char** argv, options& o) {
  CLI::App cli{"shoal-baseline-intsort: NPB IS in plain MPI (local bucketing + MPI_Alltoallv)"};
  cli.add_option("--class", o.class_name,
                 "NPB problem class: S (2^16 keys), W (2^20), A (2^23) or B (2^25)")
      ->transform(CLI::IsMember({"S", "W", "A", "B"}, CLI::ignore_case))
      ->capture_default_str();
  shoal_apps::hide_from_help(
      cli, cli.add_option("--inject-fault", o.fault, "break a verification (tests)")
               ->check(CLI::IsMember({"none", "partial", "full"})));
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", o.impl, "accepted and ignored (the app's flag)");
  return shoal_baseline::parse_command_line(cli, "shoal-baseline-intsort", argc, argv);
}

/// The untimed first iteration, the 10 timed ones, full verification.
is_outcome run(const is_class& c, const std::string& fault) {
  is_rank me(c, my_rank(), rank_count(), fault);
  is_outcome untimed;
  me.rank(1, untimed);  // NPB's free iteration
  is_outcome local;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int it = 1; it <= shoal_apps::intsort::max_iterations; ++it) me.rank(it, local);
  MPI_Barrier(MPI_COMM_WORLD);
  is_outcome o;
  o.seconds = MPI_Wtime() - t0;
  const std::array<std::int64_t, 2> mine{local.partial_passed, local.partial_checked};
  std::array<std::int64_t, 2> sum{};
  MPI_Reduce(mine.data(), sum.data(), 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  o.partial_passed = sum[0];
  o.partial_checked = sum[1];
  o.out_of_order = me.full_verify();
  return o;
}

int run_main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  const is_class* c = nullptr;
  try {
    c = &shoal_apps::intsort::find_class(o.class_name);
    shoal_apps::intsort::check_shape(*c, rank_count(), "-np");
  } catch (const shoal_apps::input_error& e) {
    // Every rank sees the same options, so every rank stops here.
    if (my_rank() == 0) std::fprintf(stderr, "shoal-baseline-intsort: error: %s\n", e.what());
    return 2;
  }
  const is_outcome outcome = run(*c, o.fault);
  if (my_rank() != 0) return 0;
  shoal_apps::report out("intsort", "mpi-alltoallv");
  shoal_apps::intsort::fill_report(out, *c, outcome);
  return shoal_baseline::print_rank0_report(out, o.json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-intsort", argc, argv, run_main);
}
