#include "shoal/global_completion_event.hpp"

#include "shoal/detail/scheduler.hpp"
#include "shoal/message.hpp"

namespace shoal {

global_completion_event::global_completion_event()
    : counters_(new counters[static_cast<std::size_t>(detail::g_info.local_cores)]),
      cores_(detail::g_info.local_cores) {
  SHOAL_CHECK(cores_ > 0, "a global_completion_event needs shoal::init() first");
}

global_completion_event::~global_completion_event() = default;

void global_completion_event::complete(std::int64_t n) noexcept {
  bump(counters_[local()].completed, n);
  // No fence: a nudge missed here only delays the waiter to its next poll or
  // sleep timeout (at most 1 ms); the watch itself re-checks done().
  if (waiters_.load(std::memory_order_relaxed) > 0) detail::tls_nudge = true;
}

bool global_completion_event::done() const noexcept {
  std::uint64_t completed = 0;
  std::uint64_t enrolled = 0;
  for (int i = 0; i < cores_; ++i)
    completed += counters_[i].completed.load(std::memory_order_acquire);
  for (int i = 0; i < cores_; ++i)
    enrolled += counters_[i].enrolled.load(std::memory_order_acquire);
  SHOAL_ASSERT(completed <= enrolled, "global_completion_event completed more than enrolled");
  return completed == enrolled;
}

void global_completion_event::wait() {
  flush();
  if (done()) return;
  waiters_.fetch_add(1, std::memory_order_relaxed);
  detail::this_scheduler().wait_until(
      [](const void* self) { return static_cast<const global_completion_event*>(self)->done(); },
      this, "global_completion_event");
  waiters_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace shoal
