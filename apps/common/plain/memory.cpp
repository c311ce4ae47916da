#include "common/plain/memory.hpp"

#include <iterator>

#include <sys/resource.h>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"

namespace shoal_apps {

std::string human_bytes(double bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (bytes >= 1024.0 && u + 1 < std::size(units)) {
    bytes /= 1024.0;
    ++u;
  }
  return fmt::format("{:.3g} {}", bytes, units[u]);
}

double address_space_bytes() {
  rlimit r{};
  if (getrlimit(RLIMIT_AS, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<double>(r.rlim_cur);
}

void check_memory(double need, double share, std::string_view claim, std::string_view advice) {
  const std::string tail = advice.empty() ? std::string() : fmt::format("; {}", advice);
  const double have = physical_bytes();
  if (have > 0 && need > share * have)
    throw input_error(
        fmt::format("{}, more than this machine's {} of memory{}", claim, human_bytes(have), tail));
  // A `ulimit -v` bound is per process and the need is the job's: comparing
  // the two is conservative for several processes, but a single process would
  // otherwise die of bad_alloc part way through construction.
  const double limit = address_space_bytes();
  if (limit > 0 && need > share * limit)
    throw input_error(
        fmt::format("{}, more than this process's address-space limit (ulimit -v) "
                    "of {}{}",
                    claim, human_bytes(limit), tail));
}

}  // namespace shoal_apps
