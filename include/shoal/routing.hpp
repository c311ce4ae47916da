// Active routing (Active Pebbles 3.4): values of a target channel between
// processes follow a virtual topology instead of going straight to their
// owner's process, so that each process talks to few peers (fewer network
// buffers and MPI peers) and values from several sources meet, coalesce and
// reduce at intermediate hops.
//
//   auto ch = shoal::make_target_channel<std::uint64_t>(dist, handler, {},
//   shoal::reduction::none{},
//                                                      shoal::hypercube_routing{});
//
// A routing says, for this process and a destination process, which process
// the value goes to next (routing_like: next_rank(me, dest, ranks)):
//   direct_routing      straight to the owner's process (the default)
//   hypercube_routing   one bit of the rank at a time: first the bits `me` has
//                       and `dest` lacks are cleared, then `dest`'s missing bits
//                       are set, highest first; every hop stays below `ranks`
//                       (any process count, not only powers of two), at most
//                       ceil(log2 P) hops, and a process's peers are the ranks
//                       one bit away
//   node_routing{L}     two levels, L processes per node (the launcher's
//                       OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
//                       RANKS_PER_NODE, read by node_routing::from_launcher()):
//                       across nodes only between processes of the same local
//                       index, inside a node to any; at most 2 hops, and a
//                       process's peers are (L - 1) + (nodes - 1)
//   user-defined        any trivially copyable type with next_rank()
// Routing is between processes: inside a process a value goes to its owner
// core at once, and a value forwarded to another process goes to the core of
// the same local index there (the owner's, on the last hop).
//
// How a hop works. Each value travels with its owner core and local index.
// A batch arriving at a core that does not own a value hands it on to its
// next hop on the same channel (so the channel's end_phase and drain count
// it in transit, and reductions apply again at the hop, merging values from
// several sources); the handler runs only at the owner. Ordering between two
// values is not kept once they route (it never was between sources).
// Costs: a hop is a handler-context send (an overflow buffer under
// back-pressure, never a wait). target_channel::local_route_stats() counts
// the values this process forwarded.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace shoal {

/// A routing: trivially copyable, next_rank(me, dest, ranks) -> the process
/// after `me` on the way to `dest` (dest itself for the last hop), in
/// [0, ranks), never `me`.
template <class R>
concept routing_like = std::is_trivially_copyable_v<R> && requires(const R& r, int a) {
  { r.next_rank(a, a, a) } -> std::convertible_to<int>;
};

struct direct_routing {
  int next_rank(int, int dest, int) const noexcept { return dest; }
  static constexpr const char* name() noexcept { return "direct"; }
};

struct hypercube_routing {
  int next_rank(int me, int dest, int) const noexcept {
    const auto m = static_cast<unsigned>(me);
    const auto d = static_cast<unsigned>(dest);
    // Clearing bits only lowers the rank; then setting dest's bits keeps
    // every hop a subset of dest's bits, so below dest: all stay < ranks.
    if (const unsigned clear = m & ~d; clear != 0)
      return static_cast<int>(m ^ std::bit_floor(clear));
    return static_cast<int>(m | std::bit_floor(d & ~m));
  }
  static constexpr const char* name() noexcept { return "hypercube"; }
};

