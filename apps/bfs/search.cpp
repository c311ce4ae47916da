// Setting the cores up for searches, resetting them before each one, and
// gathering the parent array on rank 0 afterwards.
#include "bfs/search.hpp"

#include <algorithm>
#include <array>

namespace shoal_apps::bfs {

std::vector<std::string> variant_names() {
  return {"channel", "async", "delegate", "queue", "hybrid"};
}

variant variant_named(const std::string& name) {
  if (name == "async") return variant::async;
  if (name == "delegate") return variant::delegate;
  if (name == "queue") return variant::queue;
  if (name == "hybrid") return variant::hybrid;
  return variant::channel;
}

namespace {
/// Clears what a search reads as "nothing visited yet", on the calling core.
/// Done after the previous search (untimed, with the parents): clearing at
/// the start of a search would need one more barrier, since a core's first
/// claims may reach another core before that core has started.
template <class V>
void reset_core(core_state<V>& st) {
  st.seen.clear();
  st.frontier.clear();
  st.next.clear();
  st.next_size = 0;
  st.parity_size[0] = st.parity_size[1] = 0;
  std::fill(st.level.begin(), st.level.end(), core_state<V>::unreached);
  std::fill(st.sent_level.begin(), st.sent_level.end(), core_state<V>::unreached);
  st.queued.clear();
  st.work.clear();
  st.work_head = 0;
  st.inbox.clear();
  for (visit_batch<V>& b : st.outbox) b.count = 0;
}
}  // namespace

template <class V>
void prepare_searches(variant v, const search_setup& s) {
  shoal::on_all_cores([v, s] {
    core_state<V>& st = g_state<V>.local();
    const std::int64_t n = st.count();
    st.parent = (s.parents + static_cast<std::int64_t>(st.dist.global(st.me, 0))).local();
    st.in_global = v == variant::delegate;
    st.tree.assign(st.in_global ? 0 : static_cast<std::size_t>(n), core_state<V>::unreached);
    st.clear_parents();
    st.seen.resize(static_cast<std::int64_t>(st.dist.packed_range()));
    st.frontier.resize(n);
    st.next.resize(n);
    if (v == variant::async) {
      st.level.assign(static_cast<std::size_t>(n), core_state<V>::unreached);
      st.queued.resize(n);
      st.sent_level.assign(s.sender_filter ? static_cast<std::size_t>(st.dist.packed_range()) : 0,
                           core_state<V>::unreached);
    }
    if (v == variant::queue) st.outbox.assign(static_cast<std::size_t>(shoal::cores()), {});
    reset_core(st);
  });
  if (v == variant::channel || v == variant::hybrid) open_channel_variant<V>();
  if (v == variant::async) open_async_variant<V>(s);
  if (v == variant::queue) open_queue_variant<V>();
}

template <class V>
void search(variant v, const search_setup& s, std::uint64_t root) {
  switch (v) {
    case variant::channel:
      return search_channel<V>(s, root);
    case variant::async:
      return search_async<V>(s, root);
    case variant::delegate:
      return search_delegate<V>(s, root);
    case variant::queue:
      return search_queue<V>(s, root);
    case variant::hybrid:
      return search_hybrid<V>(s, root);
  }
}

namespace {
/// Rank 0's copy of the parent array during a gather, and how many values
/// other processes have sent into it (core 0 of rank 0 only).
std::vector<std::int64_t>* g_gather_target = nullptr;
std::int64_t g_gather_received = 0;

// Values per gather message: the closure stays within shoal's 256 bytes.
constexpr int gather_chunk = 28;

template <class V>
void send_slice_to_rank0(const core_state<V>& st) {
  const int me = st.me;
  for (std::int64_t l0 = 0; l0 < st.count(); l0 += gather_chunk) {
    std::array<std::int64_t, gather_chunk> values{};
    const auto n = static_cast<int>(std::min<std::int64_t>(gather_chunk, st.count() - l0));
    for (int i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = st.parent_of(l0 + i);
    shoal::send(0, [me, l0, n, values] {
      const vertex_distribution& dist = g_state<V>.local().dist;  // the same on every core
      for (int i = 0; i < n; ++i)
        (*g_gather_target)[dist.global(me, static_cast<std::uint64_t>(l0 + i))] =
            values[static_cast<std::size_t>(i)];
      g_gather_received += n;
    });
  }
}
}  // namespace

template <class V>
void gather_parents(std::vector<std::int64_t>* out) {
  g_gather_target = out;
  g_gather_received = 0;
  const vertex_distribution& dist = g_state<V>.local().dist;
  std::int64_t remote = 0;  // vertices of the other processes' cores
  for (int c = shoal::local_cores(); c < shoal::cores(); ++c) remote += dist.local_count(c);
  shoal::on_all_cores([] {
    core_state<V>& st = g_state<V>.local();
    if (shoal::myrank() == 0) {
      for (std::int64_t l = 0; l < st.count(); ++l)
        (*g_gather_target)[st.dist.global(st.me, static_cast<std::uint64_t>(l))] = st.parent_of(l);
    } else {
      send_slice_to_rank0(st);
    }
    st.clear_parents();
    reset_core(st);
  });
  // Each process's values travel ahead of its completion, but counting them
  // does not depend on that order. Core 0 handles them between yields.
  while (g_gather_received < remote) shoal::yield();
}

template <class V>
void finish_searches() {
  close_channel_variant<V>();
  close_async_variant<V>();
  close_queue_variant<V>();
}

#define SHOAL_BFS_INSTANTIATE(V)                                        \
  template void prepare_searches<V>(variant, const search_setup&);      \
  template void search<V>(variant, const search_setup&, std::uint64_t); \
  template void gather_parents<V>(std::vector<std::int64_t>*);          \
  template void finish_searches<V>();
SHOAL_BFS_INSTANTIATE(std::uint32_t)
SHOAL_BFS_INSTANTIATE(std::uint64_t)
#undef SHOAL_BFS_INSTANTIATE

}  // namespace shoal_apps::bfs
