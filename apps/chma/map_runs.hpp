// The shoal implementations of `shoal chma` and what a run reports.
#pragma once

#include <vector>

#include "chma/plain/chma_problem.hpp"

namespace shoal_apps::chma {

/// One run (rank 0's view): the final map's totals, the timed steps, and
/// every key of the final map when asked for.
struct channel_result {
  map_totals totals;
  double seconds = 0;
  std::vector<str_key> keys;
};

/// Each populates the distributed map (untimed), runs every task's steps
/// (timed) and collects the totals (and keys, when `gather_keys`) on rank 0.
/// Collective: call on every rank with the same problem.
///
/// Tasks migrate with their accesses: one message per access (map_migrate.cpp).
channel_result run_migrate(const chma_problem& p, bool gather_keys);
/// Tasks stay home; each access is a request and a reply (map_split_phase.cpp).
channel_result run_split_phase(const chma_problem& p, bool gather_keys);

}  // namespace shoal_apps::chma
