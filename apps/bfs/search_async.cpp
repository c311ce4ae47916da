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
//
// --reduce min (Active Pebbles' message reduction, by the library): the
// relaxations travel on a target channel over the packed vertex ids with
// reduction::min on the level, so two relaxations of one vertex staged on a
// core at the same time travel as the better one; the channel's local
// short-circuit replaces the owner == me test. Counts of removed messages:
// last_reduction_counts().
//
// --routing hypercube|node (Active Pebbles' active routing): relaxations
// travel on a target channel (reducing with --reduce min, else not) whose
// values between processes follow the routing (routing.hpp: hops forward on
// the same channel, so its end_phase counts values in transit, and --reduce
// min applies again at every hop). Values forwarded at hops:
// last_reduction_counts().forwarded.
#include <bit>

#include "bfs/search.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::bfs {

namespace {

template <class V>
inline shoal::channel<relax<V>> g_relax_channel;

/// A relaxation's payload on the reducing channel; ordered by level, so
/// reduction::min keeps the better one (and its parent).
template <class V>
struct level_parent {
  V level;
  V parent;
  friend bool operator<(const level_parent& a, const level_parent& b) { return a.level < b.level; }
};

/// Packed vertex ids (vertex_distribution::pack) as targets: the owner in
/// the high bits, the local index in the low ones.
struct packed_targets {
  std::uint64_t mask = 0;
  int bits = 0;
  shoal::target_location locate(std::uint64_t t) const noexcept {
    return {static_cast<int>(t >> bits), t & mask};
  }
  const char* name() const noexcept { return "bfs packed vertex ids"; }
};

template <class V>
using min_channel = shoal::target_channel<level_parent<V>, packed_targets, shoal::reduction::min,
                                          shoal::named_routing>;
/// --routing without --reduce: routed, not reduced.
template <class V>
using routed_channel = shoal::target_channel<level_parent<V>, packed_targets,
                                             shoal::reduction::none, shoal::named_routing>;
/// Every core's copy of the --reduce min channel (set for the searches).
template <class V>
inline thread_local min_channel<V> tls_min;
template <class V>
inline thread_local routed_channel<V> tls_routed;

reduction_counts g_counts;
/// This process's traffic to MPI when the routed or reducing channel opened.
shoal::network_traffic g_traffic_at_open;

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
  const bool reducing = static_cast<bool>(tls_min<V>);
  const bool routed = static_cast<bool>(tls_routed<V>);
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
      if (reducing) {
        tls_min<V>.send(w, level_parent<V>{level, parent});
        pacing.tick();
        continue;
      }
      if (routed) {
        tls_routed<V>.send(w, level_parent<V>{level, parent});
        pacing.tick();
        continue;
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
    if (tls_min<V>) {
      tls_min<V>.end_phase();
    } else if (tls_routed<V>) {
      tls_routed<V>.end_phase();
    } else {
      ch.end_phase();
    }
    const auto queued = static_cast<std::int64_t>(st.work.size() - st.work_head);
    if (shoal::allreduce_sum(queued) == 0) return;
  }
}

}  // namespace

template <class V>
void open_async_variant(const search_setup& s) {
  if (g_relax_channel<V>) return;
  g_relax_channel<V> = shoal::make_channel<relax<V>>(
      [](const relax<V>& m) { relax_local(g_state<V>.local(), m.local, m.level, m.parent); });
  g_counts = {};
  const bool routed = s.routing.which != shoal::named_routing::kind::direct;
  if (!s.reduce_min && !routed) return;
  shoal::on_all_cores([] {
    if (shoal::mycore() % shoal::local_cores() == 0)
      g_traffic_at_open = shoal::local_network_traffic();
  });
  const vertex_distribution& dist = g_state<V>.local().dist;
  const std::uint64_t mask = dist.packed_local(~std::uint64_t{0});
  const packed_targets targets{mask, std::popcount(mask)};
  const auto on_relax = [](std::uint64_t local, const level_parent<V>& m) {
    relax_local(g_state<V>.local(), static_cast<V>(local), m.level, m.parent);
  };
  if (!s.reduce_min) {
    const auto ch = shoal::make_target_channel<level_parent<V>>(
        targets, on_relax, {}, shoal::reduction::none{}, s.routing);
    shoal::on_all_cores([ch] { tls_routed<V> = ch; });
    return;
  }
  const auto ch = shoal::make_target_channel<level_parent<V>>(
      targets, on_relax, {.cache_slots = s.cache_slots}, shoal::reduction::min{}, s.routing);
  shoal::on_all_cores([ch] { tls_min<V> = ch; });
}

/// Job-wide counts of `ch` into g_counts. SPMD (every core).
template <class Channel>
void take_counts(const Channel& ch) {
  // One core per process adds its process's counts.
  const bool first = shoal::mycore() % shoal::local_cores() == 0;
  const shoal::reduction_stats r = ch.local_reduction_stats();
  const std::uint64_t f = ch.local_route_stats().forwarded;
  const auto lookups = shoal::allreduce_sum(first ? static_cast<std::int64_t>(r.lookups) : 0);
  const auto hits = shoal::allreduce_sum(first ? static_cast<std::int64_t>(r.hits) : 0);
  const auto forwarded = shoal::allreduce_sum(first ? static_cast<std::int64_t>(f) : 0);
  shoal::network_traffic t;
  if (first) t = shoal::local_network_traffic();
  const auto mpi_messages =
      shoal::allreduce_sum(first ? static_cast<std::int64_t>(t.network_buffers_sent -
                                                             g_traffic_at_open.network_buffers_sent)
                                 : 0);
  const auto mpi_bytes = shoal::allreduce_sum(
      first ? static_cast<std::int64_t>(t.bytes - g_traffic_at_open.bytes) : 0);
  if (shoal::mycore() == 0) g_counts = {lookups, hits, forwarded, mpi_messages, mpi_bytes};
}

template <class V>
void close_async_variant() {
  g_relax_channel<V>.close();
  if (tls_routed<V>) {
    shoal::on_all_cores([] { take_counts(tls_routed<V>); });
    routed_channel<V> ch = tls_routed<V>;
    ch.close();
    shoal::on_all_cores([] { tls_routed<V> = routed_channel<V>(); });
  }
  if (!tls_min<V>) return;
  shoal::on_all_cores([] { take_counts(tls_min<V>); });
  min_channel<V> ch = tls_min<V>;
  ch.close();
  shoal::on_all_cores([] { tls_min<V> = min_channel<V>(); });
}

template <class V>
void search_async(const search_setup& s, std::uint64_t root) {
  const bool filter = s.sender_filter;
  const shoal::channel<relax<V>> ch = g_relax_channel<V>;
  shoal::on_all_cores([root, filter, ch] { search_until_quiet<V>(root, filter, ch); });
}

reduction_counts last_reduction_counts() { return g_counts; }

template void open_async_variant<std::uint32_t>(const search_setup&);
template void open_async_variant<std::uint64_t>(const search_setup&);
template void close_async_variant<std::uint32_t>();
template void close_async_variant<std::uint64_t>();
template void search_async<std::uint32_t>(const search_setup&, std::uint64_t);
template void search_async<std::uint64_t>(const search_setup&, std::uint64_t);

}  // namespace shoal_apps::bfs
