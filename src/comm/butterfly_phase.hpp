// The phase collective (detail/phase_barrier.hpp) over hypercube edges, for
// jobs that route their control messages over the hypercube
// (route_control_over_hypercube, routing.hpp): recursive doubling instead
// of arrivals at global core 0, waves from it and a release.
//
// Why. Hop by hop, the coordinator's protocol costs up to ceil(log2 P) hops
// per leg: an arrival, two waves of two legs each (a draining collective
// whose messages were still in flight at the arrivals) and a release make
// about 6 ceil(log2 P) hop latencies, 24 at P = 16. On an oversubscribed
// machine a hop waits for its process to be scheduled (0.3-1 ms across the
// emulated hosts): gups --routing hypercube at 16 ranks there ran at direct
// routing's rate with its control messages sent directly, and 20-50%
// slower with them hop by hop (bench/results/pebbles.md). Here each round
// of sums takes
// log2 P hops and every process ends it with the job's sums, so it decides
// for itself: a collective with nothing in flight costs two rounds
// (2 log2 P hop latencies), with no release.
//
// Protocol (per slot; run by local core 0 of each process, in handlers).
// - A round k starts with the process's sample (the cores' counters,
//   summed; the arrival tally for the first round of a collective). Let
//   p2 be the largest power of two <= P. A process r >= p2 sends its sum to
//   r - p2 and waits for the total from it. Any other process first adds
//   the sum of r + p2 if that process exists, then for each bit d below
//   log2 p2 exchanges its running sum with r ^ 2^d and adds what it gets;
//   it then holds the job's sums and sends them to r + p2 if that exists.
//   Every partner is one bit away: a hypercube neighbour.
// - Decision, the same on every process (they all hold the same sums): an
//   arrival-only collective ends after its first round; a draining one
//   ends after round k > first when round k's sent equals round k-1's
//   handled (as message waves do: every sample of round k follows every
//   sample of round k-1, since a process starts round k only once it
//   holds round k-1's total). Otherwise every process samples again and
//   starts round k+1.
// - Round numbers run on across the collectives of a slot, the same on
//   every process. A partner can be at most one round ahead (it cannot
//   finish a round without this process's message), so messages that
//   arrive early wait in an inbox indexed by the round's parity.
// Every process must use this protocol or the coordinator's for a given
// collective: the switch must not change between the collectives of a
// program on one process and not on another.
// - Processes that disagree end the job in the collective's first round:
//   a round message names its sender and the collective (the slot's
//   collectives are counted alike on every process), and a process that
//   runs that collective by the coordinator (butterfly_coordinated) and
//   receives one, before or after it arrives, names both processes' settings.
//   Every process on the butterfly sends to a partner in the first round, so
//   some process running it by the coordinator hears of it.
#pragma once

#include "shoal/detail/message_waves.hpp"

#include <cstdint>

namespace shoal::detail {

/// Starts the butterfly collective of `slot` on this process with the sum
/// of its cores' arrival samples (zero when !drain); on local core 0 of
/// the process, from a handler. `collective`: the slot's collectives
/// completed on this process before this one (never reset: the same on
/// every process). Calls `release(slot)` there once the collective is over.
void butterfly_begin(std::uint32_t slot, std::uint64_t collective, std::uint32_t selector,
                     bool drain, const wave_totals& arrival, void (*release)(std::uint32_t slot));

/// This process runs collective `collective` of `slot` (counted as for
/// butterfly_begin; named `why`) by the coordinator, in a job of several
/// processes: ends the job, naming both settings, if another process has
/// sent it a round message of that collective or sends one later. Any
/// core (the one whose arrival completes the process's).
void butterfly_coordinated(std::uint32_t slot, std::uint64_t collective, const char* why);

/// Forgets every slot's rounds (runtime init).
void reset_butterfly_phases();

}  // namespace shoal::detail
