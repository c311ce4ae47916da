// Distributed CSR construction (timed as `construction_s`).
//
// Every core takes an equal slice of the input edge list: it generates its
// slice of the Kronecker list (counter-based, so no core needs another's) or
// takes its share of the file's edges, which every process has read. It
// routes both arcs of each edge that is not a self-loop to the owner of the
// arc's source over a typed channel of bare (local index, neighbour) pairs;
// an owner appends what arrives to its inbox. Once the channel's phase has
// ended (channel::end_phase: every arc handled everywhere), each sorts its
// inbox into CSR rows by counting, then sorts each row and drops duplicate
// neighbours (a search needs each neighbour once; validation still counts
// every input edge).
#pragma once

#include <cstdint>
#include <vector>

#include "bfs/core_state.hpp"
#include "common/plain/graph.hpp"

namespace shoal_apps::bfs {

/// Where the edges come from, by value (closures copy it to every core).
struct graph_shape {
  std::int64_t vertices = 0;
  std::int64_t edges = 0;
  int scale = 0;
  int edgefactor = 0;
  std::uint64_t seed = 0;
  bool from_file = false;
};

/// The edges of --graph, read by every process before the job's first run.
extern std::vector<edge> g_file_edges;

/// Builds every core's rows of the graph. Blocking; call from the root task.
/// `block` is the parent array's elements per block (distribution.hpp).
template <class V>
void build_graph(const graph_shape& shape, std::int64_t block);

}  // namespace shoal_apps::bfs
