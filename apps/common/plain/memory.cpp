#include "common/plain/memory.hpp"

#include <iterator>

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

void check_memory(double need, double share, std::string_view claim, std::string_view advice) {
  const double have = physical_bytes();
  if (have == 0 || need <= share * have) return;
  throw input_error(fmt::format("{}, more than this machine's {} of memory{}{}", claim,
                                human_bytes(have), advice.empty() ? "" : "; ", advice));
}

}  // namespace shoal_apps
