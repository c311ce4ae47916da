// What every UTS implementation shares: the tree this process searches
// (reached by name from any core), the result of a search, and timing of a
// whole shoal::run.
#pragma once

#include <shoal/shoal.hpp>

#include <chrono>
#include <utility>

#include "uts/plain/tree_params.hpp"
#include "uts/plain/tree_rules.hpp"

namespace shoal_apps::uts {

/// Makes `p` the tree of this process. Call on every rank, between runs,
/// with the same parameters (each rank parsed the same command line).
void set_process_tree(const tree_params& p);

/// The tree of this process. Any core, after set_process_tree().
const tree_rules& process_tree();

/// What one search found, and how long it took (meaningful on rank 0).
struct search_result {
  tree_counts counts;
  double seconds = 0;          ///< the timed search (or traversal)
  double construction_s = -1;  ///< in-memory only: building the tree
};

/// Runs `root` with shoal::run and returns its wall time: from the start of
/// the root task's run until the job is quiescent again, so a parallel
/// search is timed until its last node has been counted. Every rank.
template <class F>
double timed_run(F&& root) {
  const auto start = std::chrono::steady_clock::now();
  shoal::run(std::forward<F>(root));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace shoal_apps::uts
