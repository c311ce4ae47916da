// Runtime counters per core: the metrics of Grappa's Table 2 (messages and
// bytes, aggregated packet sizes, context switches, steals, idle fraction).
// Each core writes only its own counters; snapshots are taken between runs or
// read approximately while running.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shoal {

/// Counters of one core, cumulative since init().
struct core_stats {
  std::uint64_t messages_sent = 0;      ///< closure and channel messages staged
  std::uint64_t bytes_sent = 0;         ///< payload + header bytes staged
  std::uint64_t messages_received = 0;  ///< messages whose handler ran here
  std::uint64_t bytes_received = 0;
  std::uint64_t packets_sent = 0;        ///< aggregated buffers sent
  std::uint64_t packets_received = 0;    ///< aggregated buffers processed
  std::uint64_t flushes_on_size = 0;     ///< buffers sent because full
  std::uint64_t flushes_on_age = 0;      ///< age-triggered flush rounds
  std::uint64_t flushes_on_idle = 0;     ///< idle-triggered flush rounds
  std::uint64_t backpressure_waits = 0;  ///< times a sender yielded for a free buffer
  std::uint64_t overflow_buffers = 0;    ///< buffers allocated beyond the pool (handler sends)
  std::uint64_t polls = 0;               ///< scheduler polls while the core was busy
  std::uint64_t polls_backlogged = 0;    ///< polls that left arrived batches for the next one
  std::uint64_t polls_on_send = 0;       ///< polls asked for by the send bound (aggregator.hpp)
  std::uint64_t context_switches = 0;    ///< worker-to-worker or worker-to-scheduler switches
  std::uint64_t os_yields = 0;           ///< lone yields given to the OS (--idle yield, sleep)
  std::uint64_t tasks_spawned = 0;
  std::uint64_t tasks_run = 0;
  std::uint64_t tasks_stolen = 0;    ///< tasks this core took from other cores
  std::uint64_t steal_attempts = 0;  ///< tries on a victim whose deque looked non-empty
  std::uint64_t workers_created = 0;
  std::uint64_t idle_ns = 0;        ///< time in the idle loop
  std::uint64_t busy_ns = 0;        ///< time outside it while the scheduler ran
  std::uint64_t ready_len_sum = 0;  ///< ready-queue length summed over samples
  std::uint64_t ready_len_samples = 0;
  std::uint64_t ready_len_max = 0;

  double idle_fraction() const;
  double average_packet_bytes() const;
  double average_ready_length() const;
  core_stats& operator+=(const core_stats& o);
  /// Counters since an earlier snapshot `o` of the same cores (ready_len_max
  /// is kept as it is). For the counters of one phase: after -= before.
  core_stats& operator-=(const core_stats& o);
};

/// Counters of every core of this process, indexed by local core. Call
/// between runs (after run() returns) for exact values.
std::vector<core_stats> stats_per_core();

/// Sum over the cores of this process.
core_stats stats_total();

/// (name, value) pairs of the totals and derived metrics, in a fixed order:
/// for JSON output and tests.
std::vector<std::pair<std::string, double>> stats_fields();

/// The same fields for given counters (e.g. the difference of two snapshots).
std::vector<std::pair<std::string, double>> stats_fields(const core_stats& t);

/// The --stats table: one row per core plus a total row.
std::string stats_table();

}  // namespace shoal
