// The SPMD collective under barrier(), arrival_barrier() and
// channel::end_phase(): one task per core arrives; global core 0's task
// coordinates; every core returns once all have arrived and, for the
// draining forms, once the selected messages are drained.
//
// Protocol (per slot: one per channel id, one for barrier(), one for
// arrival_barrier(), so independent phases never mix).
// 1. Arrival: each core flushes, samples its counters (draining forms) and
//    adds them to its process's tally; the last core of a process sends the
//    process's sum to global core 0 (control stream).
// 2. Core 0's task waits until every process has arrived. The arrival sums
//    form wave 0 (every sample precedes the first sample of the next wave),
//    so a draining collective with nothing in flight costs one more wave
//    (message_waves.hpp).
// 3. Release: core 0 sends one message to each process's local core 0,
//    which wakes its cores. Costs per collective: C + P messages to arrive,
//    P + P*C + P per wave, P + P*C to release.
// A slot serves one collective at a time; the next one on the same slot may
// start on a core as soon as that core is released.
// With route_control_over_hypercube on (routing.hpp), steps 2 and 3 are
// replaced: the last core of each process starts rounds of recursive
// doubling between hypercube neighbours (src/comm/butterfly_phase.hpp), at
// whose end every process holds the job's sums and releases its own cores:
// every core, global core 0 included, just waits.
//
// Measured (tests/mpi/dist_phases.cpp CostOfEmptyBarrierAndEndPhase, median
// of 400 on core 0, Release, a 2-vCPU machine shared with other builds at
// load average 7-10, so these are upper bounds dominated by OS scheduling
// of ~50 us per message hop): 1x2: barrier() 220 us, end_phase() 220 us,
// arrival_barrier() 110 us (4 hops against 2); 2x2: barrier() 320 us,
// end_phase() 320-380 us, arrival_barrier() 160-170 us in the quieter runs
// (several ms when the host was saturated). An empty draining collective
// costs about twice an arrival-only one: one wave of depth 2 more. With
// control over hypercube edges (butterfly rounds), 8 x 1 on one host:
// barrier() 585-681 us against 1164-1296 us for this protocol hop by hop
// (bench/results/pebbles.md).
#pragma once

#include "shoal/detail/aggregator.hpp"

#include <cstdint>

namespace shoal::detail {

/// Slots: channel ids 1 .. control_stream-1, then these two.
inline constexpr std::uint32_t barrier_slot = control_stream;
inline constexpr std::uint32_t arrival_barrier_slot = max_streams;

/// Arrives at the collective of `slot`; returns when every core has arrived
/// and, when `drain`, every message counted by `selector` sent before the
/// last arrival (and its cascades) has been handled. One task per core;
/// suspends with label `why` #(collectives of this slot completed).
void phase_barrier(std::uint32_t slot, std::uint32_t selector, bool drain, const char* why);

/// Collectives of `slot` this process has completed (the watchdog tag).
std::int64_t phases_completed(std::uint32_t slot) noexcept;

/// Channel phases (channel.hpp): end_phase and drain of channel `id`, with
/// the misuse checks (closed or default channel, outside a task).
void end_channel_phase(std::uint32_t id);
void drain_channel(std::uint32_t id);
/// channel::end_phase_depth (channel_phase.cpp).
void end_channel_phase_depth(std::uint32_t id, int depth);
/// Ends the job, naming channel::`what`, unless channel `id` is open and
/// the caller is a task (channel_phase.cpp; fences use it too).
void check_channel_usable(std::uint32_t id, const char* what);
/// Forgets the phase count of channel `id` (it is being reopened).
void reset_channel_phases(std::uint32_t id) noexcept;

}  // namespace shoal::detail
