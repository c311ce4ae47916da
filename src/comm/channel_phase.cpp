// Channel phases (channel.hpp end_phase / drain): the phase collective and
// message waves of barrier.cpp and message_waves.cpp, restricted to one
// channel's stream, with the watchdog labels "channel <id> phase" and
// "channel <id> drain".
#include "shoal/detail/check.hpp"
#include "shoal/detail/message_waves.hpp"
#include "shoal/detail/phase_barrier.hpp"
#include "shoal/detail/process_info.hpp"
#include "tasks/scheduler.hpp"

#include <array>
#include <string>

#include <fmt/format.h>

namespace shoal::detail {
namespace {

// The watchdog keeps the label's pointer: the strings live for the program.
struct channel_labels {
  std::array<std::string, control_stream> phase;
  std::array<std::string, control_stream> drain;
  channel_labels() {
    for (std::uint32_t id = 1; id < control_stream; ++id) {
      phase[id] = fmt::format("channel {} phase", id);
      drain[id] = fmt::format("channel {} drain", id);
    }
  }
};

const channel_labels& labels() {
  static const channel_labels l;
  return l;
}

void check_usable(std::uint32_t id, const char* what) {
  SHOAL_CHECK(id != 0, "channel::{} on a closed or default-constructed channel", what);
  SHOAL_CHECK(id < control_stream && channel_table()[id].deliver != nullptr,
              "channel::{} on channel {}, which is not open (closed through another handle?)",
              what, id);
  SHOAL_CHECK(tls_core >= 0 && in_worker(),
              "channel::{} on channel {} called outside a task", what, id);
}

}  // namespace

void end_channel_phase(std::uint32_t id) {
  check_usable(id, "end_phase");
  phase_barrier(id, id, true, labels().phase[id].c_str());
}

void drain_channel(std::uint32_t id) {
  check_usable(id, "drain");
  wait_drained(id, labels().drain[id].c_str(), phases_completed(id));
}

}  // namespace shoal::detail
