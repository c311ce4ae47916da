// Asynchronous label-correcting BFS (Active Pebbles, section 4.4).
//
// No level barrier: a relaxation (vertex, level, parent) travels to the
// vertex's owner over a typed channel; if it improves the vertex's level,
// the owner records level and parent and queues the vertex, and expanding a
// queued vertex relaxes its neighbours at its current level + 1. Levels only
// decrease, so they converge to the true BFS distances, and each vertex's
// last recorded parent is at one level less: the parent array is a BFS tree.
//
// Termination by rounds: a core whose queue is empty ends the channel's
// phase (channel::end_phase: every relaxation sent anywhere has been
// handled), then the cores sum the vertices their handlers queued meanwhile.
// Handlers only record and queue (they never send), so a zero sum means no
// relaxation is in flight and no queue holds work; a non-zero sum starts
// another round. A hub's fan-out thus runs in the core's task, under
// back-pressure.
#include "bfs/search.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

namespace {

template <class V>
inline shoal::channel<relax<V>> g_relax_channel;

template <class V>
void relax_local(core_state<V>& st, V l, V level, V parent) {
  if (level >= st.level[l]) return;
  st.level[l] = level;
  st.tree[l] = parent;
  if (!st.queued.test_and_set(l)) st.work.push_back(l);
}

/// Expands queued vertices until the queue is empty (relaxations that
/// arrive while a send waits for a buffer join the queue).
template <class V>
void drain(core_state<V>& st, const shoal::channel<relax<V>>& ch, bool filter) {
  const vertex_distribution dist = st.dist;
  yield_every pacing;
  while (st.work_head < st.work.size()) {
    const V u = st.work[st.work_head++];
    st.queued.reset(u);
    const auto level = static_cast<V>(st.level[u] + 1);
    const auto parent = static_cast<V>(dist.global(st.me, u));
    for (std::uint64_t i = st.offsets[u], end = st.offsets[u + 1]; i < end; ++i) {
      const V w = st.adj[i];
      if (filter) {
        if (st.sent_level[w] <= level) continue;  // sent at least as good already
        st.sent_level[w] = level;
      }
      const int owner = dist.packed_owner(w);
      const auto local = static_cast<V>(dist.packed_local(w));
      if (owner == st.me) {
        relax_local(st, local, level, parent);
      } else {
        ch.send(owner, relax<V>{local, level, parent});
        pacing.tick();
      }
    }
  }
  st.work.clear();
  st.work_head = 0;
}

template <class V>
void search_until_quiet(std::uint64_t root, bool filter, shoal::channel<relax<V>> ch) {
  core_state<V>& st = g_state<V>.local();
  if (st.dist.owner(root) == st.me)
    relax_local(st, static_cast<V>(st.dist.local(root)), V{0}, static_cast<V>(root));
  for (;;) {
    drain(st, ch, filter);
    shoal::flush();
    // Let relaxations already on their way in arrive before asking everyone.
    shoal::yield();
    if (st.work_head < st.work.size()) continue;
    ch.end_phase();
    const auto queued = static_cast<std::int64_t>(st.work.size() - st.work_head);
    if (shoal::allreduce_sum(queued) == 0) return;
  }
}

}  // namespace

template <class V>
void open_async_variant() {
  if (g_relax_channel<V>) return;
  g_relax_channel<V> = shoal::make_channel<relax<V>>(
      [](const relax<V>& m) { relax_local(g_state<V>.local(), m.local, m.level, m.parent); });
}

template <class V>
void close_async_variant() {
  g_relax_channel<V>.close();
}

template <class V>
void search_async(const search_setup& s, std::uint64_t root) {
  const bool filter = s.sender_filter;
  const shoal::channel<relax<V>> ch = g_relax_channel<V>;
  shoal::on_all_cores([root, filter, ch] { search_until_quiet<V>(root, filter, ch); });
}

template void open_async_variant<std::uint32_t>();
template void open_async_variant<std::uint64_t>();
template void close_async_variant<std::uint32_t>();
template void close_async_variant<std::uint64_t>();
template void search_async<std::uint32_t>(const search_setup&, std::uint64_t);
template void search_async<std::uint64_t>(const search_setup&, std::uint64_t);

}  // namespace shoal_apps::bfs
