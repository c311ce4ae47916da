// Which idle policy (tasks/scheduler.hpp) this process's cores use: --idle,
// with auto resolved from how many threads want the node's CPUs.
//
// Contract. auto is "sleep" when the node is oversubscribed and "mixed"
// (spin 50 us, yield until 20 ms, then sleep at most 200 us at a time)
// otherwise. Oversubscribed: this process has more cores than CPUs in its affinity mask (a launcher that
// binds each rank to one CPU), or the ranks on this node times the cores
// of each exceed the node's CPUs (online CPUs; with no binding this is also
// the mask). The ranks on the node come from the launcher's environment
// (RANKS_PER_NODE, OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
// SLURM_NTASKS_PER_NODE), 1 when none says. Not seen: several unbound ranks
// in a container whose cpuset is smaller than the online CPUs (say
// --idle sleep there). Cost: a few system calls at
// init, no messages.
#pragma once

#include "shoal/config.hpp"

#include <string>

#include "tasks/scheduler.hpp"

namespace shoal::detail {

/// What the machine looks like to one process.
struct cpu_picture {
  int local_ranks = 1;  // processes of the job on this node
  int mask_cpus = 1;    // CPUs this process may run on
  int node_cpus = 1;    // CPUs of the node
};

struct idle_choice {
  idle_policy policy;
  std::string words;  // for --verbose, e.g. "sleep (auto: 12 ranks x 2 cores > 2 CPUs)"
};

/// Pure: the policy for `asked` given `cores` per process and the picture.
idle_choice choose_idle(idle_kind asked, int cores, const cpu_picture& p);

/// The picture of this process: the launcher's environment, the affinity
/// mask and the online CPUs. `ranks` is the job's size (a job of one
/// process has one rank on its node whatever the environment says).
cpu_picture this_cpu_picture(int ranks);

}  // namespace shoal::detail
