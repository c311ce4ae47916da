// A tree for finish() tests, shared by tests/test_completion.cpp (one
// process) and tests/mpi/dist_completion.cpp (several): every node counts
// itself in this process's g_nodes, and child i of a node starts in one of
// five ways (spawn, spawn<stealable>, spawn<anywhere>, a message that spawns,
// a message whose handler recurses), so one tree uses all of them.
#pragma once

#include "shoal/shoal.hpp"

#include <atomic>
#include <cstdint>

namespace finish_tree {

using i64 = std::int64_t;

inline std::atomic<i64> g_nodes{0};  // nodes run on this process
inline constexpr int fanout = 3;

/// Nodes of a full tree of `depth` levels below the root.
inline i64 tree_nodes(int depth) {
  i64 total = 0;
  i64 level = 1;
  for (int d = 0; d <= depth; ++d, level *= fanout) total += level;
  return total;
}

void node(int depth, bool in_task);

inline void start_child(int depth, int i) {
  const int to = (shoal::mycore() + 1 + i) % shoal::cores();
  switch ((depth + i) % 5) {
    case 0:
      shoal::spawn([depth] { node(depth, true); });
      break;
    case 1:
      shoal::spawn<shoal::stealable>([depth] { node(depth, true); });
      break;
    case 2:
      shoal::spawn<shoal::anywhere>([depth] { node(depth, true); });
      break;
    case 3:
      shoal::send(to, [depth] { shoal::spawn([depth] { node(depth, true); }); });
      break;
    default:
      shoal::send(to, [depth] { node(depth, false); });  // runs in the handler
      break;
  }
}

/// Counts itself, yields now and then (in a task), starts its children.
inline void node(int depth, bool in_task) {
  g_nodes.fetch_add(1, std::memory_order_relaxed);
  if (depth == 0) return;
  if (in_task && depth % 2 == 1) shoal::yield();
  for (int i = 0; i < fanout; ++i) start_child(depth - 1, i);
}

}  // namespace finish_tree
