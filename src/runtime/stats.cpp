#include "shoal/stats.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

namespace shoal {

double core_stats::idle_fraction() const {
  const double total = static_cast<double>(idle_ns + busy_ns);
  return total > 0 ? static_cast<double>(idle_ns) / total : 0.0;
}

double core_stats::average_packet_bytes() const {
  return packets_sent > 0 ? static_cast<double>(bytes_sent) / static_cast<double>(packets_sent)
                          : 0.0;
}

double core_stats::average_ready_length() const {
  return ready_len_samples > 0
             ? static_cast<double>(ready_len_sum) / static_cast<double>(ready_len_samples)
             : 0.0;
}

namespace {

// Applies a = op(a, b) to every cumulative counter (not ready_len_max): the
// one list of them that += and -= share.
template <class Op>
void combine(core_stats& a, const core_stats& b, Op op) {
  for (auto member : {&core_stats::messages_sent,     &core_stats::bytes_sent,
                      &core_stats::messages_received, &core_stats::bytes_received,
                      &core_stats::packets_sent,      &core_stats::packets_received,
                      &core_stats::flushes_on_size,   &core_stats::flushes_on_age,
                      &core_stats::flushes_on_idle,   &core_stats::backpressure_waits,
                      &core_stats::overflow_buffers,  &core_stats::polls,
                      &core_stats::polls_backlogged,  &core_stats::polls_on_send,
                      &core_stats::context_switches,  &core_stats::os_yields,
                      &core_stats::tasks_spawned,     &core_stats::tasks_run,
                      &core_stats::tasks_stolen,      &core_stats::steal_attempts,
                      &core_stats::workers_created,   &core_stats::idle_ns,
                      &core_stats::busy_ns,           &core_stats::ready_len_sum,
                      &core_stats::ready_len_samples})
    a.*member = op(a.*member, b.*member);
}

}  // namespace

core_stats& core_stats::operator+=(const core_stats& o) {
  combine(*this, o, std::plus<>());
  ready_len_max = std::max(ready_len_max, o.ready_len_max);
  return *this;
}

core_stats& core_stats::operator-=(const core_stats& o) {
  combine(*this, o, std::minus<>());
  return *this;  // ready_len_max stays: a maximum has no difference
}

core_stats stats_total() {
  core_stats total;
  for (const core_stats& s : stats_per_core()) total += s;
  return total;
}

std::vector<std::pair<std::string, double>> stats_fields() { return stats_fields(stats_total()); }

std::vector<std::pair<std::string, double>> stats_fields(const core_stats& t) {
  auto d = [](std::uint64_t v) { return static_cast<double>(v); };
  return {
      {"messages_sent", d(t.messages_sent)},
      {"bytes_sent", d(t.bytes_sent)},
      {"messages_received", d(t.messages_received)},
      {"bytes_received", d(t.bytes_received)},
      {"packets_sent", d(t.packets_sent)},
      {"packets_received", d(t.packets_received)},
      {"average_packet_bytes", t.average_packet_bytes()},
      {"flushes_on_size", d(t.flushes_on_size)},
      {"flushes_on_age", d(t.flushes_on_age)},
      {"flushes_on_idle", d(t.flushes_on_idle)},
      {"backpressure_waits", d(t.backpressure_waits)},
      {"overflow_buffers", d(t.overflow_buffers)},
      {"polls", d(t.polls)},
      {"polls_backlogged", d(t.polls_backlogged)},
      {"polls_on_send", d(t.polls_on_send)},
      {"context_switches", d(t.context_switches)},
      {"os_yields", d(t.os_yields)},
      {"tasks_spawned", d(t.tasks_spawned)},
      {"tasks_run", d(t.tasks_run)},
      {"tasks_stolen", d(t.tasks_stolen)},
      {"steal_attempts", d(t.steal_attempts)},
      {"workers_created", d(t.workers_created)},
      {"idle_fraction", t.idle_fraction()},
      {"average_ready_length", t.average_ready_length()},
      {"max_ready_length", d(t.ready_len_max)},
  };
}

std::string stats_table() {
  const std::vector<core_stats> per_core = stats_per_core();
  std::string out = fmt::format(
      "{:>5} {:>12} {:>12} {:>9} {:>10} {:>12} {:>10} {:>8} {:>6} {:>9}\n", "core", "msgs sent",
      "msgs recv", "packets", "avg pkt B", "ctx switch", "spawned", "stolen", "idle", "ready avg");
  auto row = [&out](const std::string& name, const core_stats& s) {
    out +=
        fmt::format("{:>5} {:>12} {:>12} {:>9} {:>10.0f} {:>12} {:>10} {:>8} {:>5.0f}% {:>9.1f}\n",
                    name, s.messages_sent, s.messages_received, s.packets_sent,
                    s.average_packet_bytes(), s.context_switches, s.tasks_spawned, s.tasks_stolen,
                    100 * s.idle_fraction(), s.average_ready_length());
  };
  core_stats total;
  for (std::size_t i = 0; i < per_core.size(); ++i) {
    row(std::to_string(i), per_core[i]);
    total += per_core[i];
  }
  row("total", total);
  return out;
}

}  // namespace shoal
