// hash_map with serialised values (bcl/object.hpp) under mpirun with each
// one-sided backend forced:
//
//   mpirun -np R bcl_object_job --cores C --one-sided direct|shm|rma|am [--misuse arena-full]
//
// Runs every check of bcl_object_checks.hpp in one job and prints, on rank
// 0, "bcl_object <backend>: <k> checks, <w> wrong values: PASSED|FAILED"
// (exit 1 when any failed). --misuse arena-full overfills the arena of the
// last core (on the last rank only): the job must end, status 2, naming the
// table and arena_bytes_per_core (tests/bcl.cmake).
#include <cstdio>
#include <cstring>
#include <string>

#include "bcl_object_checks.hpp"
#include "mpi/check_tally.hpp"

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--misuse") == 0 && std::strcmp(argv[i + 1], "arena-full") == 0) {
      shoal::run([] { bcl_object_checks::overfill_arena_on(shoal::cores() - 1); });
      std::fprintf(stderr, "misuse arena-full was not caught\n");
      return 0;
    }
  const std::string backend = shoal::one_sided_backend_name();
  shoal_test::check_tally tally;
  shoal::run([&] {
    using namespace bcl_object_checks;
    tally.note("strings_round_trip", strings_round_trip(6));
    tally.note("vectors_round_trip", vectors_round_trip(6));
    tally.note("readings_round_trip", readings_round_trip(6));
    tally.note("replace_values", replace_values(5, 4));
    tally.note("finds_racing_inserts", finds_racing_inserts(30));
    tally.note("arena_filled_values_kept", arena_filled_values_kept());
    tally.note("string_queue_push_pop", string_queue_push_pop(30));
    tally.note("string_checksum_queue_push_pop", string_queue_push_pop<string_checksum_queue>(30));
    tally.note("vector_fast_queue_phases", vector_fast_queue_phases(24));
  });
  return tally.report_and_finalize("bcl_object", backend);
}
