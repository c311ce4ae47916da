// What every plain-MPI baseline shares: who am I in the MPI job, its main()
// (an exception on any rank ends the whole job with a message), and how the
// rank-0 report is printed.
#pragma once

#include <climits>
#include <cstdio>
#include <exception>
#include <string>

#include <mpi.h>

#include <CLI/CLI.hpp>

#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"

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

/// Parses argv on every rank (each sees the same line, so all agree). Returns
/// -1 to go on, else the exit status: 0 after --help (printed by rank 0), 2
/// for a refused command line, which rank 0 names as "<program>: error: ...",
/// like any other bad input.
inline int parse_command_line(CLI::App& cli, const char* program, int argc, char** argv) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return my_rank() == 0 ? cli.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    if (my_rank() == 0) std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return 2;
  }
  return -1;
}

/// Thrown on every rank at once to end the job with `code`.
struct job_exit {
  int code;
};

/// Collective: runs `fn` on every rank. If it threw input_error anywhere, the
/// lowest rank that failed prints "<program>: error: <message>" and every rank
/// throws job_exit{2}.
template <class F>
void collectively(const char* program, F&& fn) {
  std::string error;
  try {
    fn();
  } catch (const shoal_apps::input_error& e) {
    error = e.what();
    if (error.empty()) error = "bad input";
  }
  const int rank = my_rank();
  int failed = error.empty() ? INT_MAX : rank;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (failed == INT_MAX) return;
  if (failed == rank) std::fprintf(stderr, "%s: error: %s\n", program, error.c_str());
  throw job_exit{2};
}

/// Prints the report on rank 0 (the job's shape: one core per rank; no runtime
/// counters) and returns the exit status: 0 when validated and written, else 1.
inline int print_rank0_report(shoal_apps::report& out, bool json) {
  out.set_shape(rank_count(), rank_count());
  out.set_stats(nlohmann::json::object());
  if (!shoal_apps::print_report(out, json)) return 1;
  return out.validated() ? 0 : 1;
}

/// main() of a baseline: MPI_Init, body(argc, argv) for the exit status,
/// MPI_Finalize. job_exit (thrown on every rank) ends with its code; any other
/// exception is a failure on one rank while the others may be inside a
/// collective, so it is printed with the rank and ends every rank (MPI_Abort,
/// status 1).
template <class Body>
int baseline_main(const char* program, int argc, char** argv, Body body) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    status = body(argc, argv);
  } catch (const job_exit& e) {
    status = e.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: failed on rank %d: %s\n", program, my_rank(), e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

}  // namespace shoal_baseline
