// What the two bale baselines (histogram, indexgather) share: their command
// line (the app's flags plus --round), the checked problem it describes, and
// the rounds in which a rank's requests are bucketed by owner for the
// exchange.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/mpi_job.hpp"
#include "common/plain/bale.hpp"
#include "common/plain/input_error.hpp"

namespace shoal_baseline {

struct bale_job {
  shoal_apps::bale::bale_options bale;
  std::int64_t round = 1 << 20;  ///< requests each rank generates per exchange round
  bool json = false;
  std::string impl = "mpi-alltoallv";
  shoal_apps::bale::bale_problem problem;
};

/// Parses the command line of `program` (`requests` names what a request is:
/// "increments", "reads") and checks the problem, with `bytes_per_entry` and
/// `bytes_per_request` of memory each (bale::make_problem). Returns the job,
/// or the exit status when the program should stop: 0 after --help, 2 for a
/// refused line; impossible sizes end every rank through job_exit{2}
/// (collectively). Collective.
inline std::optional<int> parse_bale_job(int argc, char** argv, const char* program,
                                         const char* summary, const char* requests,
                                         double bytes_per_entry, double bytes_per_request,
                                         bale_job& o) {
  CLI::App cli{summary};
  shoal_apps::bale::add_bale_options(cli, o.bale, requests);
  cli.add_option("--round", o.round,
                 fmt::format("{} each rank generates per exchange round", requests))
      ->capture_default_str();
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", o.impl, "accepted and ignored (the app's flag)");
  if (const int status = parse_command_line(cli, program, argc, argv); status >= 0) return status;
  // The memory check reads this node's memory: ranks may disagree, so the
  // verdict is agreed on (a refusal anywhere ends every rank with status 2).
  collectively(program, [&] {
    if (o.round < 1 || o.round > (std::int64_t{1} << 28))
      throw shoal_apps::input_error(fmt::format(
          "--round {}: out of range; expected an integer in [1, {}]", o.round, 1 << 28));
    o.problem =
        shoal_apps::bale::make_problem(o.bale, rank_count(), 1, bytes_per_entry, bytes_per_request);
    o.round = std::min(o.round, o.problem.requests_per_core);
  });
  return std::nullopt;
}

/// This rank's N requests, generated a round of at most --round at a time
/// and bucketed by owner (counting sort) into an alltoallv_exchange of local
/// indices. Every request is bucketed, the rank's own too: a branch on a
/// coin toss per request costs more (see bale::block_split); the caller
/// handles the own bucket and withholds it.
class bale_rounds {
 public:
  bale_rounds(const shoal_apps::bale::bale_problem& p, int rank, std::int64_t round)
      : stream_(p, rank),
        requests_(p.requests_per_core),
        round_(round),
        owner_(static_cast<std::size_t>(round)),
        local_(static_cast<std::size_t>(round)) {
    exchange_.reserve(static_cast<std::size_t>(round), static_cast<std::size_t>(round));
  }

  /// Every rank collectively (N, hence the number of rounds, is the same
  /// everywhere): for each round, buckets its requests, calling
  /// `placed(slot, k)` for request k written at send slot `slot`, then
  /// calls `exchange_round()`, which applies or answers the own bucket and
  /// runs the exchange.
  template <class Placed, class Round>
  void run(Placed placed, Round exchange_round) {
    for (std::int64_t first = 0; first < requests_; first += round_) {
      bucket(first, std::min(requests_, first + round_), placed);
      exchange_round();
    }
  }

  alltoallv_exchange<std::uint32_t>& exchange() noexcept { return exchange_; }

 private:
  template <class Placed>
  void bucket(std::int64_t first, std::int64_t last, Placed& placed) {
    exchange_.begin_round();
    std::size_t m = 0;
    for (std::int64_t k = first; k < last; ++k, ++m) {
      const shoal_apps::bale::target t = stream_.at(static_cast<std::uint64_t>(k));
      owner_[m] = t.owner;
      local_[m] = t.local;
      exchange_.count(static_cast<int>(t.owner));
    }
    exchange_.lay_out();
    for (std::size_t k = 0; k < m; ++k)
      placed(exchange_.place(static_cast<int>(owner_[k]), local_[k]),
             static_cast<std::uint32_t>(first) + static_cast<std::uint32_t>(k));
  }

  shoal_apps::bale::index_stream stream_;
  std::int64_t requests_;
  std::int64_t round_;
  std::vector<std::uint32_t> owner_;
  std::vector<std::uint32_t> local_;
  alltoallv_exchange<std::uint32_t> exchange_;
};

}  // namespace shoal_baseline
