// The counters behind global_completion_event: a fixed table per process,
// made by init(), of `max_events` events x local cores. Row `c` (local core
// c) holds that core's (enrolled, completed) pair for every event id and is
// written only by core c; rows are multiples of 64 bytes, so no two cores
// ever write one cache line. Counters are monotonic and never reset while the
// runtime lives: an event is its id, and only the job-wide totals of its
// column matter (see global_completion_event.hpp for the protocol).
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/process_info.hpp"

#include <atomic>
#include <cstdint>

namespace shoal::detail {

/// Event ids per process table (id 0 is default_gce()).
inline constexpr std::uint32_t max_events = 4096;

struct event_counters {
  std::atomic<std::uint64_t> enrolled{0};
  std::atomic<std::uint64_t> completed{0};
};
static_assert(sizeof(event_counters) * max_events % 64 == 0, "a row must fill whole cache lines");

/// The table: local_cores rows of max_events counters (null outside init).
inline event_counters* g_event_table = nullptr;
/// Per event: workers of this process in a one-process wait() (completions
/// nudge sleeping cores while any).
inline std::atomic<int>* g_event_waiters = nullptr;

/// Allocates (zeroed) and frees the table; init() and finalize() only.
void make_event_table(int local_cores);
void free_event_table() noexcept;

/// The calling core's counters of event `id`. Any shoal core (task or handler).
inline event_counters& my_counters(std::uint32_t id) noexcept {
  SHOAL_CHECK(tls_core >= 0, "a completion event was enrolled or completed outside a shoal core");
  SHOAL_ASSERT(id < max_events, "completion event id out of range");
  const auto row = static_cast<std::size_t>(tls_core - g_info.rank_base);
  return g_event_table[row * max_events + id];
}

/// Local core `c`'s counters of event `id`. Read by any thread.
inline const event_counters& counters_of(int c, std::uint32_t id) noexcept {
  return g_event_table[static_cast<std::size_t>(c) * max_events + id];
}

inline void bump(std::atomic<std::uint64_t>& c, std::int64_t n) noexcept {
  // Single writer (the owning core); release publishes what the unit did
  // before it, to whoever reads the sum with acquire.
  c.store(c.load(std::memory_order_relaxed) + static_cast<std::uint64_t>(n),
          std::memory_order_release);
}

inline void event_enroll(std::uint32_t id, std::int64_t n) noexcept {
  bump(my_counters(id).enrolled, n);
}

inline void event_complete(std::uint32_t id, std::int64_t n) noexcept {
  bump(my_counters(id).completed, n);
  // Relaxed, no fence: a nudge missed here only delays a one-process waiter
  // to its core's next poll or idle timeout (at most 1 ms); it re-checks.
  if (g_event_waiters[id].load(std::memory_order_relaxed) > 0) tls_nudge = true;
}

}  // namespace shoal::detail
