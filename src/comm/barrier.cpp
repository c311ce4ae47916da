// barrier(), arrival_barrier() and the SPMD collective under channel phases
// (detail/phase_barrier.hpp).
#include "shoal/detail/phase_barrier.hpp"

#include "shoal/detail/message_waves.hpp"
#include "tasks/scheduler.hpp"
#include "shoal/message.hpp"
#include "shoal/parallel.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "comm/butterfly_phase.hpp"
#include "comm/network.hpp"
#include "comm/near_control.hpp"

namespace shoal {
namespace detail {
namespace {

struct slot_state {
  // Per process: the arrival tally (any core of the process; see arrive()).
  std::atomic<int> left{0};
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> handled{0};
  std::atomic<std::int64_t> phases{0};  // completed here; written by local core 0
  std::atomic<int> over_hypercube{0};   // arrived cores that chose the butterfly
  // Collectives completed here, never reset (phases is, when a channel
  // reopens): the same on every process, so butterfly_phase.hpp can tell
  // which collective a round message is for. Written by local core 0.
  std::atomic<std::uint64_t> collectives{0};
  std::vector<worker*> waiter;  // by local core; each slot its owner's
  // Global core 0 only.
  int ranks_arrived = 0;
  wave_totals arrived_sum;
  worker* coordinator = nullptr;
};

std::unique_ptr<slot_state[]>& slots() {
  static std::unique_ptr<slot_state[]> s;
  return s;
}

slot_state& slot_of(std::uint32_t slot) { return slots()[slot]; }

int local_index() { return mycore() - g_info.rank_base; }

void on_rank_arrived(std::uint32_t slot, const wave_totals& sum) {
  slot_state& st = slot_of(slot);
  ++st.ranks_arrived;
  st.arrived_sum.sent += sum.sent;
  st.arrived_sum.handled += sum.handled;
  if (st.ranks_arrived == g_info.ranks && st.coordinator != nullptr) {
    this_scheduler().wake(st.coordinator);
    st.coordinator = nullptr;
  }
}

// Whether this collective runs over hypercube edges (butterfly_phase.hpp):
// with the control messages routed so, in a job of several processes.
bool over_hypercube() {
  return g_info.ranks > 1 && g_control_over_hypercube.load(std::memory_order_relaxed);
}

void release_butterfly(std::uint32_t slot);

// Adds this core's sample to its process's tally; the last core of the
// process resets the tally (no core can arrive again before the release,
// which needs this very message) and reports to core 0, or starts the
// butterfly rounds on its process's local core 0.
void arrive(std::uint32_t slot, const wave_totals& mine, bool butterfly, std::uint32_t selector,
            bool drain, const char* why) {
  slot_state& st = slot_of(slot);
  st.sent.fetch_add(mine.sent, std::memory_order_relaxed);
  st.handled.fetch_add(mine.handled, std::memory_order_relaxed);
  if (butterfly) st.over_hypercube.fetch_add(1, std::memory_order_relaxed);
  // acq_rel: the last core reads every other core's additions.
  if (st.left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const wave_totals sum{st.sent.exchange(0, std::memory_order_relaxed),
                        st.handled.exchange(0, std::memory_order_relaxed)};
  const int chose = st.over_hypercube.exchange(0, std::memory_order_relaxed);
  st.left.store(g_info.local_cores, std::memory_order_relaxed);
  SHOAL_CHECK(chose == 0 || chose == g_info.local_cores,
              "{} on process {}: {} of its {} cores arrived with route_control_over_hypercube "
              "on and the others with it off; switch it before the collective on every core",
              why, g_info.rank, chose, g_info.local_cores);
  // No core of this process completes the collective before this arrival.
  const std::uint64_t collective = st.collectives.load(std::memory_order_relaxed);
  if (butterfly) {
    // Through local core 0's inbound ring even from core 0 itself: its task
    // suspends before any handler of its runs.
    send_control(g_info.rank_base, [slot, collective, selector, drain, sum] {
      butterfly_begin(slot, collective, selector, drain, sum, release_butterfly);
    });
  } else {
    if (g_info.ranks > 1) butterfly_coordinated(slot, collective, why);
    send_control_near(0, [slot, sum] { on_rank_arrived(slot, sum); });
  }
  // Every process waits on this arrival: it leaves now, partly filled
  // network buffer included (network.hpp), not behind a buffer in flight.
  push_staged_partial();
}

void wake_waiter(std::uint32_t slot) {
  slot_state& st = slot_of(slot);
  worker*& w = st.waiter[static_cast<std::size_t>(local_index())];
  worker* const ready = w;
  w = nullptr;
  this_scheduler().wake(ready);
}

// On local core 0 of a process: counts the phase and wakes the process's
// other waiting cores, and this one when `self`.
void release_cores(std::uint32_t slot, bool self) {
  slot_of(slot).phases.fetch_add(1, std::memory_order_relaxed);
  slot_of(slot).collectives.fetch_add(1, std::memory_order_relaxed);
  for (int c = 1; c < g_info.local_cores; ++c)
    send_control(g_info.rank_base + c, [slot] { wake_waiter(slot); });
  push_staged_partial();  // the releases are waited on too
  if (self) wake_waiter(slot);
}

// The coordinator's release: every core of the process but the coordinator.
void release_process(std::uint32_t slot) { release_cores(slot, mycore() != 0); }

// The butterfly's end: every core of the process, this one included.
void release_butterfly(std::uint32_t slot) { release_cores(slot, true); }

void coordinate(std::uint32_t slot, std::uint32_t selector, bool drain, const char* why,
                std::int64_t phase) {
  slot_state& st = slot_of(slot);
  if (st.ranks_arrived < g_info.ranks) {
    st.coordinator = current_worker();
    this_scheduler().suspend(why, phase);
  }
  const wave_totals first = st.arrived_sum;
  st.ranks_arrived = 0;
  st.arrived_sum = {};
  if (drain) wait_drained(selector, why, phase, first);
  for (int r = 1; r < g_info.ranks; ++r)
    send_control_near(r * g_info.local_cores, [slot] { release_process(slot); });
  release_process(slot);
}

}  // namespace

void phase_barrier(std::uint32_t slot, std::uint32_t selector, bool drain, const char* why) {
  SHOAL_CHECK(tls_core >= 0 && in_worker(),
              "{} called outside a task (call it from one task per core, e.g. in on_all_cores)",
              why);
  slot_state& st = slot_of(slot);
  scheduler& s = this_scheduler();
  const std::int64_t phase = st.phases.load(std::memory_order_relaxed);
  const wave_totals mine = drain ? sample_here(selector) : wave_totals{};
  // Read once: this core's path and its vote for the process's protocol.
  const bool butterfly = over_hypercube();
  if (butterfly || mycore() != 0) st.waiter[static_cast<std::size_t>(local_index())] = s.current;
  // No handler of this core runs before the suspend below (handlers run in
  // the scheduler), so the release cannot find the waiter unset; a send that
  // yields under back-pressure has not sent the arrival yet.
  arrive(slot, mine, butterfly, selector, drain, why);
  if (!butterfly && mycore() == 0) {
    coordinate(slot, selector, drain, why, phase);
    return;
  }
  s.suspend(why, phase);
}

std::int64_t phases_completed(std::uint32_t slot) noexcept {
  return slot_of(slot).phases.load(std::memory_order_relaxed);
}

void reset_channel_phases(std::uint32_t id) noexcept {
  slot_of(id).phases.store(0, std::memory_order_relaxed);
}

void reset_barrier(int local_cores) {
  reset_butterfly_phases();
  auto& s = slots();
  s = std::make_unique<slot_state[]>(max_streams + 1);
  for (std::uint32_t i = 0; i <= max_streams; ++i) {
    s[i].left.store(local_cores, std::memory_order_relaxed);
    s[i].waiter.assign(static_cast<std::size_t>(local_cores), nullptr);
  }
}

}  // namespace detail

void barrier() {
  detail::phase_barrier(detail::barrier_slot, detail::all_app_streams, true, "barrier");
}

void arrival_barrier() {
  detail::phase_barrier(detail::arrival_barrier_slot, 0, false, "arrival_barrier");
}

void drain_messages() {
  SHOAL_CHECK(detail::tls_core >= 0 && detail::in_worker(), "drain_messages called outside a task");
  detail::wait_drained(detail::all_app_streams, "drain_messages", -1);
}

}  // namespace shoal
