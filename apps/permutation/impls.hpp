// The two implementations of `shoal permutation` (see permutation.cpp):
// each runs the whole problem (fill, timed phase, check) inside one
// shoal::run from the root task and returns what it measured and found.
#pragma once

#include <shoal/routing.hpp>

#include <cstdint>

#include "common/routed_traffic.hpp"
#include "permutation/plain/permutation_problem.hpp"

namespace shoal_apps::permutation {

/// Options only tests use.
struct test_hooks {
  bool inject_fault = false;  ///< store a wrong i for one element: validation must fail
};

/// What a run measured and found.
struct run_outcome {
  double seconds = 0;  ///< the timed phase
  permutation_tally tally;
};

/// How the distributed run ends its phase (--termination).
enum class termination {
  phases,  ///< two channels, each ended by end_phase (counting waves)
  depth,   ///< one channel, handlers send the dependent pebble, end_phase_depth(2)
};

/// Active Pebbles' single phase of dependent messages on typed channels,
/// arrays block-distributed over every core of the job. Blocking; root task.
run_outcome run_distributed(const permutation_options& o, const test_hooks& hooks,
                            termination how = termination::phases);

/// How the routed run travels (--routing, --reduce, --cache-slots).
struct route_choice {
  shoal::named_routing routing{};
  bool reduce_dedup = false;      ///< reduction::drop_duplicates on the channels
  std::uint32_t cache_slots = 0;  ///< per core, with reduce_dedup
};

/// What the routed run counted, job-wide.
struct routed_counts {
  routed_traffic traffic;       ///< reductions, forwarding and MPI traffic of the phase
  std::int64_t arrivals = 0;    ///< pebbles handled at their owners (both kinds)
  std::int64_t duplicates = 0;  ///< of them, at an element or slot already reached
  int depth = 0;                ///< --termination depth: the depth the phase ended with
};

/// The distributed run on target channels (routed.cpp): the same problem,
/// pebbles addressed to elements through a block distribution, routed and
/// optionally reduced by the library. Blocking; root task.
run_outcome run_routed(const permutation_options& o, const test_hooks& hooks, termination how,
                       const route_choice& route, routed_counts& counts);

/// data_perm[perm[data[i]]] = i in one loop on core 0, the same arrays in
/// one process: the reference for the speedup. Blocking; root task.
run_outcome run_sequential(const permutation_options& o, const test_hooks& hooks);

}  // namespace shoal_apps::permutation
