// Frontier queues in the UPC-queues pattern (UPC queues, section 6).
//
// Each core owns a queue of claim requests for its vertices. While a level
// is expanded, a core appends each request for another core to that core's
// outgoing batch (per-destination aggregation in the application, as with
// UPC's local buffers), and a full batch is enqueued into the owner's queue
// in one bulk operation: a typed-channel message whose handler only appends
// the batch to the queue, without looking at it. Once every batch of the
// level has been handled (the channel's end_phase), each owner drains its
// queue, claiming the still-unvisited vertices into its next frontier. Own
// neighbours are claimed at once, as in the other variants.
#include "bfs/search.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

namespace {

template <class V>
inline shoal::channel<visit_batch<V>> g_batch_channel;

template <class V>
void ship(core_state<V>& st, const shoal::channel<visit_batch<V>>& ch, int owner) {
  visit_batch<V>& b = st.outbox[static_cast<std::size_t>(owner)];
  ch.send(owner, b);
  b.count = 0;
}

template <class V>
void enqueue(core_state<V>& st, const shoal::channel<visit_batch<V>>& ch, int owner, visit<V> m) {
  visit_batch<V>& b = st.outbox[static_cast<std::size_t>(owner)];
  b.items[b.count++] = m;
  if (b.count == visit_batch<V>::capacity) ship(st, ch, owner);
}

template <class V>
void expand(core_state<V>& st, const shoal::channel<visit_batch<V>>& ch, bool filter) {
  const vertex_distribution dist = st.dist;
  yield_every pacing;
  st.frontier.for_each_set(0, st.frontier.word_count(), [&](std::uint64_t u) {
    const auto parent = static_cast<V>(dist.global(st.me, u));
    for (std::uint64_t i = st.offsets[u], end = st.offsets[u + 1]; i < end; ++i) {
      const V w = st.adj[i];
      // Filter first: most neighbours are already seen, and the owner test,
      // a coin toss, is then skipped (no misprediction).
      if (filter && st.seen.test_and_set(w)) continue;
      const int owner = dist.packed_owner(w);
      const auto l = static_cast<V>(dist.packed_local(w));
      if (owner == st.me) {
        if (filter || !st.seen.test_and_set(w)) st.take(l, parent);
        continue;
      }
      enqueue(st, ch, owner, visit<V>{l, parent});
      pacing.tick();
    }
  });
  for (int c = 0; c < shoal::cores(); ++c)
    if (st.outbox[static_cast<std::size_t>(c)].count > 0) ship(st, ch, c);
}

template <class V>
void search_levels(std::uint64_t root, bool filter, shoal::channel<visit_batch<V>> ch) {
  core_state<V>& st = g_state<V>.local();
  st.start_at(root);
  for (;;) {
    expand(st, ch, filter);
    ch.end_phase();
    st.claim(st.inbox);
    st.inbox.clear();
    if (shoal::allreduce_sum(st.advance()) == 0) return;
  }
}

}  // namespace

template <class V>
void open_queue_variant() {
  if (g_batch_channel<V>) return;
  g_batch_channel<V> = shoal::make_channel<visit_batch<V>>([](const visit_batch<V>& b) {
    core_state<V>& st = g_state<V>.local();
    st.inbox.insert(st.inbox.end(), b.items, b.items + b.count);
  });
}

template <class V>
void close_queue_variant() {
  g_batch_channel<V>.close();
}

template <class V>
void search_queue(const search_setup& s, std::uint64_t root) {
  const bool filter = s.sender_filter;
  const shoal::channel<visit_batch<V>> ch = g_batch_channel<V>;
  shoal::on_all_cores([root, filter, ch] { search_levels<V>(root, filter, ch); });
}

template void open_queue_variant<std::uint32_t>();
template void open_queue_variant<std::uint64_t>();
template void close_queue_variant<std::uint32_t>();
template void close_queue_variant<std::uint64_t>();
template void search_queue<std::uint32_t>(const search_setup&, std::uint64_t);
template void search_queue<std::uint64_t>(const search_setup&, std::uint64_t);

}  // namespace shoal_apps::bfs
