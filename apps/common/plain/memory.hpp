// What the apps ask of the machine's memory before they start: how much
// there is, how to print a size, and the up-front check that turns a
// problem too large for this machine into an input_error instead of a
// swap storm or an out-of-memory kill. No shoal here: the plain-MPI
// baselines use it too.
#pragma once

#include <string>
#include <string_view>

#include <unistd.h>

namespace shoal_apps {

/// This machine's memory in bytes (0 if unknown): the bound of the apps'
/// up-front memory checks.
inline double physical_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

/// "512 KiB", "8 GiB", "2 TiB": the largest unit that keeps the number >= 1
/// (three significant digits).
std::string human_bytes(double bytes);

/// This process's address-space limit (RLIMIT_AS, `ulimit -v`) in bytes; 0
/// when there is none.
double address_space_bytes();

/// Throws input_error when a run needing `need` bytes on this machine would
/// use more than `share` (a fraction, e.g. 0.8) of its physical memory or of
/// the address-space limit; never when that memory is unknown. The message is `claim` (which names
/// the flags and the need, e.g. "--elements 9: the arrays need 3 GiB"), then
/// ", more than this machine's <memory> of memory", then "; <advice>" when
/// `advice` is not empty. Set-up only (reads the machine once).
void check_memory(double need, double share, std::string_view claim, std::string_view advice = {});

}  // namespace shoal_apps
