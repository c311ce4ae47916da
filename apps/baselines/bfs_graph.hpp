// The baseline's distributed graph: vertices in contiguous blocks over the
// ranks (1D), each rank holding the CSR adjacency of its own vertices.
//
// Construction (collective): each rank takes an equal slice of the input edge
// list (generated or read), and in rounds of at most `batch` edges sends
// every non-self-loop edge {u, v} to both owners as arcs u->v and v->u with
// MPI_Alltoallv. An arc travels as one 64-bit key, (owner's local index of
// its source << width of a vertex id) | target, so sorting the keys (LSD radix
// sort, 11 bits a pass: streaming passes, where a counting sort into a
// million rows would miss the cache on every arc) yields the CSR rows sorted,
// with duplicate arcs adjacent and dropped (a search needs each neighbour
// once).
//
// Vertex ids are 32 bits (graphs of at most 2^32 vertices; far more than fits
// this baseline's memory on one node): half the bytes a search reads.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <mpi.h>

#include "baselines/alltoallv_exchange.hpp"
#include "common/plain/graph.hpp"

namespace shoal_baseline {

using vertex = std::uint32_t;
/// Largest graph this baseline takes (vertex ids must fit `vertex`).
constexpr std::int64_t max_vertices = std::int64_t{1} << 32;

/// Vertex v lives on rank v / chunk, at local index v % chunk; the last ranks
/// may hold fewer (or no) vertices.
class block_distribution {
 public:
  block_distribution(std::int64_t vertices, int ranks)
      : vertices_(vertices),
        ranks_(ranks),
        chunk_(std::max<std::int64_t>(1, (vertices + ranks - 1) / ranks)) {
    if (std::has_single_bit(static_cast<std::uint64_t>(chunk_)))
      shift_ = std::countr_zero(static_cast<std::uint64_t>(chunk_));
  }

  std::int64_t vertices() const noexcept { return vertices_; }
  int ranks() const noexcept { return ranks_; }
  /// Owner of global vertex v (a shift when the block size is a power of two).
  int owner(std::uint64_t v) const noexcept {
    return static_cast<int>(shift_ >= 0 ? v >> shift_ : v / static_cast<std::uint64_t>(chunk_));
  }
  /// First global vertex of rank r, and how many it owns.
  std::int64_t first(int r) const noexcept { return std::min(r * chunk_, vertices_); }
  std::int64_t count(int r) const noexcept { return first(r + 1) - first(r); }

 private:
  std::int64_t vertices_;
  int ranks_;
  std::int64_t chunk_;
  int shift_ = -1;
};

/// This rank's part of the graph: rows for its vertices first .. first+count-1,
/// neighbours as global ids, each row sorted without duplicates or self-loops.
struct local_graph {
  block_distribution dist;
  int rank = 0;
  std::vector<std::uint64_t> offsets;  ///< count+1 row starts into adj
  std::vector<vertex> adj;

  std::int64_t first() const noexcept { return dist.first(rank); }
  std::int64_t count() const noexcept { return dist.count(rank); }
};

/// Appends input edges [first, last) of the global edge list to `out`.
using edge_source =
    std::function<void(std::int64_t first, std::int64_t last, std::vector<shoal_apps::edge>& out)>;

namespace detail {

/// Bits needed for values 0 .. n-1 (at least 1).
inline int width(std::int64_t n) {
  const auto largest = static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1) - 1);
  return std::max(1, static_cast<int>(std::bit_width(largest)));
}

/// Equal slices of [0, total) over the ranks (the first total % ranks get one more).
inline std::int64_t slice_start(std::int64_t total, int ranks, int r) {
  return r * (total / ranks) + std::min<std::int64_t>(r, total % ranks);
}

/// LSD radix sort of `keys` on their low `bits` bits; `tmp` is scratch.
inline void radix_sort(std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& tmp,
                       int bits) {
  constexpr int digit = 11;
  constexpr std::uint64_t mask = (std::uint64_t{1} << digit) - 1;
  tmp.resize(keys.size());
  std::array<std::size_t, std::size_t{1} << digit> at{};
  for (int shift = 0; shift < bits; shift += digit) {
    at.fill(0);
    for (const std::uint64_t k : keys) ++at[(k >> shift) & mask];
    std::size_t sum = 0;
    for (std::size_t& a : at) sum += std::exchange(a, sum);
    for (const std::uint64_t k : keys) tmp[at[(k >> shift) & mask]++] = k;
    keys.swap(tmp);
  }
}

