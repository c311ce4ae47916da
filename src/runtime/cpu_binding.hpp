// Which CPUs this process's cores may run on: --bind.
//
// Why. Launchers bind each rank to the CPUs they think it needs: Open MPI's
// mpirun binds to one core per rank when it starts two ranks or fewer, so
// `mpirun -np 1 shoal app --cores 2` ran both of shoal's cores on one CPU.
// Every message between them then waited for the other thread's time slice:
// an empty barrier at 1 x 2 took 42 us under mpirun against 1.3 us without
// it (dist_phases CostOfEmptyBarrierAndEndPhase).
//
// Contract. --bind keep never changes the affinity. --bind auto (the
// default) widens it only when all of these hold:
//   - this process has more cores than CPUs in its affinity mask;
//   - the node has a CPU for every core of every rank on it (ranks on the
//     node x cores <= online CPUs), so the widened ranks do not overlap;
//   - this rank's index on its node is known (OMPI_COMM_WORLD_LOCAL_RANK,
//     MPI_LOCALRANKID, SLURM_LOCALID; or it is alone on its node).
// Then the process (and the cores it starts afterwards) may run on online
// CPUs [local rank x cores, (local rank + 1) x cores): each rank its own
// block, as the launcher would have done had it known about the cores.
// Threads started before init (the launcher's, MPI's) keep their mask. A
// refused sched_setaffinity (a cpuset without those CPUs) keeps the mask
// and says why in --verbose. Cost: a few system calls at init.
#pragma once

#include "shoal/config.hpp"

#include <string>
#include <vector>

#include "runtime/idle_choice.hpp"

namespace shoal::detail {

struct binding_choice {
  std::vector<int> cpus;  // the CPUs to run on; empty: keep the mask
  std::string words;      // for --verbose
};

/// Pure: what --bind `asked` does for `cores` per process given the picture,
/// this rank's index on its node (-1: not known) and the node's online CPUs.
binding_choice choose_binding(bind_kind asked, int cores, const cpu_picture& p, int local_rank,
                              const std::vector<int>& online);

/// This rank's index on its node from the launcher's environment; -1 when
/// none says. `ranks` as this_cpu_picture's.
int this_local_rank(int ranks);

/// The online CPUs of the node (/sys/devices/system/cpu/online, else
/// 0..sysconf(_SC_NPROCESSORS_ONLN)-1).
std::vector<int> online_cpus();

/// Applies a choice to the calling thread (the threads it starts inherit
/// it); returns the words for --verbose, with the error if it was refused.
std::string apply_binding(const binding_choice& c);

}  // namespace shoal::detail
