// The traffic of a phase on target channels (routed, perhaps reduced),
// summed over the job and put in the report: what the reduction caches
// looked up and removed, what routing handed on at intermediate hops, and
// what went to MPI. Shared by the apps that take --routing and --reduce.
//
//   mark_phase_traffic();            // every core, before the phase's barrier
//   ... the phase, ended by a barrier ...
//   const routed_traffic t = sum_routed_traffic(ch1, ch2);  // every core
//   report_routed_traffic(out, t);   // rank 0
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>

#include "common/plain/report.hpp"

namespace shoal_apps {

struct routed_traffic {
  std::int64_t lookups = 0;       ///< values through the reduction caches
  std::int64_t removed = 0;       ///< of them, folded into a staged one (messages removed)
  std::int64_t forwarded = 0;     ///< values handed on at intermediate routing hops
  std::int64_t mpi_messages = 0;  ///< network buffers handed to MPI since the mark
  std::int64_t mpi_bytes = 0;     ///< their bytes
};

namespace detail {
/// This process's MPI traffic at the last mark (its first core writes it).
inline shoal::network_traffic traffic_at_mark;

/// A per-process count summed over the job (only each process's first core adds).
inline std::int64_t per_process_sum(std::uint64_t here) {
  const bool first = shoal::mycore() % shoal::local_cores() == 0;
  return shoal::allreduce_sum(first ? static_cast<std::int64_t>(here) : 0);
}
}  // namespace detail

/// Notes this process's MPI traffic. SPMD, every core, before the barrier
/// that opens the phase.
inline void mark_phase_traffic() {
  if (shoal::mycore() % shoal::local_cores() == 0)
    detail::traffic_at_mark = shoal::local_network_traffic();
}

/// The job's traffic since mark_phase_traffic(), over the phase's channels
/// (each counts per process). SPMD, every core, after the phase's barrier;
/// every core gets the sums (several allreduces).
template <class... Channels>
routed_traffic sum_routed_traffic(const Channels&... chs) {
  std::uint64_t lookups = 0, hits = 0, forwarded = 0;
  (
      [&](const auto& ch) {
        const shoal::reduction_stats r = ch.local_reduction_stats();
        lookups += r.lookups;
        hits += r.hits;
        forwarded += ch.local_route_stats().forwarded;
      }(chs),
      ...);
  const shoal::network_traffic now = shoal::local_network_traffic();
  const shoal::network_traffic& then = detail::traffic_at_mark;
  routed_traffic t;
  t.lookups = detail::per_process_sum(lookups);
  t.removed = detail::per_process_sum(hits);
  t.forwarded = detail::per_process_sum(forwarded);
  t.mpi_messages = detail::per_process_sum(now.network_buffers_sent - then.network_buffers_sent);
  t.mpi_bytes = detail::per_process_sum(now.bytes - then.bytes);
  return t;
}

/// messages_removed and reduction_hit_rate, and with --stats the raw counts.
inline void report_routed_traffic(report& out, const routed_traffic& t) {
  out.set("messages_removed", t.removed);
  out.set("reduction_hit_rate",
          t.lookups == 0 ? 0.0 : static_cast<double>(t.removed) / static_cast<double>(t.lookups));
  if (shoal::current_config().stats) {
    out.set("stats_reduction_lookups", t.lookups, false);
    out.set("stats_messages_removed", t.removed, false);
    out.set("stats_values_forwarded", t.forwarded, false);
    out.set("stats_mpi_messages", t.mpi_messages, false);
    out.set("stats_mpi_bytes", t.mpi_bytes, false);
  }
}

}  // namespace shoal_apps
