// Level-synchronous breadth-first search over a local_graph, the classic
// bulk-synchronous MPI formulation (Graph500's reference "simple" MPI BFS):
//
//   per level, each rank scans the adjacency of its frontier vertices;
//   a neighbour it owns is claimed at once; a neighbour owned elsewhere goes
//   as (local index at the owner, parent) into that owner's outbox; one
//   MPI_Alltoall + MPI_Alltoallv round delivers the outboxes; each owner
//   claims the still-unvisited vertices it received into the next frontier;
//   an MPI_Allreduce of the next frontier sizes ends the search at zero.
//
// Every claim happens while level L is being expanded, so claimed vertices
// are all at level L+1: the parent array is a BFS tree.
//
// Frontiers are bitmaps over the rank's own vertices, scanned in vertex
// order: the rows read are then in increasing address order, which the
// hardware prefetcher follows, where a frontier in claim order would cost
// a cache miss on every row (about 3x slower at scale 20).
//
// Sender filter: each rank keeps one bit per global vertex, set when the
// vertex was claimed here or already sent to its owner during this search.
// A vertex sent once needs no second message (its owner claims it in that
// level at the latest), so a rank sends at most one message per remote vertex
// per search instead of one per edge. Turned off, every remote neighbour is
// sent, as Graph500's reference code does.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include <mpi.h>

#include "baselines/alltoallv_exchange.hpp"
#include "baselines/bfs_graph.hpp"

namespace shoal_baseline {

/// One rank's side of the searches over `g` (see the top of this file); all
/// ranks construct one and call search() with the same roots in the same order.
class level_sync_bfs {
 public:
  /// Sizes every buffer for `g` (which must outlive this); sends nothing.
  level_sync_bfs(const local_graph& g, MPI_Comm comm, bool sender_filter)
      : g_(g),
        comm_(comm),
        filter_(sender_filter),
        first_(static_cast<vertex>(g.first())),
        exchange_(comm) {
    seen_.assign(static_cast<std::size_t>((g.dist.vertices() + 63) / 64), 0);
    parent_.resize(static_cast<std::size_t>(g.count()));
    frontier_.assign((parent_.size() + 63) / 64, 0);
    next_.assign(frontier_.size(), 0);
    reserve_messages();
  }

  /// Collective: one search from global vertex `root` (every rank passes the
  /// same root). Costs per level one Alltoall, one Alltoallv, one Allreduce.
  void search(std::int64_t root) {
    clear(seen_);
    clear(next_);
    claimed_ = 0;
    const auto r = static_cast<std::uint64_t>(root);
    if (g_.dist.owner(r) == g_.rank) claim(static_cast<vertex>(r - first_), static_cast<vertex>(r));
    for (;;) {
      std::swap(frontier_, next_);
      clear(next_);
      if (filter_)
        expand<true>();
      else
        expand<false>();
      for (const message& m : exchange_.exchange()) claim(m.target, m.parent);
      std::int64_t claimed = claimed_;
      MPI_Allreduce(MPI_IN_PLACE, &claimed, 1, MPI_INT64_T, MPI_SUM, comm_);
      if (claimed == 0) return;
      claimed_ = 0;
    }
  }

  /// This rank's slice of the last search's parent array, in global ids
  /// (-1: unreached). Local; not part of the timed search.
  std::vector<std::int64_t> parents() const {
    std::vector<std::int64_t> out(parent_.size(), -1);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (test(first_ + i)) out[i] = static_cast<std::int64_t>(parent_[i]);
    return out;
  }

 private:
  struct message {
    vertex target;  ///< index among the receiving owner's vertices
    vertex parent;  ///< global id
  };

  /// With the sender filter a level sends rank d at most one message per
  /// vertex of d, and so receives at most (ranks-1) per own vertex: buffers
  /// of that size (capped, as a bound on memory) keep searches from
  /// allocating or faulting pages in.
  void reserve_messages() {
    constexpr std::size_t cap = std::size_t{1} << 22;
    const int ranks = g_.dist.ranks();
    std::vector<std::size_t> out(static_cast<std::size_t>(ranks), 0);
    for (int d = 0; d < ranks; ++d)
      if (d != g_.rank)
        out[static_cast<std::size_t>(d)] =
            std::min(cap, static_cast<std::size_t>(g_.dist.count(d)));
    const auto in = static_cast<std::size_t>(ranks - 1) * static_cast<std::size_t>(g_.count());
    exchange_.reserve(out, std::min(cap, in));
  }

  static void clear(std::vector<std::uint64_t>& bits) {
    std::memset(bits.data(), 0, bits.size() * sizeof(std::uint64_t));
  }
  bool test(std::uint64_t v) const noexcept { return (seen_[v >> 6] >> (v & 63)) & 1U; }
  /// Marks global vertex v seen; returns whether it already was.
  bool test_and_set(std::uint64_t v) noexcept {
    std::uint64_t& word = seen_[v >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (v & 63);
    const bool was = (word & bit) != 0;
    word |= bit;
    return was;
  }

  /// Claims own vertex `local` for the next frontier unless already visited.
  void claim(vertex local, vertex parent) {
    if (!test_and_set(std::uint64_t{first_} + local)) enter(local, parent);
  }
  /// Puts own vertex `local`, just marked seen, into the next frontier.
  void enter(vertex local, vertex parent) {
    parent_[local] = parent;
    next_[local >> 6] |= std::uint64_t{1} << (local & 63);
    ++claimed_;
  }

  /// Scans the frontier: own neighbours claimed, others queued to owners.
  template <bool Filter>
  void expand() {
    const std::uint64_t* offsets = g_.offsets.data();
    for (std::size_t word = 0; word < frontier_.size(); ++word) {
      for (std::uint64_t bits = frontier_[word]; bits != 0; bits &= bits - 1) {
        const auto u =
            static_cast<vertex>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
        expand_row<Filter>(g_.dist, g_.rank, u, offsets[u], offsets[u + 1]);
      }
    }
  }

  /// Expands frontier vertex `u`, whose row is adj[begin, end). The
  /// distribution and rank come by value: as members they would be reloaded
  /// after every store into parent_ (unsigned ints may alias their ints).
  template <bool Filter>
  void expand_row(const block_distribution dist, const int rank, vertex u, std::uint64_t begin,
                  std::uint64_t end) {
    const vertex* adj = g_.adj.data();
    const vertex parent = static_cast<vertex>(first_ + u);
    for (std::uint64_t i = begin; i < end; ++i) {
      const vertex w = adj[i];
      if (Filter && test_and_set(w)) continue;
      const int owner = dist.owner(w);
      const auto local = static_cast<vertex>(w - static_cast<vertex>(dist.first(owner)));
      if (owner != rank)
        exchange_.push(owner, {local, parent});
      else if (Filter)
        enter(local, parent);
      else
        claim(local, parent);
    }
  }

  const local_graph& g_;
  MPI_Comm comm_;
  bool filter_;
  vertex first_;
  std::vector<std::uint64_t> seen_;             ///< one bit per global vertex (see the top)
  std::vector<vertex> parent_;                  ///< valid where this rank's seen_ bit is set
  std::vector<std::uint64_t> frontier_, next_;  ///< bitmaps over own vertices
  std::int64_t claimed_ = 0;                    ///< bits set in next_
  alltoallv_exchange<message> exchange_;
};

}  // namespace shoal_baseline
