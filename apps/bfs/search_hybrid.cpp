// The hybrid variant: direction-optimising BFS (Beamer, Asanovic and
// Patterson, SC 2012), level-synchronous like the channel variant.
//
// A top-down level is the channel variant's (expand_top_down): each core
// scans the rows of its frontier vertices and claims their neighbours. Once
// the frontier's rows hold more than 1/alpha of the arcs of unvisited
// vertices, a level goes bottom-up instead: each core looks, for each of
// its own unvisited vertices, through the vertex's row for a neighbour in
// the frontier and stops at the first; most rows are abandoned after a few
// arcs, which is where the search saves its work. The frontier is then
// needed whole on every core: every core's frontier bitmap is gathered
// (shoal::allgatherv) into a bitmap over packed ids, the layout of `seen`
// (distribution.hpp), as the distributed direction-optimising searches do
// (one bitmap exchange per bottom-up level). Claims of a bottom-up level are
// all local: no message travels. The search returns to top-down when the
// frontier has fewer than 1/beta of the vertices. alpha = 14 and beta = 24
// are the paper's values.
//
// Each level ends with one allreduce of the next frontier's size, the arcs
// of its rows and the arcs examined; every core makes the same choice from
// the same sums.
#include <array>
#include <bit>
#include <cstring>

#include "bfs/search.hpp"

