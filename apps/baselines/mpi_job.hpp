// Who am I in the MPI job: the two questions every plain-MPI baseline asks.
#pragma once

#include <mpi.h>

namespace shoal_baseline {

/// This process's rank in MPI_COMM_WORLD.
inline int my_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Processes in MPI_COMM_WORLD.
inline int rank_count() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

}  // namespace shoal_baseline