/// CSR rows from sorted arc keys (source << target_bits | target), duplicates dropped.
inline void fill_rows(local_graph& g, const std::vector<std::uint64_t>& keys, int target_bits) {
  const std::uint64_t target_mask = (std::uint64_t{1} << target_bits) - 1;
  g.offsets.assign(static_cast<std::size_t>(g.count()) + 1, 0);
  g.adj.clear();
  g.adj.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0 && keys[i] == keys[i - 1]) continue;
    ++g.offsets[(keys[i] >> target_bits) + 1];
    g.adj.push_back(static_cast<vertex>(keys[i] & target_mask));
  }
  for (std::size_t i = 1; i < g.offsets.size(); ++i) g.offsets[i] += g.offsets[i - 1];
  g.adj.shrink_to_fit();
}

/// Queues both arcs of every non-self-loop edge of `edges` to their owners.
inline void route_arcs(const block_distribution& dist, int target_bits,
                       const std::vector<shoal_apps::edge>& edges,
                       alltoallv_exchange<std::uint64_t>& ex) {
  const auto key = [&](std::int64_t from, std::int64_t to, int owner) {
    return static_cast<std::uint64_t>(from - dist.first(owner)) << target_bits |
           static_cast<std::uint64_t>(to);
  };
  for (const shoal_apps::edge& e : edges) {
    if (e.u == e.v) continue;  // a self-loop never helps a search
    const int ou = dist.owner(static_cast<std::uint64_t>(e.u));
    const int ov = dist.owner(static_cast<std::uint64_t>(e.v));
    ex.push(ou, key(e.u, e.v, ou));
    ex.push(ov, key(e.v, e.u, ov));
  }
}

/// Collective over `comm`: routes this rank's slice of the input edges, read
/// through `source` in rounds of `batch`, and returns the arc keys received.
inline std::vector<std::uint64_t> gather_arcs(const block_distribution& dist, int rank,
                                              std::int64_t total_edges, const edge_source& source,
                                              MPI_Comm comm, std::int64_t batch) {
  const int ranks = dist.ranks();
  const int target_bits = width(dist.vertices());
  const std::int64_t lo = slice_start(total_edges, ranks, rank);
  const std::int64_t hi = slice_start(total_edges, ranks, rank + 1);
  // Every rank runs as many rounds as the largest slice needs: exchange() is collective.
  const std::int64_t largest = (total_edges + ranks - 1) / ranks;
  const std::int64_t rounds = (largest + batch - 1) / batch;
  alltoallv_exchange<std::uint64_t> ex(comm);
  std::vector<shoal_apps::edge> edges;
  std::vector<std::uint64_t> keys;
  // About two arcs per edge of the slice arrive here (relabelled vertices spread evenly).
  keys.reserve(static_cast<std::size_t>(2 * largest + largest / 8));
  for (std::int64_t k = 0; k < rounds; ++k) {
    edges.clear();
    const std::int64_t a = std::min(hi, lo + k * batch);
    const std::int64_t b = std::min(hi, a + batch);
    if (a < b) source(a, b, edges);
    route_arcs(dist, target_bits, edges, ex);
    const auto in = ex.exchange();
    keys.insert(keys.end(), in.begin(), in.end());
  }
  return keys;
}

}  // namespace detail

/// Collective over `comm`: builds this rank's CSR from its slice of the
/// `total_edges` input edges, read through `source` in rounds of `batch`
/// edges. The graph must have at most max_vertices vertices.
inline local_graph build_local_graph(const block_distribution& dist, std::int64_t total_edges,
                                     const edge_source& source, MPI_Comm comm,
                                     std::int64_t batch = std::int64_t{1} << 22) {
  local_graph g{dist, 0, {}, {}};
  MPI_Comm_rank(comm, &g.rank);
  std::vector<std::uint64_t> keys =
      detail::gather_arcs(dist, g.rank, total_edges, source, comm, batch);
  const int target_bits = detail::width(dist.vertices());
  {
    std::vector<std::uint64_t> tmp;
    detail::radix_sort(keys, tmp, target_bits + detail::width(g.count()));
  }
  detail::fill_rows(g, keys, target_bits);
  return g;
}

}  // namespace shoal_baseline
