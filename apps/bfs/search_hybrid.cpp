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
// all local: no message travels. The scan walks this core's vertices 64 at
// a time, taking only those neither visited nor without arcs (Kronecker
// graphs have many of the latter, never reached): late bottom-up levels,
// where most vertices are visited, cost a pass over the bitmaps rather than
// one test per vertex. The search returns to top-down when the frontier has
// fewer than 1/beta of the vertices and has stopped growing, and goes
// bottom-up only while the frontier grows: at the end of a search the
// unvisited arcs are those of other components, few, and a shrinking
// frontier's few arcs would otherwise pass the alpha test and cost a scan
// of every vertex for a handful of claims. alpha = 14 and beta = 24 are the
// paper's values.
//
// Each level ends with one allreduce of the next frontier's size, the arcs
// of its rows (counted while claiming in a bottom-up level) and the arcs
// examined; every core makes the same choice from the same sums.
#include <algorithm>
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

/// What the bottom-up scan keeps between searches on each core: which own
/// vertices have arcs at all (built once per graph). Vertices without arcs
/// are never reached, yet Kronecker graphs have many; the scan skips them
/// 64 at a time with the visited ones instead of testing each.
struct scan_scratch {
  std::uint64_t graph_id = 0;  ///< core_state::graph_id the mask was built for
  bitmap has_arcs;             ///< over local indices
};
shoal::per_core<scan_scratch> g_scratch;

template <class V>
const bitmap& arcs_mask(const core_state<V>& st) {
  scan_scratch& x = g_scratch.local();
  if (x.graph_id != st.graph_id) {
    x.graph_id = st.graph_id;
    x.has_arcs.resize(st.count());
    for (std::int64_t l = 0; l < st.count(); ++l)
      if (st.offsets[static_cast<std::size_t>(l) + 1] != st.offsets[static_cast<std::size_t>(l)])
        x.has_arcs.set(static_cast<std::uint64_t>(l));
  }
  return x.has_arcs;
}

/// Bits [64 w, 64 w + 64) of this core's own vertices in `seen` (packed ids
/// from `first`, which is a multiple of 64 unless a core has fewer than 64
/// vertices).
inline std::uint64_t own_word(const std::uint64_t* seen, std::size_t seen_words,
                              std::uint64_t first, std::size_t w) noexcept {
  const std::size_t at = static_cast<std::size_t>(first >> 6) + w;
  const unsigned shift = first & 63;
  if (shift == 0) return seen[at];
  const std::uint64_t hi = at + 1 < seen_words ? seen[at + 1] << (64 - shift) : 0;
  return (seen[at] >> shift) | hi;
}

