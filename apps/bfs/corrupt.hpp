// Deliberate corruption of a valid parent array, for the tests that prove
// validation catches each of the five Graph500 rules (hidden flag
// --corrupt-for-test RULE). Plain C++ on rank 0, after a search.
#pragma once

#include <cstdint>
#include <vector>

#include "common/plain/graph.hpp"

namespace shoal_apps::bfs {

/// Changes `parent` (a valid BFS tree of `edges` from `root`) so that it
/// breaks Graph500 rule `rule` (1-5, numbered as in plain/validate.cpp) and
/// no rule checked before it. Throws input_error when this tree offers no
/// way to break that rule (too small a graph).
void corrupt_parent_array(std::vector<std::int64_t>& parent, const std::vector<edge>& edges,
                          std::int64_t root, int rule);

}  // namespace shoal_apps::bfs
