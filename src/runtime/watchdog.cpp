#include "runtime/watchdog.hpp"

#include <string>

#include <fmt/format.h>

#include "runtime/quiescence.hpp"

namespace shoal::detail {

watchdog::watchdog(const runtime_state& rt) : rt_(rt), last_(total_progress(rt)) {}

void watchdog::check() { check(total_progress(rt_), all_idle(rt_)); }

void watchdog::check(std::uint64_t now, bool idle) {
  if (now != last_ || !idle) {
    last_ = now;
    since_ = clock::now();
    return;
  }
  if (clock::now() - since_ < std::chrono::seconds(rt_.cfg.watchdog_s)) return;
  std::string report =
      fmt::format("watchdog: no progress for {} s (--watchdog-s); ", rt_.cfg.watchdog_s);
  for (const auto& s : rt_.schedulers) report += s->describe() + "; ";
  report +=
      "usual causes: a collective or barrier() not called by every core, a promise "
      "never set, an event never completed";
  fatal_user(report);
}

}  // namespace shoal::detail