/// One bottom-up level: each unvisited own vertex takes the first frontier
/// vertex among its neighbours as its parent. Returns the arcs examined and
/// the arcs of the vertices claimed (the next frontier's rows).
template <class V>
std::array<std::int64_t, 2> step_bottom_up(core_state<V>& st, const bitmap& frontier_all,
                                           const bitmap& has_arcs) {
  const vertex_distribution dist = st.dist;
  const std::uint64_t* offsets = st.offsets.data();
  const V* adj = st.adj.data();
  const std::uint64_t* in_frontier = frontier_all.words();
  std::uint64_t* seen = st.seen.words();
  const std::size_t seen_words = st.seen.word_count();
  std::uint64_t* next = st.next.words();
  const std::uint64_t* arcs_words = has_arcs.words();
  const std::size_t words = has_arcs.word_count();
  V* tree = st.tree.data();
  const std::uint64_t mine = dist.packed(st.me, 0);
  std::int64_t examined = 0;
  std::int64_t claimed = 0;
  std::int64_t claimed_arcs = 0;
  // Candidates (unvisited vertices with arcs) are listed a batch at a time,
  // so that each row's start can be prefetched a fixed number of candidates
  // ahead: visited rows are skipped, the hardware prefetcher loses the
  // stream, and each row's start would be a cache miss.
  constexpr std::size_t batch = 256;
  constexpr std::size_t ahead = 16;
  std::uint64_t cand[batch];
  for (std::size_t w = 0; w < words;) {
    std::size_t k = 0;
    for (; w < words && k + 64 <= batch; ++w)
      for (std::uint64_t bits = arcs_words[w] & ~own_word(seen, seen_words, mine, w); bits != 0;
           bits &= bits - 1)
        cand[k++] = w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
    for (std::size_t i = 0; i < std::min(k, ahead); ++i) __builtin_prefetch(adj + offsets[cand[i]]);
    for (std::size_t i = 0; i < k; ++i) {
      if (i + ahead < k) __builtin_prefetch(adj + offsets[cand[i + ahead]]);
      const std::uint64_t l = cand[i];
      const std::uint64_t begin = offsets[l];
      const std::uint64_t end = offsets[l + 1];
      std::uint64_t j = begin;
      while (j < end && ((in_frontier[adj[j] >> 6] >> (adj[j] & 63)) & 1) == 0) ++j;
      if (j == end) {
        examined += static_cast<std::int64_t>(end - begin);
        continue;
      }
      examined += static_cast<std::int64_t>(j - begin) + 1;
      tree[l] = static_cast<V>(dist.unpack(adj[j]));
      bitmap::set(seen, mine + l);
      bitmap::set(next, l);
      ++claimed;
      claimed_arcs += static_cast<std::int64_t>(end - begin);
    }
  }
  st.next_size += claimed;
  // The frontier is visited everywhere: the sender filter may skip it too.
  for (std::size_t w = 0; w < seen_words; ++w) seen[w] |= in_frontier[w];
  return {examined, claimed_arcs};
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
  const bitmap& has_arcs = arcs_mask(st);
  st.start_at(root);
  bitmap frontier_all;
  // [0] frontier vertices, [1] their arcs, [2] arcs examined, [3] all arcs
  std::array<std::int64_t, 4> sums{st.dist.owner(root) == st.me ? 1 : 0, frontier_arcs(st), 0,
                                   static_cast<std::int64_t>(st.adj.size())};
  shoal::allreduce_sum(std::span<std::int64_t>(sums));
  const std::int64_t vertices = st.dist.vertices();
  std::int64_t unvisited_arcs = sums[3] - sums[1];
  std::int64_t previous_size = 0;
  bool bottom_up = false;
  direction_counts c;
  for (;;) {
    const std::int64_t frontier_size = sums[0];
    const std::int64_t arcs = sums[1];
    // Down to up only while the frontier grows: near the end of a search
    // the unvisited arcs are those of other components, few, and a small
    // frontier would otherwise trigger a scan of every vertex for nothing.
    if (!bottom_up && arcs > unvisited_arcs / alpha && frontier_size > previous_size)
      bottom_up = true;
    else if (bottom_up && frontier_size < vertices / beta && frontier_size <= previous_size)
      bottom_up = false;
    previous_size = frontier_size;
    std::int64_t examined = 0;
    std::int64_t next_arcs = 0;
    if (bottom_up) {
      if (frontier_all.word_count() == 0)
        frontier_all.resize(static_cast<std::int64_t>(st.dist.packed_range()));
      gather_frontier(st, frontier_all);
      const std::array<std::int64_t, 2> r = step_bottom_up(st, frontier_all, has_arcs);
      examined = r[0];
      next_arcs = r[1];
      ++c.bottom_up_levels;
      sums = {st.advance(), next_arcs, examined, 0};
    } else {
      expand_top_down(st, ch, filter);
      ch.end_phase();
      c.edges_examined += arcs;  // every arc of the frontier's rows
      ++c.top_down_levels;
      // Claims arrive in handlers too: the new frontier's arcs are counted
      // from its bitmap.
      sums = {st.advance(), 0, 0, 0};
      sums[1] = frontier_arcs(st);
    }
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