struct node_routing {
  int ranks_per_node = 1;
  int next_rank(int me, int dest, int ranks) const noexcept {
    const int l = ranks_per_node;
    if (me / l == dest / l || me % l == dest % l) return dest;
    // To the process of this node with dest's local index, which crosses;
    // from a partial last node without one, cross first to dest's node
    // (full, so it has this local index) and go inside it after.
    const int peer = me / l * l + dest % l;
    return peer < ranks ? peer : dest / l * l + me % l;
  }
  static constexpr const char* name() noexcept { return "node"; }
  /// Processes per node from the launcher's environment (1 when none says).
  static node_routing from_launcher() noexcept {
    for (const char* var : {"RANKS_PER_NODE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                            "SLURM_NTASKS_PER_NODE"}) {
      if (const char* v = std::getenv(var)) {
        const long n = std::strtol(v, nullptr, 10);
        if (n >= 1 && n <= 1 << 20) return {static_cast<int>(n)};
      }
    }
    return {1};
  }
};

/// A routing chosen at run time by name, for an application's --routing:
/// "direct", "hypercube" or "node" (processes per node from the launcher,
/// node_routing::from_launcher). Costs one switch per hop decision over the
/// routing it names; a program that fixes its routing at compile time
/// passes that type instead.
struct named_routing {
  enum class kind : int { direct, hypercube, node };
  kind which = kind::direct;
  node_routing node{};
  int next_rank(int me, int dest, int ranks) const noexcept {
    switch (which) {
      case kind::hypercube:
        return hypercube_routing{}.next_rank(me, dest, ranks);
      case kind::node:
        return node.next_rank(me, dest, ranks);
      case kind::direct:
        break;
    }
    return dest;
  }
  /// The routing named `word`; throws std::invalid_argument naming the word
  /// and the choices for any other.
  static named_routing from_name(std::string_view word) {
    if (word == "direct") return {};
    if (word == "hypercube") return {kind::hypercube, {}};
    if (word == "node") return {kind::node, node_routing::from_launcher()};
    throw std::invalid_argument("routing '" + std::string(word) +
                                "': expected direct, hypercube or node");
  }
};

/// Sends the runtime's own messages between processes (barrier arrivals
/// and releases, the message waves that end channel phases, barriers and
/// drains, global_completion_event waves and id releases, channel
/// flow-control acknowledgements, on_all_cores' launch and completion
/// messages) hop by hop over hypercube edges, and picks remote steal
/// victims among hypercube neighbours, when `on`; straight to their process
/// when off (the default). Still direct: delegate calls (a
/// global_completion_event made on a rank other than 0 gets its id so);
/// collectives keep their binomial tree over ranks (relative to the root:
/// hypercube edges when the root is rank 0). A program that routes its data over the hypercube to
/// bound each process's peers (and buffer memory) at ceil(log2 P) turns it
/// on, or those protocols would open a buffer to every process. While it is
/// on, barrier(), arrival_barrier() and channel end_phase() run as rounds
/// of recursive doubling between neighbours (src/comm/butterfly_phase.hpp):
/// floor(log2 P) hops per round (2 more for the processes above the largest
/// power of two), 2 rounds for a draining collective with nothing in
/// flight, 1 for arrival_barrier(), against the coordinator's arrival,
/// waves and release of up to ceil(log2 P) hops each. Costs: other control
/// messages take up to ceil(log2 P) hops instead of 1. Any thread, any
/// time; takes effect for messages sent after it. Every core of every
/// process must have made the same choice when it enters one of those
/// collectives (switch it before the collective on every core: a process
/// whose cores disagree ends the job naming the collective; processes that
/// disagree end it in the collective's first round, naming a process with
/// the switch on and one with it off); for the
/// other messages a mix is correct, just not bounded.
void route_control_over_hypercube(bool on) noexcept;

/// Values this process forwarded at intermediate hops (summed over its
/// cores), and the values that entered the channel's routing from here.
struct route_stats {
  std::uint64_t forwarded = 0;
};

/// What this process has handed to other processes since init() (summed
/// over its cores): aggregation batches, the messages and bytes in them,
/// and the network buffers it allocated (each --network-bytes) and sent
/// (one MPI message each).
///
/// Buffer memory per process (what issue 14 item 3 bounds): the outgoing
/// network buffers the process holds at once, times network_buffer_bytes.
/// network_buffers_peak counts them since reset_network_buffers_peak() (or
/// init()): the memory one phase needed, where network_buffers also counts
/// what start-up and earlier phases allocated (the pool keeps them). Two
/// parts:
///   coalescing_buffers_peak  the most peer processes with a buffer open for
///                            combining at once (Active Pebbles' coalescing
///                            buffers, one per peer): P - 1 under direct
///                            routing, at most ceil(log2 P) under hypercube
///                            routing with route_control_over_hypercube on
///                            (so that the runtime's own messages, barriers,
///                            message waves and steal requests, go to
///                            hypercube neighbours too);
///   the rest                 full buffers queued behind the per-peer window
///                            or in flight; each holds at least one core
///                            aggregation buffer, so they are bounded by the
///                            cores' pools (--buffers-per-core per core),
///                            whatever P, plus the overflow buffers a
///                            forwarding hop takes under back-pressure.
/// So under hypercube routing buffer memory per process is at most
/// (ceil(log2 P) + local cores x --buffers-per-core) x --network-bytes:
/// O(log P). Not counted: the transport's fixed receive buffers (16 posted,
/// each --network-bytes) and the core aggregation pools, neither of which
/// depends on P. Any thread, any time (statistics: exact between runs or
/// once the phase that sent has ended).
struct network_traffic {
  std::uint64_t batches = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::uint64_t network_buffers = 0;
  std::uint64_t network_buffers_sent = 0;
  std::uint64_t network_buffers_peak = 0;
  std::uint64_t coalescing_buffers_peak = 0;
  std::uint64_t network_buffer_bytes = 0;  ///< each network buffer's size (--network-bytes)
  /// The phase's buffer memory in bytes: network_buffers_peak buffers.
  std::uint64_t buffer_memory_peak() const noexcept {
    return network_buffers_peak * network_buffer_bytes;
  }
};
network_traffic local_network_traffic();
/// Starts network_buffers_peak and coalescing_buffers_peak anew at the
/// buffers this process holds (and holds open) now. To measure one phase,
/// call it on every core between two barriers before the phase: the first
/// drains what came before (on_all_cores' launch messages, for one, which
/// go straight from the launching core to every core), the second keeps
/// any core's reset from dropping a peak another core's phase reached.
void reset_network_buffers_peak();
/// Distinct processes this process's cores have sent to since init().
/// Between runs only (after run() returns).
std::uint64_t local_network_peers();

}  // namespace shoal
