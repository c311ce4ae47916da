// What each core of the job holds for the BFS: its rows of the CSR graph,
// its slice of the parent array, its bits of vertices seen, its frontiers and the
// scratch space of each search variant.
//
// The state is a namespace-scope shoal::per_core (g_state<V>), so handlers
// and tasks on any core of any process reach their own core's state by name,
// never by a pointer that crossed a process boundary. V is the vertex id
// type: std::uint32_t when vertex and packed ids fit 32 bits (half the bytes
// per neighbour and per message), else std::uint64_t.
#pragma once

#include <shoal/shoal.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "bfs/distribution.hpp"

namespace shoal_apps::bfs {

/// A set of small integers, one bit each.
class bitmap {
 public:
  void resize(std::int64_t bits) { words_.assign(static_cast<std::size_t>((bits + 63) / 64), 0); }
  void clear() noexcept {
    if (!words_.empty()) std::memset(words_.data(), 0, words_.size() * sizeof(std::uint64_t));
  }
  bool test(std::uint64_t i) const noexcept { return ((words_[i >> 6] >> (i & 63)) & 1) != 0; }
  /// Sets bit i; returns whether it was already set.
  bool test_and_set(std::uint64_t i) noexcept { return test_and_set(words_.data(), i); }
  void set(std::uint64_t i) noexcept { words_[i >> 6] |= std::uint64_t{1} << (i & 63); }
  void reset(std::uint64_t i) noexcept { words_[i >> 6] &= ~(std::uint64_t{1} << (i & 63)); }
  std::uint64_t* words() noexcept { return words_.data(); }
  const std::uint64_t* words() const noexcept { return words_.data(); }
  std::size_t word_count() const noexcept { return words_.size(); }
  void swap(bitmap& o) noexcept { words_.swap(o.words_); }

  /// Calls f(i) for each set bit i of words [first, last), in increasing order.
  template <class F>
  void for_each_set(std::size_t first, std::size_t last, F&& f) const {
    for (std::size_t w = first; w < last; ++w)
      for (std::uint64_t bits = words_[w]; bits != 0; bits &= bits - 1)
        f(w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
  }

  /// test, set and test_and_set on raw words, for loops that keep the
  /// pointer in a register.
  static bool test(const std::uint64_t* words, std::uint64_t i) noexcept {
    return ((words[i >> 6] >> (i & 63)) & 1) != 0;
  }
  static void set(std::uint64_t* words, std::uint64_t i) noexcept {
    words[i >> 6] |= std::uint64_t{1} << (i & 63);
  }
  /// Stores only when the bit was clear: in a search most tests find it
  /// set, and a load and a branch then cost less than a store per test.
  static bool test_and_set(std::uint64_t* words, std::uint64_t i) noexcept {
    if (test(words, i)) return true;
    set(words, i);
    return false;
  }

 private:
  std::vector<std::uint64_t> words_;
};

/// A claim request: make `parent` (global id) the parent of vertex `local`
/// (index at its owner) if that vertex is not yet visited.
template <class V>
struct visit {
  V local;
  V parent;
};

/// An arc of the graph while it is built: `local` (index at the receiving
/// owner) gets neighbour `other` (packed id, distribution.hpp).
template <class V>
struct arc {
  V local;
  V other;
};

/// A label-correcting relaxation (async variant): vertex `local` at its
/// owner is `level` hops from the root through `parent`.
template <class V>
struct relax {
  V local;
  V level;
  V parent;
};

/// A batch of claim requests for one owner (queue variant): UPC-queues style
/// bulk enqueue into the owner's next-frontier queue.
template <class V>
struct visit_batch {
  static constexpr int capacity = 60;
  std::uint32_t count = 0;
  visit<V> items[capacity];
};

/// One core's part of the graph and of the current search. Touched only by
/// that core's tasks and handlers (and by the root task between phases).
template <class V>
struct core_state {
  static constexpr V unreached = std::numeric_limits<V>::max();

  vertex_distribution dist;
  int me = 0;  ///< this core's global id

  // The graph: rows of this core's vertices.
  std::vector<std::uint64_t> offsets;
  std::vector<V> adj;        ///< neighbours as packed ids (distribution.hpp)
  std::uint64_t graph_id = 0;  ///< new for every graph built (fill_rows): caches key on it
  std::vector<arc<V>> arcs;  ///< construction inbox

