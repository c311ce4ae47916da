// mpi_probe: start-up and failure handling of a job of several processes,
// driven by tests/CMakeLists.txt under mpirun (see run_expect.cmake).
//
//   mpi_probe [shoal flags]          init, check the transport's collectives
//                                     on every rank, print "probe: PASSED"
//   mpi_probe --fail-rank K           rank K fails (shoal's fatal path) after
//                                     init while the others wait in a barrier
//   mpi_probe --kill-rank K           rank K dies by SIGKILL after init
//
// Every rank checks what it can see itself; a wrong value exits non-zero.
#include "shoal/shoal.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "transport.hpp"

namespace {

int flag_value(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return -1;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "probe: FAILED on rank %d: %s\n", shoal::myrank(), what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  const int fail_rank = flag_value(argc, argv, "--fail-rank");
  const int kill_rank = flag_value(argc, argv, "--kill-rank");
  auto* net = shoal::detail::current_transport();
  if (net == nullptr) return fail("no transport after init");
  const int rank = shoal::myrank();
  const int ranks = shoal::ranks();
  if (net->rank() != rank || net->ranks() != ranks) return fail("rank/ranks disagree");
  if (shoal::cores() != ranks * shoal::local_cores()) return fail("cores() != ranks * local cores");

  if (rank == fail_rank) {
    shoal::detail::fatal_user("probe failure requested by --fail-rank");
  }
  if (rank == kill_rank) std::raise(SIGKILL);
  if (fail_rank >= 0 || kill_rank >= 0) {
    net->barrier();  // the failed rank never arrives: the job must end anyway
    return fail("barrier passed although a rank failed");
  }

  // Collectives: sums and a gather of values every rank can predict.
  std::uint64_t v[2] = {static_cast<std::uint64_t>(rank) + 1, 1};
  net->allreduce_sum(v, 2);
  const auto n = static_cast<std::uint64_t>(ranks);
  if (v[0] != n * (n + 1) / 2 || v[1] != n) return fail("allreduce_sum gave a wrong sum");
  std::vector<int> all(static_cast<std::size_t>(ranks), -1);
  const int mine = rank * 7 + 3;
  net->allgather(&mine, all.data(), sizeof mine);
  for (int r = 0; r < ranks; ++r)
    if (all[static_cast<std::size_t>(r)] != r * 7 + 3) return fail("allgather gave a wrong value");
  net->barrier();
  if (rank == 0)
    std::printf("probe: %d ranks x %d cores, transport %s: PASSED\n", ranks, shoal::local_cores(),
                net->name());
  shoal::finalize();
  return 0;
}
