// What the two bale baselines (histogram, indexgather) share: their command
// line (the app's flags plus --round) and the checked problem it describes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "baselines/mpi_job.hpp"
#include "common/app.hpp"
#include "histogram/plain/bale.hpp"

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

}  // namespace shoal_baseline