  // One search. The parent of each of this core's vertices: in the global parent array
  // (delegate variant), or, for the others, in `tree` as 32-bit ids where V
  // allows (`unreached` when none): half the bytes under the random writes
  // of a search, copied into the global form when gathered (untimed).
  std::int64_t* parent = nullptr;  ///< this core's slice of the global parent array
  std::vector<V> tree;             ///< compact parents (unless `in_global`)
  bool in_global = false;          ///< parents go to `parent`, not `tree`
  /// Packed ids of the vertices this core has claimed (its own) or, with
  /// the sender filter, already sent to their owner (the others) in this search.
  bitmap seen;
  // Frontiers are bitmaps over this core's vertices (local indices),
  // scanned in index order: rows are then read in increasing address order,
  // which the hardware prefetcher follows, where a frontier in claim order
  // costs a cache miss per row.
  bitmap frontier;
  bitmap next;
  std::int64_t next_size = 0;            ///< bits set in `next`
  std::int64_t parity_size[2] = {0, 0};  ///< delegate: bits set in frontier, next

  // async: levels, and the queue of vertices whose level improved.
  std::vector<V> level;
  std::vector<V> sent_level;  ///< best level sent per packed id (sender filter)
  std::vector<V> work;
  std::size_t work_head = 0;
  bitmap queued;

  // queue: per-destination batches being filled, and this core's queue.
  std::vector<visit_batch<V>> outbox;
  std::vector<visit<V>> inbox;

  std::int64_t count() const noexcept { return static_cast<std::int64_t>(offsets.size()) - 1; }

  /// The parent of local vertex `l` as a global id, -1 when unreached.
  std::int64_t parent_of(std::int64_t l) const noexcept {
    if (in_global) return parent[l];
    const V p = tree[static_cast<std::size_t>(l)];
    return p == unreached ? -1 : static_cast<std::int64_t>(p);
  }
  /// Forgets every parent (before a search; untimed).
  void clear_parents() {
    if (in_global)
      std::fill(parent, parent + count(), std::int64_t{-1});
    else
      std::fill(tree.begin(), tree.end(), unreached);
  }

  /// Claims each requested own vertex that is not yet visited for the next
  /// frontier, with the request's parent. One pass with the arrays in
  /// locals: stores into the bitmaps (64-bit words) could otherwise alias
  /// this state's 64-bit fields and force a reload of each after every
  /// store (per value, measured at 2 x 1, scale 16: 3.4 ns against the
  /// baseline's 2.5 ns). Handlers hand whole batches here.
  void claim(std::span<const visit<V>> requests) {
    // This core's own vertices are packed ids base + l (distribution.hpp).
    const std::uint64_t base = dist.packed(me, 0);
    std::uint64_t* seen_words = seen.words();
    std::uint64_t* next_words = next.words();
    V* parents = tree.data();
    std::int64_t claimed = 0;
    for (const visit<V> m : requests) {
      if (bitmap::test_and_set(seen_words, base + m.local)) continue;
      parents[m.local] = m.parent;
      bitmap::set(next_words, m.local);
      ++claimed;
    }
    next_size += claimed;
  }
  /// Claims own vertex `l`, known to be unvisited (its seen bit just set).
  void take(V l, V p) {
    tree[l] = p;
    next.set(l);
    ++next_size;
  }
  /// Level 0: puts `root` in the frontier, as its own parent, when this
  /// core owns it.
  void start_at(std::uint64_t root) {
    if (dist.owner(root) != me) return;
    const auto l = static_cast<V>(dist.local(root));
    seen.test_and_set(dist.pack(root));
    if (in_global)
      parent[l] = static_cast<std::int64_t>(root);
    else
      tree[l] = static_cast<V>(root);
    frontier.set(l);
  }
  /// Makes `next` the frontier and empties `next`; returns the frontier's size.
  std::int64_t advance() {
    frontier.swap(next);
    next.clear();
    const std::int64_t n = next_size;
    next_size = 0;
    return n;
  }
};

/// Every core's state, by name.
template <class V>
inline shoal::per_core<core_state<V>> g_state;

}  // namespace shoal_apps::bfs
