// What the apps ask of the machine they run on (no shoal here: the plain-MPI
// baselines use it too).
#pragma once

#include <unistd.h>

namespace shoal_apps {

/// This machine's memory in bytes (0 if unknown): the bound of the apps'
/// up-front memory checks.
inline double physical_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

}  // namespace shoal_apps
