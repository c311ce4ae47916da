// Facts about this process and job that inline code needs on hot paths.
// Written once by init(), read-only while the runtime runs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shoal::detail {

struct process_info {
  int rank = 0;                   // this process
  int ranks = 1;                  // processes in the job
  int local_cores = 0;            // cores of this process
  int total_cores = 0;            // cores of the job
  int rank_base = 0;              // global id of this process's core 0
  std::int64_t block_bytes = 64;  // block of linear global arrays
  char* heap_base = nullptr;      // global heap of this process
  std::size_t segment_bytes = 0;  // heap bytes per core (same on every core)
  bool running = false;           // inside run()
};

inline process_info g_info;

/// Incremented by every init(): per_core slots belong to one job.
inline std::uint64_t g_init_epoch = 0;

/// Global core id of the calling thread; -1 outside shoal's cores.
inline thread_local int tls_core = -1;

}  // namespace shoal::detail
