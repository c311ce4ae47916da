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

#include "comm/network.hpp"

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

}  // namespace

void check_channel_usable(std::uint32_t id, const char* what) {
  SHOAL_CHECK(id != 0, "channel::{} on a closed or default-constructed channel", what);
  SHOAL_CHECK(id < control_stream && channel_table()[id].deliver != nullptr,
              "channel::{} on channel {}, which is not open (closed through another handle?)",
              what, id);
  SHOAL_CHECK(tls_core >= 0 && in_worker(),
              "channel::{} on channel {} called outside a task", what, id);
}

void end_channel_phase(std::uint32_t id) {
  check_channel_usable(id, "end_phase");
  // This core's values of the phase leave now, partly filled network
  // buffers included: the other processes' cores wait for them, and the
  // arrival below may be followed by a backlog of arrivals to handle.
  push_staged_partial();
  phase_barrier(id, id, true, labels().phase[id].c_str());
}

namespace {
struct round_wait {
  const aggregator* agg;
  std::uint32_t stream;
  std::uint64_t round;
  int cores;
};

bool round_complete(const void* arg) {
  const auto* w = static_cast<const round_wait*>(arg);
  for (int s = 0; s < w->cores; ++s)
    if (w->agg->markers_from(w->stream, s) < w->round) return false;
  return true;
}
}  // namespace

// Depth-limited termination (Active Pebbles 3.6.1): `depth` rounds; in each,
// this core sends what it staged on the channel and a marker to every core,
// then waits for every core's marker of the round. Values of depth k (sent
// by handlers of depth k-1) are all staged before their senders' markers of
// round k, so after round `depth` every value of depth <= `depth` has been
// handled. A value this core sent during the last round came from a handler
// at depth `depth` + 1: the caller's depth was too small.
void end_channel_phase_depth(std::uint32_t id, int depth) {
  check_channel_usable(id, "end_phase_depth");
  SHOAL_CHECK(depth >= 1 && depth <= 64,
              "channel::end_phase_depth on channel {}: depth {} outside [1, 64]", id, depth);
  aggregator& a = *tls_aggregator;
  const int cores = g_info.total_cores;
  const int me = tls_core;
  std::uint64_t sent_at_last_markers = 0;
  for (int k = 1; k <= depth; ++k) {
    for (int i = 1; i <= cores; ++i) a.send_marker(id, (me + i) % cores);
    // The markers (and the values before them) leave now, partly filled
    // network buffers included: the other processes wait on them, and this
    // core may be about to handle a backlog of arrivals before its next
    // poll would send them (network.hpp).
    push_staged_partial();
    sent_at_last_markers = a.sent(id);
    const round_wait w{&a, id, ++a.rounds(id), cores};
    if (!round_complete(&w))
      this_scheduler().wait_until(round_complete, &w, labels().phase[id].c_str(),
                                  static_cast<std::int64_t>(w.round));
  }
  a.flush_stream(id);
  SHOAL_CHECK(a.sent(id) == sent_at_last_markers,
              "channel::end_phase_depth({}) on channel {}: a handler on core {} sent {} value(s) "
              "at depth {} or more; raise the depth or use end_phase()",
              depth, id, me, a.sent(id) - sent_at_last_markers, depth + 1);
}

void drain_channel(std::uint32_t id) {
  check_channel_usable(id, "drain");
  wait_drained(id, labels().drain[id].c_str(), phases_completed(id));
}

}  // namespace shoal::detail
