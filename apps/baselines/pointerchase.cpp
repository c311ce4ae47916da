// shoal-baseline-pointerchase: Active Pebbles' PointerChase in plain C++ and
// MPI, the baseline `shoal pointerchase` is measured against. No shoal.
//
//   mpirun -np R shoal-baseline-pointerchase [--rounds n] [--seed s] [--json]
//
// The same ring (over ranks instead of cores), token, checks and report as
// the app (pointerchase/plain/ring.hpp). As in the paper's MPI version,
// every rank loops: receive the token (MPI_Recv from any source), check it,
// send it on to its successor. The send is an MPI_Isend completed after the
// next receive, so a ring of one rank (which sends to itself) cannot
// deadlock; on a ring of several it costs what MPI_Send would. Rank 0 sends
// the first token and times the run until the last hop comes back to it.
// Accepts --impl and --hold-us (0 only) and ignores the former, so a
// harness can pass the app's command line unchanged.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <mpi.h>

#include <fmt/format.h>

#include "baselines/mpi_job.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"
#include "pointerchase/plain/ring.hpp"

namespace {

namespace pc = shoal_apps::pointerchase;
using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

struct options {
  pc::chase_options chase;
  bool json = false;
  std::string impl = "mpi-sendrecv";
  double hold_us = 0;
};

/// Parses the command line; returns -1 to go on, else the exit status.
int parse(int argc, char** argv, options& o) {
  CLI::App cli{"shoal-baseline-pointerchase: PointerChase in plain MPI (MPI_Recv/MPI_Send)"};
  pc::add_chase_options(cli, o.chase);
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", o.impl, "accepted and ignored (the app's flag)");
  cli.add_option("--hold-us", o.hold_us, "accepted when 0 (the app's flag)");
  return shoal_baseline::parse_command_line(cli, "shoal-baseline-pointerchase", argc, argv);
}

constexpr int token_tag = 17;

/// Receives the token (from any rank) and checks it; returns it.
pc::token receive(pc::ring_seat& seat) {
  pc::token t{};
  MPI_Status st;
  MPI_Recv(&t, static_cast<int>(sizeof t), MPI_BYTE, MPI_ANY_SOURCE, token_tag, MPI_COMM_WORLD,
           &st);
  seat.arrive(t);
  if (st.MPI_SOURCE != t.from) ++seat.violations;  // the token lied about its sender
  return t;
}

/// This rank's part of the laps; returns the seconds rank 0 measured.
double chase(pc::ring_seat& seat) {
  pc::token out{};
  MPI_Request pending = MPI_REQUEST_NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (seat.pos == 0) {
    out = pc::first_token(seat);
    MPI_Isend(&out, static_cast<int>(sizeof out), MPI_BYTE, seat.succ, token_tag, MPI_COMM_WORLD,
              &pending);
  }
  for (std::int64_t v = 0; v < seat.rounds; ++v) {
    const pc::token t = receive(seat);
    MPI_Wait(&pending, MPI_STATUS_IGNORE);  // `out` is free again
    if (seat.last(t)) break;
    out = seat.next(t);
    MPI_Isend(&out, static_cast<int>(sizeof out), MPI_BYTE, seat.succ, token_tag, MPI_COMM_WORLD,
              &pending);
  }
  MPI_Wait(&pending, MPI_STATUS_IGNORE);
  return MPI_Wtime() - t0;
}

int run_main(int argc, char** argv) {
  options o;
  if (const int status = parse(argc, argv, o); status >= 0) return status;
  try {
    pc::check_options(o.chase);
    if (o.hold_us != 0)
      throw shoal_apps::input_error(
          fmt::format("--hold-us {}: the baseline takes only 0", o.hold_us));
  } catch (const shoal_apps::input_error& e) {
    if (my_rank() == 0) std::fprintf(stderr, "shoal-baseline-pointerchase: error: %s\n", e.what());
    return 2;
  }
  pc::ring_seat seat =
      pc::make_seat(pc::make_ring(rank_count(), o.chase.seed), my_rank(), o.chase.rounds);
  const double seconds = chase(seat);
  const pc::chase_tally mine = pc::chase_tally::of(seat);
  std::int64_t sums[3] = {mine.visits, mine.violations, mine.wrong_counts};
  std::int64_t total[3] = {0, 0, 0};
  MPI_Reduce(sums, total, 3, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  std::int64_t first_bad = mine.first_bad_hop < 0 ? INT64_MAX : mine.first_bad_hop;
  std::int64_t min_bad = 0;
  MPI_Reduce(&first_bad, &min_bad, 1, MPI_INT64_T, MPI_MIN, 0, MPI_COMM_WORLD);
  if (my_rank() != 0) return 0;
  const pc::chase_tally t{total[0], total[1], total[2], min_bad == INT64_MAX ? -1 : min_bad};
  shoal_apps::report out("pointerchase", "mpi-sendrecv");
  pc::fill_report(out, o.chase, rank_count(), "rank", seconds, t);
  return shoal_baseline::print_rank0_report(out, o.json);
}

}  // namespace

int main(int argc, char** argv) {
  return shoal_baseline::baseline_main("shoal-baseline-pointerchase", argc, argv, run_main);
}
