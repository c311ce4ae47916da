// The timed phase of GUPS, one implementation per --impl.
//
// Every core applies its share of the updates (plain/gups_problem.hpp),
// drawing r from its own start point of the HPCC stream. Updates of words
// the core owns are applied by the task itself, before its next chunk
// (handlers never interrupt a task, so this is atomic with respect to
// them). The others travel to their home core, where a channel handler or a
// delegate applies them.
//
// "Outstanding", HPCC's look-ahead limit of 1024 updates per core, has two
// readings (--outstanding):
// - until_sent (the default; what HPCC's own MPI code does): an update is
//   outstanding from the moment its value is generated until it has been
//   handed to the network. Each core works through its share in chunks of
//   1024 and flushes each chunk before generating the next, so at most 1024
//   are ever held back by the core; it waits for them all to be applied
//   only at the end.
// - until_applied (stricter): outstanding until the generating core knows
//   the update has been applied at its home. The core keeps at most
//   window_slots chunks in flight (a sliding window): before generating
//   chunk j it waits until chunk j - window_slots is known applied, so at
//   most window_slots * chunk_updates = 1024 are outstanding, while later
//   chunks are already on the way. This costs a round trip per chunk.
// Either way a chunk's own-word updates are applied before the next chunk.
//
// No flow control of the app's own: under until_sent a core floods the
// channel, and the runtime keeps the cores in step (aggregator.hpp's send
// bound: a core that has sent a few batches polls for what the others sent
// it before its next one).
#pragma once

#include <memory>
#include <string>

#include "gups/gups_table.hpp"
#include "gups/plain/gups_problem.hpp"

namespace shoal_apps::gups {

/// Chunks a core may have in flight, and updates per chunk.
inline constexpr int window_slots = 4;
inline constexpr int chunk_updates = max_outstanding / window_slots;
static_assert(window_slots * chunk_updates <= max_outstanding);

/// When an update stops counting against the 1024 (see above).
enum class outstanding_rule { until_sent, until_applied };

/// Updates generated between two flushes under `rule`: the whole allowance
/// when only unsent updates count (bigger packets), a window slot otherwise.
inline int chunk_for(outstanding_rule rule) noexcept {
  return rule == outstanding_rule::until_sent ? max_outstanding : chunk_updates;
}

class updater {
 public:
  virtual ~updater() = default;
  /// Applies every update once (as the contract above says) and returns
  /// when all have been applied. Root task; blocking.
  virtual void apply_all() = 0;
};

/// Active Pebbles: a typed channel of the update value; the handler applies
/// it at the home core. Opens the channel (blocking: a round trip per
/// process); the updater closes it. Root task.
std::unique_ptr<updater> make_channel_updater(const gups_table& t, const gups_problem& p,
                                              outstanding_rule rule);

/// Grappa: one delegate::post per update, counted by a
/// global_completion_event per window slot. Root task.
std::unique_ptr<updater> make_delegate_updater(const gups_table& t, const gups_problem& p,
                                               outstanding_rule rule);

/// Active Pebbles with active routing: the update value sent to its table
/// word on a target channel routed `routing` (direct, hypercube or node:
/// routing.hpp); --outstanding sent only. Opens the channel (blocking);
/// the updater closes it. Root task. `reduce_xor`: updates of one word
/// staged together combine into one (reduction.hpp), in caches of
/// `cache_slots` per core.
std::unique_ptr<updater> make_routed_updater(const gups_table& t, const gups_problem& p,
                                             const std::string& routing, bool reduce_xor,
                                             std::uint32_t cache_slots);
/// The last routed run's traffic, job-wide: values forwarded at
/// intermediate hops; messages, bytes and aggregation batches handed to
/// other processes, and the network buffers (MPI messages) that carried
/// them; the most network buffers one process allocated (since start-up),
/// and the most one process held at once during the updates;
/// under --reduce xor, the values that went through the reduction caches
/// and those folded into a staged one (messages removed).
struct route_counts {
  std::int64_t forwarded = 0;
  std::int64_t messages = 0;
  std::int64_t bytes = 0;
  std::int64_t batches = 0;
  std::int64_t mpi_messages = 0;
  std::int64_t max_network_buffers = 0;
  std::int64_t max_phase_network_buffers = 0;  // most held at once during the updates
  std::int64_t max_coalescing_buffers = 0;     // most peers with one open at once, same
  std::int64_t max_phase_buffer_bytes = 0;     // max_phase_network_buffers in bytes
  std::int64_t network_buffer_bytes = 0;       // one network buffer (--network-bytes)
  std::int64_t reduction_lookups = 0;
  std::int64_t reduction_hits = 0;
};
route_counts last_route_counts();

/// The verification pass: the same updates once more, one delegate each,
/// addressed through global_ptr arithmetic (independent of the timed
/// path's addressing). Untimed. Root task.
std::unique_ptr<updater> make_reapply_updater(const gups_table& t, const gups_problem& p);

}  // namespace shoal_apps::gups
