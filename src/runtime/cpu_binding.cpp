#include "runtime/cpu_binding.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

namespace shoal::detail {
namespace {

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

binding_choice choose_binding(bind_kind asked, int cores, const cpu_picture& p, int local_rank,
                              const std::vector<int>& online) {
  if (asked == bind_kind::keep) return {{}, "kept (--bind keep)"};
  if (cores <= p.mask_cpus)
    return {{},
            fmt::format("kept (auto: {} cores <= {} CPUs in this rank's affinity mask)", cores,
                        p.mask_cpus)};
  const long need = static_cast<long>(p.local_ranks) * cores;
  if (need > static_cast<long>(online.size()))
    return {{},
            fmt::format("kept (auto: {} ranks on this node x {} cores > {} online CPUs: "
                        "oversubscribed either way)",
                        p.local_ranks, cores, online.size())};
  if (local_rank < 0 && p.local_ranks == 1) local_rank = 0;
  if (local_rank < 0 || local_rank >= p.local_ranks)
    return {{},
            "kept (auto: this rank's index on its node is not known; the launcher sets none "
            "of OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID)"};
  const auto first = static_cast<std::size_t>(local_rank) * static_cast<std::size_t>(cores);
  std::vector<int> cpus(online.begin() + static_cast<std::ptrdiff_t>(first),
                        online.begin() + static_cast<std::ptrdiff_t>(first) + cores);
  return {cpus, fmt::format("CPUs {} (auto: {} cores > {} CPUs in the launcher's mask; local "
                            "rank {} of {})",
                            cpu_list(cpus), cores, p.mask_cpus, local_rank, p.local_ranks)};
}

int this_local_rank(int ranks) {
  if (ranks <= 1) return 0;
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* v = std::getenv(var)) {
      char* end = nullptr;
      const long n = std::strtol(v, &end, 10);
      if (end != v && *end == '\0' && n >= 0 && n < ranks) return static_cast<int>(n);
    }
  }
  return -1;
}

std::vector<int> online_cpus() {
  std::vector<int> out;
  // The kernel's list format: "0-3,8,10-11".
  std::ifstream f("/sys/devices/system/cpu/online");
  std::string line;
  if (f && std::getline(f, line)) {
    std::stringstream ss(line);
    std::string part;
    while (std::getline(ss, part, ',')) {
      int a = 0;
      int b = 0;
      if (std::sscanf(part.c_str(), "%d-%d", &a, &b) == 2 && a <= b && b - a < 65536) {
        for (int c = a; c <= b; ++c) out.push_back(c);
      } else if (std::sscanf(part.c_str(), "%d", &a) == 1) {
        out.push_back(a);
      }
    }
  }
  if (out.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < (n > 0 ? n : 1); ++c) out.push_back(static_cast<int>(c));
  }
  return out;
}

std::string apply_binding(const binding_choice& c) {
  if (c.cpus.empty()) return c.words;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : c.cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return fmt::format("kept: widening to {} was refused ({})", c.words, std::strerror(errno));
  return c.words;
}

}  // namespace shoal::detail
