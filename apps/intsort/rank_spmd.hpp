// The shoal implementations of NPB IS (--impl block, run, key): SPMD
// ranking where every key travels to the core that ranks it on a typed
// channel (aggregated asynchronous messages), as the index of its counter
// in that core's histogram (route_kind says how the values are packed).
//
// Keys are block-distributed over all cores of the job (core c holds the
// indices [share_begin(N, c, C), share_begin(N, c+1, C))) and generated in
// parallel with NPB's jump-ahead. Each iteration, on every core:
//   1. NPB's modification of keys it, it+10 (by their holder);
//   2. the sizes of NPB's buckets over the held keys, summed element-wise
//      over all cores (shoal::allreduce_sum of a span; the 5 test keys'
//      values ride along in 5 extra slots);
//   3. the buckets are split into one contiguous key range per core, with
//      about the same number of keys each (the keys are bell-shaped); the
//      keys below a core's range are the sum of the buckets below it, so the
//      global rank base needs no scan;
//   4. each held key is counted into the local histogram if this core ranks
//      it, else sent on the channel to the core that does, whose handler
//      counts it; the channel's phase ends the step (channel::end_phase:
//      every key sent anywhere has been counted). Keys are staged first:
//      per stream (a run of buckets of one ranking core whose counters fit
//      an L1 cache), or in a job of two cores split into this core's and the
//      other's in registers, a chunk at a time;
//   5. a prefix sum turns the histogram into ranks; the owners of the test
//      keys check them against NPB's published values.
// After the timed iterations, full verification sends every key again (on a
// second channel) to its ranking core, which places it at its rank in its
// slice of the sorted array and checks the slice.
#pragma once

#include <cstdint>
#include <string>

#include "intsort/plain/npb_is.hpp"

namespace shoal_apps::intsort {

/// Which verification the hidden --inject-fault option breaks (for tests).
/// overflow: 300 keys of core 0's slice get one value before the first
/// iteration, so that value's 8-bit histogram counter wraps and the job
/// must end saying so (the parallel impls only: NPB's keys never put more
/// than about 90 keys on one value, see rank_spmd.cpp).
enum class fault_kind : std::int8_t { none, partial, full, overflow };

/// How keys travel to their ranking core (--impl).
enum class route_kind : std::int8_t {
  /// Bare 32-bit keys, each run staged for a core sent by one
  /// channel::send_run; the receiver counts each batch whole (deliver_run).
  run,
  /// 64-byte blocks of up to 15 keys, one channel value per block.
  block,
  /// Bare 32-bit keys, one channel::send per key, handled one by one.
  key,
};

/// Runs the benchmark on every core of the job and returns the outcome.
/// Root task (blocking: opens two channels, runs on_all_cores, closes them).
is_outcome run_channel(char class_name, route_kind route, fault_kind fault);

}  // namespace shoal_apps::intsort
