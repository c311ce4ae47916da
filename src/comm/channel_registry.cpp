// Channel ids and receive sides across the processes of a job.
//
// Ids come from rank 0 (so that every process agrees on them); the receive
// side (deliver loop, handler state, value size) is installed in every
// process's table before make_channel returns. The deliver function travels
// as a distance from the handler anchor: the same binary runs everywhere.
#include "shoal/delegate.hpp"
#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/handler_id.hpp"
#include "shoal/detail/phase_barrier.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/detail/reduction_cache.hpp"

#include <atomic>
#include <bit>
#include <cstring>

#include "comm/network.hpp"

namespace shoal::detail {
namespace {

std::atomic<bool> g_channel_used[max_streams];

using deliver_fn = void(const void*, const char*, std::uint32_t);

std::uint32_t claim_here() {
  for (std::uint32_t i = 1; i < control_stream; ++i) {
    bool expected = false;
    // Seq_cst (default), kept: claims the id for one caller only; rare.
    if (g_channel_used[i].compare_exchange_strong(expected, true)) return i;
  }
  fatal_user(
      fmt::format("too many typed channels open at once (at most {}); close() channels "
                  "you no longer need (each distributed container holds one or two until its "
                  "destroy())",
                  control_stream - 1));
}

// The entry as it travels: trivially copyable, position-independent.
struct entry_message {
  std::uint32_t id;
  std::uint32_t value_bytes;
  std::uint32_t max_in_flight;
  std::uint32_t coalesce_bytes;
  std::uint32_t cache_slots;
  std::int64_t deliver;
  alignas(8) unsigned char state[max_channel_handler_bytes];
};

// One reduction cache per core of this process (reduction_cache.hpp).
reduction_cache* make_caches(std::uint32_t slots) {
  if (slots == 0) return nullptr;
  auto* caches = new reduction_cache[static_cast<std::size_t>(g_info.local_cores)];
  for (int c = 0; c < g_info.local_cores; ++c) {
    caches[c].table = std::make_unique<reduction_cache::slot[]>(std::bit_ceil(slots));
    caches[c].mask = std::bit_ceil(slots) - 1;
  }
  return caches;
}

void install(const entry_message& m) {
  channel_entry& e = channel_table()[m.id];
  std::memcpy(e.state, m.state, sizeof e.state);
  e.value_bytes = m.value_bytes;
  e.max_in_flight = m.max_in_flight;
  e.coalesce_bytes = m.coalesce_bytes;
  e.cache_slots = m.cache_slots;
  e.caches = make_caches(m.cache_slots);
  reset_channel_phases(m.id);
  e.deliver = from_code_offset<deliver_fn>(m.deliver);
}

void uninstall(std::uint32_t id) {
  delete[] channel_table()[id].caches;
  channel_table()[id] = channel_entry{};
}

// Runs f on core 0 of every other rank, one blocking round trip each.
template <class F>
void on_other_ranks(const F& f) {
  for (int r = 0; r < g_info.ranks; ++r)
    if (r != g_info.rank) delegate::call(r * g_info.local_cores, f);
}

}  // namespace

std::uint32_t open_channel(const channel_entry& e) {
  if (g_info.ranks == 1) {
    const std::uint32_t id = claim_here();
    channel_table()[id] = e;
    channel_table()[id].caches = make_caches(e.cache_slots);
    reset_channel_phases(id);
    return id;
  }
  const std::uint32_t id =
      g_info.rank == 0 ? claim_here() : delegate::call(0, [] { return claim_here(); });
  entry_message m{id,
                  e.value_bytes,
                  e.max_in_flight,
                  e.coalesce_bytes,
                  e.cache_slots,
                  to_code_offset(e.deliver),
                  {}};
  std::memcpy(m.state, e.state, sizeof m.state);
  install(m);
  on_other_ranks([m] { install(m); });
  return id;
}

void push_stream(std::uint32_t id) {
  tls_aggregator->flush_stream(id);
  // As push_staged (network.cpp): a thread driving the network sends it,
  // else this core does now.
  if (network* n = this_network()) n->progress();
}

void close_channel(std::uint32_t id) {
  SHOAL_CHECK(id > 0 && id < control_stream, "close of channel id {} out of range", id);
  uninstall(id);
  if (g_info.ranks > 1) on_other_ranks([id] { uninstall(id); });
  // Seq_cst (default), kept: frees the id after its entry was reset above
  // (release is what matters, pairing with the claim's CAS); rare.
  if (g_info.rank == 0 || g_info.ranks == 1) {
    g_channel_used[id].store(false);
  } else {
    delegate::call(0, [id] { g_channel_used[id].store(false); });
  }
}

}  // namespace shoal::detail
