// The same input on every process. The apps that read files (--graph,
// --pool, --files) have every process read them itself, by the same name on
// its own file system; a node with a stale or damaged copy would build one
// graph from two inputs (a crash, or a run that validates against rank 0's
// copy alone). Each process digests what it read and the digests are
// compared before anything is built.
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"

namespace shoal_apps {

namespace detail {
inline std::uint64_t g_input_digest = 0;            // this process's, for the run below
inline std::vector<std::uint64_t> g_input_digests;  // every core's, indexed by core
}  // namespace detail

/// Throws input_error on every rank when some rank's `digest` (of the input
/// it read) differs from rank 0's, naming `what` (the flag and file names)
/// and those ranks. Collective: every rank calls it, from the main thread
/// (not inside shoal::run: it runs the job once, one allgather of 8 bytes a
/// core). Nothing to compare on one process.
inline void check_same_input_on_every_rank(std::uint64_t digest, const std::string& what) {
  if (shoal::ranks() == 1) return;
  detail::g_input_digest = digest;
  shoal::run([] {
    shoal::on_all_cores([] {
      std::vector<std::uint64_t> all = shoal::allgather(detail::g_input_digest);
      if (shoal::mycore() % shoal::local_cores() == 0) detail::g_input_digests = std::move(all);
    });
  });
  const std::vector<std::uint64_t> all = std::move(detail::g_input_digests);
  std::string differ;
  for (int r = 1; r < shoal::ranks(); ++r) {
    if (all[static_cast<std::size_t>(r * shoal::local_cores())] == all[0]) continue;
    if (differ.size() > 60) {
      differ += ", ...";
      break;
    }
    differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  }
  if (differ.empty()) return;
  throw input_error(fmt::format(
      "{}: rank(s) {} read other contents than rank 0; every process reads the input itself, "
      "so each must see the same file(s)",
      what, differ));
}

}  // namespace shoal_apps
