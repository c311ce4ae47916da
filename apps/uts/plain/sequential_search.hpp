// The sequential UTS search: depth-first with an explicit stack on the
// calling thread. It is the reference for parallel efficiency (the
// `sequential` implementation runs it on the root task) and the independent
// count that validates a parallel search of a tree with no published counts.
// No shoal here.
#pragma once

#include "uts/plain/tree_params.hpp"
#include "uts/plain/tree_rules.hpp"

namespace shoal_apps::uts {

/// Counts every node of the tree of `rules`. Memory: the stack holds at most
/// about depth x 100 nodes (24 bytes each).
tree_counts search_sequential(const tree_rules& rules);

}  // namespace shoal_apps::uts
