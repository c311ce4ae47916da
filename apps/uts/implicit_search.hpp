// The `implicit` UTS search: the tree is generated while it is searched, in
// parallel over every core of every process, load balanced by work stealing
// (work_stealing_search.hpp). And the `sequential` search it is measured
// against: the plain depth-first search on the root task.
#pragma once

#include "uts/plain/tree_params.hpp"
#include "uts/search_context.hpp"

namespace shoal_apps::uts {

/// Counts the tree of `p` over every core of the job. Call on every rank
/// (it runs shoal::run twice: the timed search, then gathering the counts);
/// the result is meaningful on rank 0.
search_result run_implicit(const tree_params& p);

/// Counts the tree of `p` on the root task alone (one core of rank 0).
/// Call on every rank; the result is meaningful on rank 0.
search_result run_sequential(const tree_params& p);

}  // namespace shoal_apps::uts
