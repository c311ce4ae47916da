// The two implementations of `shoal permutation` (see permutation.cpp):
// each runs the whole problem (fill, timed phase, check) inside one
// shoal::run from the root task and returns what it measured and found.
#pragma once

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

/// data_perm[perm[data[i]]] = i in one loop on core 0, the same arrays in
/// one process: the reference for the speedup. Blocking; root task.
run_outcome run_sequential(const permutation_options& o, const test_hooks& hooks);

}  // namespace shoal_apps::permutation
