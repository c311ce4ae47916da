// The four BFS variants (--impl) and the steps around them. Each search
// fills the global parent array (int64 per vertex, -1 = unreached, laid out
// as distribution.hpp says) with a BFS tree from the root.
//
//   channel   level-synchronous over a typed channel of bare (vertex, parent)
//             values; owners claim arrivals in the handler (search_channel.cpp)
//   async     label-correcting without level barriers, Active Pebbles 4.4;
//             ends by counting quiescence (search_async.cpp)
//   delegate  Grappa style: per level, tasks over the frontier run async
//             delegates on the global parent array (search_delegate.cpp)
//   queue     UPC-queues pattern: batched enqueue into the owner's queue,
//             drained by the owner after the level (search_queue.cpp)
//   hybrid    direction-optimising (Beamer et al.): channel's top-down
//             levels while the frontier is small, bottom-up levels (each
//             unvisited vertex looks for a parent in a copy of the whole
//             frontier, gathered on every core) while it is large
//             (search_hybrid.cpp)
//
// Every function here is blocking and is called from the root task.
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bfs/core_state.hpp"

namespace shoal_apps::bfs {

enum class variant { channel, async, delegate, queue, hybrid };

/// The --impl names, the default first.
std::vector<std::string> variant_names();
variant variant_named(const std::string& name);

/// What every search needs, by value.
struct search_setup {
  shoal::global_ptr<std::int64_t> parents;  ///< the global parent array
  bool sender_filter = true;                ///< send each remote vertex once per search
  /// async, --reduce min: relaxations travel on a target channel that keeps
  /// the least level per vertex among those staged on a core (reduction.hpp)
  bool reduce_min = false;
  std::uint32_t cache_slots = 4096;  ///< slots of each core's reduction cache
  /// async, --routing: how relaxations travel between processes; anything
  /// but direct puts them on a routed target channel (routing.hpp).
  shoal::named_routing routing{};
};

/// Job-wide counts of the --reduce min channel over every search, taken when
/// the searches finish (finish_searches); zeros without it.
struct reduction_counts {
  std::int64_t lookups = 0;    ///< relaxations that went through the source cache
  std::int64_t hits = 0;       ///< folded into a staged one: messages removed
  std::int64_t forwarded = 0;  ///< handed on at intermediate routing hops
  /// What the processes handed to MPI while the channel was open (summed
  /// over processes; routing.hpp's network_traffic).
  std::int64_t mpi_messages = 0;
  std::int64_t mpi_bytes = 0;
};
reduction_counts last_reduction_counts();

/// Hybrid variant: edges examined and levels run each way, summed over the
/// job and every search since the last call (which this one resets; zeros
/// for other variants).
struct direction_counts {
  std::int64_t searches = 0;
  std::int64_t edges_examined =
      0;  ///< top-down: every arc of the frontier; bottom-up: until a parent
  std::int64_t top_down_levels = 0;
  std::int64_t bottom_up_levels = 0;
};
direction_counts take_direction_counts();

/// Sizes every core's per-search arrays for `v` and points each core at its
/// slice of the parent array, filled with -1. Opens the variant's channels.
template <class V>
void prepare_searches(variant v, const search_setup& s);

/// One search from `root` (timed by the caller), on cores prepared by
/// prepare_searches or by the previous search's gather_parents.
template <class V>
void search(variant v, const search_setup& s, std::uint64_t root);

/// Copies the parent array into `out` on rank 0 (which must hold one entry
/// per vertex) and clears every core's parents and visited state for the
/// next search. Root task only (it runs on core 0 of rank 0, where `out`
/// lives).
template <class V>
void gather_parents(std::vector<std::int64_t>* out);

/// Closes the channels prepare_searches opened.
template <class V>
void finish_searches();

// The variants, one file each. Each starts from reset cores (search.cpp).
template <class V>
void search_channel(const search_setup& s, std::uint64_t root);
template <class V>
void search_async(const search_setup& s, std::uint64_t root);
template <class V>
void search_delegate(const search_setup& s, std::uint64_t root);
template <class V>
void search_queue(const search_setup& s, std::uint64_t root);
template <class V>
void search_hybrid(const search_setup& s, std::uint64_t root);

/// The channel variant's level expansion (search_channel.cpp), which the
/// hybrid's top-down levels share: the frontier's rows scanned, own
/// neighbours claimed, others sent on `ch`. The caller ends the phase.
template <class V>
void expand_top_down(core_state<V>& st, const shoal::channel<visit<V>>& ch, bool filter);
/// The channel the channel and hybrid variants claim on (open_channel_variant).
template <class V>
shoal::channel<visit<V>> visit_channel();

// Channel setup of the variants that use one (opened once, before timing).
template <class V>
void open_channel_variant();
template <class V>
void close_channel_variant();
template <class V>
void open_async_variant(const search_setup& s);
template <class V>
void close_async_variant();
template <class V>
void open_queue_variant();
template <class V>
void close_queue_variant();

}  // namespace shoal_apps::bfs
