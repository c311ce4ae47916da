// Depth-first search of a generated tree over every core of every process,
// load balanced by work stealing: the engine of the `implicit` search and of
// the construction phase of `in-memory`.
//
// Protocol. Each core owns one depth-first stack (a namespace-scope per_core
// object, so tasks reach it by name on any process). A task carrying a node
// pushes it onto its core's stack; if no task of that core is draining the
// stack, it drains it, expanding nodes (Policy::expand pushes the children),
// else it just leaves its node there. To feed thieves, a draining core with
// at least min_kept nodes keeps a few of its oldest (shallowest, so usually
// largest) non-leaf nodes released as spawn<anywhere> tasks: idle cores of
// its process steal them from its deque, idle cores of other processes by
// steal request. A
// released task that nobody steals is run by its own core later, which just
// pushes the node back: the cost of a release that was not needed is one
// spawn and one task start. The count of a core's released tasks not yet
// started bounds how many it keeps out (max_released); the task that starts
// one decrements its origin's count (an atomic within the process, one
// message from another process).
//
// The draining task yields every yield_every nodes, so that the core polls
// (remote steal requests, messages) and the released tasks can start. The
// search is over when the job is quiescent: run() returns.
//
// A policy P says what a node is and what expanding it does:
//   using node = ...;           trivially copyable, at most 56 bytes
//   struct core_state {...};    per-core data of the search (counts, ids)
//   static bool is_leaf(const node&);
//   static void expand(const node&, core_search<P>&);  counts the node, pushes
//                                                      its children; may suspend
// P is reached by name (templates), so it must be the same type in every
// process: a policy is a namespace-scope type of the app.
#pragma once

#include <shoal/shoal.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "uts/plain/tree_params.hpp"

namespace shoal_apps::uts {

/// A depth-first stack whose oldest entries can be taken out for thieves.
template <class Node>
class node_stack {
 public:
  bool empty() const noexcept { return items_.size() == bottom_; }
  std::size_t size() const noexcept { return items_.size() - bottom_; }
  void push(const Node& n) { items_.push_back(n); }

  /// The newest node. Not empty.
  Node pop() {
    const Node n = items_.back();
    items_.pop_back();
    if (items_.size() == bottom_) clear();
    return n;
  }

  /// The oldest node. Not empty.
  Node take_oldest() {
    const Node n = items_[bottom_++];
    // Reclaim the released prefix once it dominates, so the vector stays small.
    if (bottom_ >= 1024 && bottom_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(bottom_));
      bottom_ = 0;
    }
    return n;
  }

  void clear() noexcept {
    items_.clear();
    bottom_ = 0;
  }

 private:
  std::vector<Node> items_;
  std::size_t bottom_ = 0;  // items_[0, bottom_) were released
};

/// One core's share of a search with policy P.
template <class P>
struct core_search {
  node_stack<typename P::node> stack;
  bool draining = false;  // a task of this core is draining the stack
  typename P::core_state state{};
};

/// Every core's search state, by name (one instance per process).
template <class P>
inline shoal::per_core<core_search<P>> searches;

/// Every core's count of released tasks not yet started.
template <class P>
inline shoal::per_core<std::atomic<int>> released;

/// Tuning (T1 and T3 on 1x2 and 2x1 vary within noise over 128-2048, 2-32
/// and 2-32): nodes between yields (about 50 us of work), how many released
/// tasks a core keeps out at most, and how many nodes it keeps on its stack
/// before releasing any (fewer releases that the core would take back).
inline constexpr int yield_every = 512;
inline constexpr int max_released = 8;
inline constexpr std::size_t min_kept = 8;

template <class P>
void search_from(const typename P::node& n, int origin);

namespace detail {

/// Tells core `origin` that one of its released tasks has started.
template <class P>
void note_started(int origin) {
  if (origin < 0) return;
  if (shoal::rank_of(origin) == shoal::myrank()) {
    const int local = origin - shoal::myrank() * shoal::local_cores();
    // Relaxed: the count only steers how much a core releases.
    released<P>[local].fetch_sub(1, std::memory_order_relaxed);
  } else {
    shoal::send(origin, [] { released<P>.local().fetch_sub(1, std::memory_order_relaxed); });
  }
}

/// Releases the oldest node that has children; older leaves are counted
/// here on the way, since a thief would spend more on stealing one than on
/// counting it (87% of a binomial tree's nodes are leaves).
template <class P>
void release_oldest(core_search<P>& cs, std::atomic<int>& count) {
  while (cs.stack.size() >= min_kept) {
    const typename P::node n = cs.stack.take_oldest();
    if (P::is_leaf(n)) {
      P::expand(n, cs);
      continue;
    }
    count.fetch_add(1, std::memory_order_relaxed);  // relaxed: a steering hint
    const int origin = shoal::mycore();
    shoal::spawn<shoal::anywhere>([n, origin] { search_from<P>(n, origin); });
    return;
  }
}

/// Expands nodes until the core's stack is empty. Policy::expand may
/// suspend (blocking delegates); other tasks of the core then only push.
template <class P>
void drain(core_search<P>& cs) {
  std::atomic<int>& count = released<P>.local();
  cs.draining = true;
  int until_yield = yield_every;
  while (!cs.stack.empty()) {
    const typename P::node n = cs.stack.pop();
    P::expand(n, cs);
    if (cs.stack.size() >= min_kept && count.load(std::memory_order_relaxed) < max_released)
      release_oldest(cs, count);
    if (--until_yield == 0) {
      until_yield = yield_every;
      shoal::yield();
    }
  }
  cs.draining = false;
}

}  // namespace detail

/// Task body: searches the subtree of `n` on the calling core. `origin` is
/// the core that released it (-1 for the root). Any task, any core.
template <class P>
void search_from(const typename P::node& n, int origin) {
  detail::note_started<P>(origin);
  core_search<P>& cs = searches<P>.local();
  cs.stack.push(n);
  if (!cs.draining) detail::drain(cs);
}

/// Forgets every core's search state of this process. Between runs only,
/// on every rank.
template <class P>
void reset_search() {
  searches<P>.reset();
  released<P>.reset();
}

/// Sum of `get()` over every core of the job, where get is a captureless
/// function returning a core's tree_counts-like part. Blocking (one delegate
/// round trip per core); a task on any core.
template <class Counts, class Get>
Counts sum_over_cores(Get get) {
  Counts total{};
  for (int c = 0; c < shoal::cores(); ++c) merge(total, shoal::delegate::call(c, get));
  return total;
}

}  // namespace shoal_apps::uts
