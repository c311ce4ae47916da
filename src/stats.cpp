#include "shoal/stats.hpp"

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

core_stats& core_stats::operator+=(const core_stats& o) {
  messages_sent += o.messages_sent;
  bytes_sent += o.bytes_sent;
  messages_received += o.messages_received;
  bytes_received += o.bytes_received;
  packets_sent += o.packets_sent;
  packets_received += o.packets_received;
  flushes_on_size += o.flushes_on_size;
  flushes_on_age += o.flushes_on_age;
  flushes_on_idle += o.flushes_on_idle;
  backpressure_waits += o.backpressure_waits;
  overflow_buffers += o.overflow_buffers;
  context_switches += o.context_switches;
  tasks_spawned += o.tasks_spawned;
  tasks_run += o.tasks_run;
  tasks_stolen += o.tasks_stolen;
  steal_attempts += o.steal_attempts;
  workers_created += o.workers_created;
  idle_ns += o.idle_ns;
  busy_ns += o.busy_ns;
  ready_len_sum += o.ready_len_sum;
  ready_len_samples += o.ready_len_samples;
  ready_len_max = std::max(ready_len_max, o.ready_len_max);
  return *this;
}

core_stats stats_total() {
  core_stats total;
  for (const core_stats& s : stats_per_core()) total += s;
  return total;
}

core_stats& core_stats::operator-=(const core_stats& o) {
  messages_sent -= o.messages_sent;
  bytes_sent -= o.bytes_sent;
  messages_received -= o.messages_received;
  bytes_received -= o.bytes_received;
  packets_sent -= o.packets_sent;
  packets_received -= o.packets_received;
  flushes_on_size -= o.flushes_on_size;
  flushes_on_age -= o.flushes_on_age;
  flushes_on_idle -= o.flushes_on_idle;
  backpressure_waits -= o.backpressure_waits;
  overflow_buffers -= o.overflow_buffers;
  context_switches -= o.context_switches;
  tasks_spawned -= o.tasks_spawned;
  tasks_run -= o.tasks_run;
  tasks_stolen -= o.tasks_stolen;
  steal_attempts -= o.steal_attempts;
  workers_created -= o.workers_created;
  idle_ns -= o.idle_ns;
  busy_ns -= o.busy_ns;
  ready_len_sum -= o.ready_len_sum;
  ready_len_samples -= o.ready_len_samples;
  return *this;  // ready_len_max stays: a maximum has no difference
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
      {"context_switches", d(t.context_switches)},
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
