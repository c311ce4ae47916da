// Grappa-style BFS with delegates (Grappa, section 6).
//
// The parent array lives in shoal's global memory. The root task runs the
// levels: for each one, every core splits its frontier into tasks, and a
// task sends, for each neighbour w of a frontier vertex u, an asynchronous
// delegate to w's entry of the parent array: at w's home core, "if
// parent[w] is -1, set it to u and add w to this core's next frontier",
// atomic there because delegates run one at a time on their home core. The
// delegates are counted by shoal's global completion event, so once every
// core's wait on it returns, the level is complete everywhere.
#include "bfs/search.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

namespace {

/// Sum of the frontier sizes of the current level (core 0 only).
std::int64_t g_level_total = 0;

// Frontier bitmap words per task (64 vertices each): enough tasks to share
// a core fairly, few enough that spawning them costs nothing next to their
// delegates.
constexpr std::size_t chunk_words = 16;

/// The frontier of levels of parity `p`. Level L is expanded from
/// frontier_of(L % 2) and claims into frontier_of((L + 1) % 2): a delegate
/// of level L may reach a core that has not started level L yet, and must
/// not mix with the frontier that core is about to expand.
template <class V>
bitmap& frontier_of(core_state<V>& st, int p) {
  return p == 0 ? st.frontier : st.next;
}

template <class V>
void expand_chunk(core_state<V>* st, shoal::global_ptr<std::int64_t> parents, int parity,
                  std::size_t first_word, std::size_t last_word, bool filter) {
  const vertex_distribution dist = st->dist;
  const int claim_parity = 1 - parity;
  yield_every pacing;
  frontier_of(*st, parity).for_each_set(first_word, last_word, [&](std::uint64_t u) {
    const auto parent = static_cast<std::int64_t>(dist.global(st->me, u));
    for (std::uint64_t i = st->offsets[u], end = st->offsets[u + 1]; i < end; ++i) {
      const V w = st->adj[i];
      if (filter && st->seen.test_and_set(w)) continue;
      const shoal::global_ptr<std::int64_t> target =
          parents + static_cast<std::int64_t>(dist.unpack(w));
      const auto local = static_cast<V>(dist.packed_local(w));
      shoal::delegate::post(
          target.core(),
          [target, parent, local, claim_parity] {
            std::int64_t* p = target.local();
            if (*p != -1) return;
            *p = parent;
            core_state<V>& owner = g_state<V>.local();
            frontier_of(owner, claim_parity).set(local);
            ++owner.parity_size[claim_parity];
          },
          shoal::default_gce());
      pacing.tick();
    }
  });
}

/// Level `level` on one core: report the frontier, expand it in tasks,
/// wait for this process's delegates, then empty the expanded frontier.
template <class V>
void run_level(shoal::global_ptr<std::int64_t> parents, int level, bool filter) {
  core_state<V>* st = &g_state<V>.local();
  const int parity = level % 2;
  const std::int64_t size = st->parity_size[parity];
  shoal::delegate::call(0, [size] { g_level_total += size; });
  const std::size_t words = frontier_of(*st, parity).word_count();
  const std::size_t tasks = size == 0 ? 0 : (words + chunk_words - 1) / chunk_words;
  shoal::completion_event done(static_cast<std::int64_t>(tasks));
  shoal::completion_event* d = &done;
  for (std::size_t t = 0; t < tasks; ++t) {
    const std::size_t lo = t * chunk_words;
    const std::size_t hi = std::min(words, lo + chunk_words);
    shoal::spawn([st, parents, parity, lo, hi, filter, d] {
      expand_chunk<V>(st, parents, parity, lo, hi, filter);
      d->complete();
    });
  }
  done.wait();
  shoal::default_gce().wait();
  frontier_of(*st, parity).clear();
  st->parity_size[parity] = 0;
}

}  // namespace

template <class V>
void search_delegate(const search_setup& s, std::uint64_t root) {
  const shoal::global_ptr<std::int64_t> parents = s.parents;
  const bool filter = s.sender_filter;
  shoal::delegate::call((parents + static_cast<std::int64_t>(root)).core(), [root] {
    core_state<V>& st = g_state<V>.local();
    st.start_at(root);  // into frontier_of(st, 0) and the global parent array
    st.parity_size[0] = 1;
  });
  for (int level = 0;; ++level) {
    g_level_total = 0;
    shoal::on_all_cores([parents, level, filter] { run_level<V>(parents, level, filter); });
    if (g_level_total == 0) return;
  }
}

template void search_delegate<std::uint32_t>(const search_setup&, std::uint64_t);
template void search_delegate<std::uint64_t>(const search_setup&, std::uint64_t);

}  // namespace shoal_apps::bfs
