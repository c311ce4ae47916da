// The sequential reference of `shoal cc`: connected components of an
// undirected edge list by union-find (union by size, path halving). No
// shoal here: plain C++.
#pragma once

#include <cstdint>
#include <vector>

#include "common/plain/graph.hpp"

namespace shoal_apps::cc {

/// Each vertex's component, named by the smallest vertex in it (so a vertex
/// with no edge, or only self-loops, is labelled by itself). Self-loops and
/// duplicate edges are allowed. Vertex ids must lie in [0, vertices).
std::vector<std::int64_t> component_labels(std::int64_t vertices, const std::vector<edge>& edges);

/// The number of distinct labels (components) in `labels`.
std::int64_t count_components(const std::vector<std::int64_t>& labels);

}  // namespace shoal_apps::cc
