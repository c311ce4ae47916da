// The default variant: level-synchronous BFS over a typed channel.
//
// Per level, every core scans the rows of its frontier. A neighbour it owns
// is claimed at once; any other goes to its owner as a bare (local index,
// parent) value on the channel (8 bytes with 32-bit ids), and the owner's
// handler claims it if it is still unvisited. Every claim made while level L
// is expanded is at level L+1, so the parent array is a BFS tree. A level
// ends with the channel's depth-one phase (channel::end_phase_depth(1):
// every value sent to this core in the level handled) and a sum of the
// claims, and the search ends when a level claims nothing anywhere.
//
// A core's `seen` bits mark the vertices it owns that are claimed. With the
// sender filter they also mark the other vertices it has already sent in
// this search, and it never sends one twice: its owner claims it in that
// level at the latest.
#include <bit>

#include "bfs/search.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

namespace {

template <class V>
inline shoal::channel<visit<V>> g_visit_channel;  // opened on rank 0, captured by value

/// The channel's handler: the owner claims each arriving vertex unless it
/// is already seen, a whole batch at a time (core_state::claim).
template <class V>
struct claim_visits {
  void operator()(const visit<V>& m) const { g_state<V>.local().claim({&m, 1}); }
  void deliver_run(const visit<V>* values, std::uint32_t n) const {
    g_state<V>.local().claim({values, n});
  }
};

/// The first of [p, end) whose bit in `seen` is clear, or `end`. Most
/// neighbours in a big level are already seen: this loop is most of a
/// search's instructions, kept to a load, a bit test and the loop step.
/// Out of line: inlined, it shares registers with the send path below and
/// the compiler moves work of the claim into it (12 instructions a test
/// instead of 7; callgrind, 2 x 1, scale 16).
template <class V>
[[gnu::noinline]] const V* skip_seen(const V* p, const V* end, const std::uint64_t* seen) {
  // Unrolled by four, counted: one loop step per four tests.
  for (std::ptrdiff_t quads = (end - p) / 4; quads > 0; --quads, p += 4) {
    if (!bitmap::test(seen, p[0])) return p;
    if (!bitmap::test(seen, p[1])) return p + 1;
    if (!bitmap::test(seen, p[2])) return p + 2;
    if (!bitmap::test(seen, p[3])) return p + 3;
  }
  while (p != end && bitmap::test(seen, *p)) ++p;
  return p;
}

/// Scans the frontier's rows: own neighbours claimed at once, others sent
/// to their owners.
template <class V, bool Filter>
void expand(core_state<V>& st, const shoal::channel<visit<V>>& ch) {
  // Everything the loop reads is copied into locals first: stores into the
  // bitmaps (64-bit words) could otherwise alias the 64-bit fields of st and
  // its distribution and force a reload of each after every store. Handlers
  // that run while a send yields set bits in `seen` and `next` and count
  // their claims in st.next_size; none moves the arrays named here.
  const vertex_distribution dist = st.dist;
  const int me = st.me;
  const std::uint64_t* offsets = st.offsets.data();
  const V* adj = st.adj.data();
  const std::uint64_t* frontier = st.frontier.words();
  const std::size_t words = st.frontier.word_count();
  std::uint64_t* seen = st.seen.words();
  std::uint64_t* next = st.next.words();
  V* tree = st.tree.data();
  std::int64_t claimed = 0;
  yield_every pacing;
  for (std::size_t fw = 0; fw < words; ++fw) {
    for (std::uint64_t bits = frontier[fw]; bits != 0; bits &= bits - 1) {
      const std::uint64_t u = fw * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
      const auto parent = static_cast<V>(dist.global(me, u));
      const V* const end = adj + offsets[u + 1];
      // With the filter every neighbour is tested first (own ones are
      // claimed by the same bit): most are already seen, and the owner
      // test, a coin toss, is then skipped (no misprediction). Without
      // the filter only own neighbours are tested.
      for (const V* p = adj + offsets[u]; (Filter ? (p = skip_seen(p, end, seen)) : p) != end;
           ++p) {
        const V w = *p;
        if (Filter) bitmap::set(seen, w);
        const int owner = dist.packed_owner(w);
        const std::uint64_t l = dist.packed_local(w);
        if (owner == me) {
          if (!Filter && bitmap::test_and_set(seen, w)) continue;
          tree[l] = parent;
          bitmap::set(next, l);
          ++claimed;
          continue;
        }
        ch.send(owner, visit<V>{static_cast<V>(l), parent});
        pacing.tick();
      }
    }
  }
  st.next_size += claimed;
}

template <class V>
void search_levels(std::uint64_t root, bool filter, shoal::channel<visit<V>> ch) {
  core_state<V>& st = g_state<V>.local();
  st.start_at(root);
  // Values sent while level L is expanded land in `next`, even on a core
  // that has not started its task yet; `next` becomes the frontier after the
  // level's values have all been handled and before the sum (a barrier)
  // lets any core start the next level, so it never mixes two levels.
  //
  // Handlers send nothing, so every value is at depth 1: end_phase_depth(1)
  // returns once this core has handled every value sent to it in the level
  // (one round marker from each core, behind its values), which is all that
  // `next` needs before advance(); the sum, a collective, then holds every
  // core until all have. end_phase() would count the level's values
  // job-wide instead: an arrival at global core 0, two or more waves
  // through every process and a release, where the markers take one hop
  // (empty, at 2 x 1: 3.7 us against 1.1 us, tests/mpi/dist_phases
  // CostOfEmptyBarrierAndEndPhase; a level's end waits on its last values
  // too, which costs both the same).
  for (;;) {
    expand_top_down(st, ch, filter);
    ch.end_phase_depth(1);
    if (shoal::allreduce_sum(st.advance()) == 0) return;
  }
}

}  // namespace

template <class V>
void expand_top_down(core_state<V>& st, const shoal::channel<visit<V>>& ch, bool filter) {
  if (filter)
    expand<V, true>(st, ch);
  else
    expand<V, false>(st, ch);
}

template <class V>
shoal::channel<visit<V>> visit_channel() {
  return g_visit_channel<V>;
}

template <class V>
void open_channel_variant() {
  if (g_visit_channel<V>) return;
  g_visit_channel<V> = shoal::make_channel<visit<V>>(claim_visits<V>{});
}

template <class V>
void close_channel_variant() {
  g_visit_channel<V>.close();
}

template <class V>
void search_channel(const search_setup& s, std::uint64_t root) {
  const bool filter = s.sender_filter;
  const shoal::channel<visit<V>> ch = g_visit_channel<V>;
  shoal::on_all_cores([root, filter, ch] { search_levels<V>(root, filter, ch); });
}

template void expand_top_down<std::uint32_t>(core_state<std::uint32_t>&,
                                             const shoal::channel<visit<std::uint32_t>>&, bool);
template void expand_top_down<std::uint64_t>(core_state<std::uint64_t>&,
                                             const shoal::channel<visit<std::uint64_t>>&, bool);
template shoal::channel<visit<std::uint32_t>> visit_channel<std::uint32_t>();
template shoal::channel<visit<std::uint64_t>> visit_channel<std::uint64_t>();
template void open_channel_variant<std::uint32_t>();
template void open_channel_variant<std::uint64_t>();
template void close_channel_variant<std::uint32_t>();
template void close_channel_variant<std::uint64_t>();
template void search_channel<std::uint32_t>(const search_setup&, std::uint64_t);
template void search_channel<std::uint64_t>(const search_setup&, std::uint64_t);

}  // namespace shoal_apps::bfs