namespace shoal_apps::bfs {

namespace {

constexpr std::int64_t alpha = 14;
constexpr std::int64_t beta = 24;

/// Sums over the job, kept by core 0 of rank 0 (where the root task runs).
direction_counts g_counts;

/// The whole frontier as a bitmap over packed ids: core c's frontier words
/// at bit c << local_bits. Every core builds its own copy.
template <class V>
void gather_frontier(core_state<V>& st, bitmap& all) {
  const shoal::gathered<std::uint64_t> g = shoal::allgatherv(
      std::span<const std::uint64_t>(st.frontier.words(), st.frontier.word_count()));
  const vertex_distribution& dist = st.dist;
  all.clear();
  for (int c = 0; c < dist.cores(); ++c) {
    const std::span<const std::uint64_t> part = g.part(c);
    const std::uint64_t first = dist.packed(c, 0);
    if (first % 64 == 0) {
      if (!part.empty())
        std::memcpy(all.words() + first / 64, part.data(), part.size() * sizeof(std::uint64_t));
      continue;
    }
    // Fewer than 64 vertices per core: bit by bit.
    for (std::size_t w = 0; w < part.size(); ++w)
      for (std::uint64_t bits = part[w]; bits != 0; bits &= bits - 1)
        all.set(first + w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
  }
}

/// One bottom-up level: each unvisited own vertex takes the first frontier
/// vertex among its neighbours as its parent. Returns the arcs examined.
template <class V>
std::int64_t step_bottom_up(core_state<V>& st, const bitmap& frontier_all) {
  const vertex_distribution dist = st.dist;
  const std::uint64_t* offsets = st.offsets.data();
  const V* adj = st.adj.data();
  const std::uint64_t* in_frontier = frontier_all.words();
  std::uint64_t* seen = st.seen.words();
  std::uint64_t* next = st.next.words();
  V* tree = st.tree.data();
  const std::uint64_t mine = dist.packed(st.me, 0);
  const auto n = static_cast<std::uint64_t>(st.count());
  std::int64_t examined = 0;
  std::int64_t claimed = 0;
  // The scan skips visited vertices' rows, so the hardware prefetcher loses
  // the stream and each row's start is a cache miss: prefetch the row start
  // 32 vertices ahead (1.3-1.5x the whole search at scale 20, 1 x 2; 16 and
  // 64 were within noise of 32).
  constexpr std::uint64_t ahead = 32;
  for (std::uint64_t l = 0; l < n; ++l) {
    if (l + ahead < n) __builtin_prefetch(adj + offsets[l + ahead]);
    const std::uint64_t p = mine + l;
    if (((seen[p >> 6] >> (p & 63)) & 1) != 0) continue;
    for (std::uint64_t i = offsets[l], end = offsets[l + 1]; i < end; ++i) {
      const V w = adj[i];
      ++examined;
      if (((in_frontier[w >> 6] >> (w & 63)) & 1) == 0) continue;
      tree[l] = static_cast<V>(dist.unpack(w));
      bitmap::set(seen, p);
      bitmap::set(next, l);
      ++claimed;
      break;
    }
  }
  st.next_size += claimed;
  // The frontier is visited everywhere: the sender filter may skip it too.
  const std::size_t words = st.seen.word_count();
  for (std::size_t w = 0; w < words; ++w) seen[w] |= in_frontier[w];
  return examined;
}

/// Arcs in the rows of this core's frontier.
template <class V>
std::int64_t frontier_arcs(const core_state<V>& st) {
  std::int64_t arcs = 0;
  const std::uint64_t* offsets = st.offsets.data();
  st.frontier.for_each_set(0, st.frontier.word_count(), [&](std::uint64_t l) {
    arcs += static_cast<std::int64_t>(offsets[l + 1] - offsets[l]);
  });
  return arcs;
}

template <class V>
void search_levels(std::uint64_t root, bool filter, shoal::channel<visit<V>> ch) {
  core_state<V>& st = g_state<V>.local();
  st.start_at(root);
  bitmap frontier_all;
  // [0] frontier vertices, [1] their arcs, [2] arcs examined, [3] all arcs
  std::array<std::int64_t, 4> sums{st.dist.owner(root) == st.me ? 1 : 0, frontier_arcs(st), 0,
                                   static_cast<std::int64_t>(st.adj.size())};
  shoal::allreduce_sum(std::span<std::int64_t>(sums));
  const std::int64_t vertices = st.dist.vertices();
  std::int64_t unvisited_arcs = sums[3] - sums[1];
  bool bottom_up = false;
  direction_counts c;
  for (;;) {
    const std::int64_t frontier_size = sums[0];
    const std::int64_t arcs = sums[1];
    if (!bottom_up && arcs > unvisited_arcs / alpha)
      bottom_up = true;
    else if (bottom_up && frontier_size < vertices / beta)
      bottom_up = false;
    std::int64_t examined = 0;
    if (bottom_up) {
      if (frontier_all.word_count() == 0)
        frontier_all.resize(static_cast<std::int64_t>(st.dist.packed_range()));
      gather_frontier(st, frontier_all);
      examined = step_bottom_up(st, frontier_all);
      ++c.bottom_up_levels;
    } else {
      expand_top_down(st, ch, filter);
      ch.end_phase();
      c.edges_examined += arcs;  // every arc of the frontier's rows
      ++c.top_down_levels;
    }
    sums = {st.advance(), frontier_arcs(st), examined, 0};
    shoal::allreduce_sum(std::span<std::int64_t>(sums));
    c.edges_examined += sums[2];
    unvisited_arcs -= sums[1];
    if (sums[0] == 0) break;
  }
  if (shoal::mycore() == 0) {
    ++g_counts.searches;
    g_counts.edges_examined += c.edges_examined;
    g_counts.top_down_levels += c.top_down_levels;
    g_counts.bottom_up_levels += c.bottom_up_levels;
  }
}

}  // namespace

direction_counts take_direction_counts() {
  const direction_counts c = g_counts;
  g_counts = direction_counts{};
  return c;
}

template <class V>
void search_hybrid(const search_setup& s, std::uint64_t root) {
  const bool filter = s.sender_filter;
  const shoal::channel<visit<V>> ch = visit_channel<V>();
  shoal::on_all_cores([root, filter, ch] { search_levels<V>(root, filter, ch); });
}

template void search_hybrid<std::uint32_t>(const search_setup&, std::uint64_t);
template void search_hybrid<std::uint64_t>(const search_setup&, std::uint64_t);

}  // namespace shoal_apps::bfs
