// The end every BCL table check shares (bcl_*_checks.hpp): read the wrong
// count the cores summed into `cnt`, then free the table and the counter.
#pragma once

#include "shoal/one_sided.hpp"
#include "shoal/shoal.hpp"

#include <cstdint>

namespace bcl_check_support {

/// The count at cnt; destroys `table` (a copy of the handle) and frees cnt.
/// Root task, after the cores have finished.
template <class Table>
std::uint64_t wrong_then_free(shoal::global_ptr<std::uint64_t> cnt, Table table) {
  const std::uint64_t wrong = shoal::rget(cnt);
  table.destroy();
  shoal::global_free(cnt);
  return wrong;
}

}  // namespace bcl_check_support
