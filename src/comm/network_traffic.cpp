// Traffic this process handed to other processes (routing.hpp's
// local_network_traffic): the aggregators' remote counters summed, and the
// network buffers the process allocated (its buffer memory toward other
// processes) and sent; local_network_peers: the distinct peer processes.
#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/near_send.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/routing.hpp"

#include <vector>

#include "comm/near_control.hpp"
#include "comm/network.hpp"

namespace shoal {

network_traffic local_network_traffic() {
  network_traffic t;
  for (int c = 0; c < detail::g_info.local_cores; ++c) {
    const auto r = detail::aggregator_of(c).remote();
    t.batches += r.batches;
    t.messages += r.messages;
    t.bytes += r.bytes;
  }
  if (detail::network* n = detail::this_network()) {
    t.network_buffers = n->buffers_allocated();
    t.network_buffers_sent = n->buffers_sent();
    t.network_buffers_peak = n->buffers_peak();
    t.coalescing_buffers_peak = n->open_peak();
    t.network_buffer_bytes = n->buffer_bytes();
  }
  return t;
}

void reset_network_buffers_peak() {
  if (detail::network* n = detail::this_network()) n->reset_buffers_peak();
}

void route_control_over_hypercube(bool on) noexcept {
  detail::g_control_over_hypercube.store(on, std::memory_order_relaxed);
}

namespace detail {

int near_next_core(int core) noexcept {
  const int dest_rank = core / g_info.local_cores;
  if (!g_control_over_hypercube.load(std::memory_order_relaxed) || dest_rank == g_info.rank)
    return core;
  const int next = hypercube_routing{}.next_rank(g_info.rank, dest_rank, g_info.ranks);
  return next == dest_rank ? core : next * g_info.local_cores + core % g_info.local_cores;
}

}  // namespace detail

std::uint64_t local_network_peers() {
  std::vector<bool> peers(static_cast<std::size_t>(detail::g_info.ranks), false);
  for (int c = 0; c < detail::g_info.local_cores; ++c) {
    // Between runs only: a core staging its first batch to a process grows
    // the vector read here.
    const std::vector<bool>& seen = detail::aggregator_of(c).peers_touched();
    for (std::size_t i = 0; i < seen.size() && i < peers.size(); ++i)
      if (seen[i]) peers[i] = true;
  }
  std::uint64_t n = 0;
  for (const bool p : peers) n += p ? 1 : 0;
  return n;
}

}  // namespace shoal
