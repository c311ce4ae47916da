#include "runtime/idle_choice.hpp"

#include <algorithm>
#include <cstdlib>

#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

namespace shoal::detail {

idle_choice choose_idle(idle_kind asked, int cores, const cpu_picture& p) {
  switch (asked) {
    case idle_kind::spin:
      return {idle_policy::spin(), "spin (--idle spin)"};
    case idle_kind::yield:
      return {idle_policy::yield(), "yield (--idle yield)"};
    case idle_kind::sleep:
      return {idle_policy::sleep(), "sleep (--idle sleep)"};
    case idle_kind::automatic:
      break;
  }
  const long threads = static_cast<long>(p.local_ranks) * cores;
  if (cores > p.mask_cpus)
    return {idle_policy::sleep(),
            fmt::format("sleep (auto: {} cores > {} CPUs in this rank's affinity mask)", cores,
                        p.mask_cpus)};
  if (threads > p.node_cpus)
    return {idle_policy::sleep(), fmt::format("sleep (auto: {} ranks on this node x {} cores > {} "
                                              "CPUs)",
                                              p.local_ranks, cores, p.node_cpus)};
  return {
      idle_policy::mixed(),
      fmt::format(
          "spin 50 us, yield to 20 ms, then sleep 200 us at most (auto: {} ranks on this node x {} "
          "cores <= {} CPUs)",
          p.local_ranks, cores, p.node_cpus)};
}

cpu_picture this_cpu_picture(int ranks) {
  cpu_picture p;
  if (ranks > 1) {
    for (const char* var : {"RANKS_PER_NODE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                            "SLURM_NTASKS_PER_NODE"}) {
      if (const char* v = std::getenv(var)) {
        const long n = std::strtol(v, nullptr, 10);
        if (n >= 1 && n <= ranks) {
          p.local_ranks = static_cast<int>(n);
          break;
        }
      }
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  p.node_cpus = online > 0 ? static_cast<int>(online) : 1;
  p.mask_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : p.node_cpus;
  p.mask_cpus = std::max(p.mask_cpus, 1);
  return p;
}

}  // namespace shoal::detail
