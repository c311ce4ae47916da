// The implementations of `shoal randomwalk` and what a run reports.
#pragma once

#include "randomwalk/plain/walk_problem.hpp"

namespace shoal_apps::randomwalk {

/// One run: the totals of its walks and its timings (rank 0).
struct walk_run {
  walk_totals totals;
  double seconds = 0;          ///< the walks (timed phase)
  double construction_s = -1;  ///< building the graph's shares (untimed)
};

/// Every walk on shoal, walkers migrating over a typed channel
/// (walk_channel.cpp). Call on every rank; the result is rank 0's.
walk_run walk_channel(const walk_problem& p);

}  // namespace shoal_apps::randomwalk
