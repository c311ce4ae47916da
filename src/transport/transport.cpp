// Which transport a process uses, made once per process (see transport.hpp).
#include "transport/transport.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace shoal::detail {
namespace {

std::unique_ptr<transport> g_transport;
transport_kind g_made_kind = transport_kind::automatic;

void say_refused(const std::string& why) {
  std::fprintf(stderr, "shoal: error: %s\n", why.c_str());
  std::fflush(stderr);
}

[[noreturn]] void refuse(const std::string& why) {
  say_refused(why);
  std::_Exit(2);
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : 0;
}

}  // namespace

bool launched_by_mpi(int& ranks) noexcept {
  // OpenMPI, MPICH/Hydra (PMI), PMIx launchers and Slurm's srun.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var) != nullptr) {
      ranks = std::max(1, env_int(var));
      return true;
    }
  }
  if (std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr) {
    ranks = std::max(1, env_int("SLURM_NTASKS"));
    return true;
  }
  ranks = 1;
  return false;
}

transport& obtain_transport(transport_kind kind, int join_s) {
  int announced = 1;
  const bool by_launcher = launched_by_mpi(announced);
  transport_kind want = kind;
  if (want == transport_kind::automatic)
    want = by_launcher && announced > 1 ? transport_kind::mpi : transport_kind::local;
  if (g_transport != nullptr) {
    if (want != g_made_kind)
      refuse(
          fmt::format("--transport {} asked for, but this process already uses the {} "
                      "transport (one per process)",
                      want == transport_kind::mpi ? "mpi" : "local", g_transport->name()));
    return *g_transport;
  }
  if (want == transport_kind::local && by_launcher && announced > 1) {
    const std::string why = fmt::format(
        "--transport local, but this process was started by an MPI launcher as one of {} "
        "ranks: each would run alone; drop --transport local, or start one process",
        announced);
    // Join the job first where this shoal has MPI, so that the refusal ends
    // every rank: MPICH's launcher left the other ranks waiting in MPI_Init
    // for this one (past 20 s) when it only exited.
    if (std::unique_ptr<transport> joined = make_mpi_transport(join_s)) {
      say_refused(why);
      joined->abort(2);
    }
    refuse(why);
  }
  if (want == transport_kind::mpi) {
    g_transport = make_mpi_transport(join_s);
    if (g_transport == nullptr)
      refuse(
          "--transport mpi: this shoal was built without MPI (install libopenmpi-dev and "
          "rebuild)");
  } else {
    g_transport = make_local_transport();
  }
  g_made_kind = want;
  return *g_transport;
}

// Reached only when one_sided.cpp was wrong about what this transport offers.
void transport::rma_get(int, std::size_t, void*, std::size_t, rma_handle&) {
  refuse(fmt::format("the {} transport has no RMA window (internal error)", name()));
}
void transport::rma_put(int, std::size_t, const void*, std::size_t, rma_handle&) {
  refuse(fmt::format("the {} transport has no RMA window (internal error)", name()));
}
void transport::rma_fetch_op(int, std::size_t, const void*, void*, int, rma_op, rma_handle&) {
  refuse(fmt::format("the {} transport has no RMA window (internal error)", name()));
}
void transport::rma_compare_swap(int, std::size_t, const void*, const void*, void*, int) {
  refuse(fmt::format("the {} transport has no RMA window (internal error)", name()));
}
bool transport::rma_test(rma_handle&) { return true; }
void transport::rma_flush_all() {}

transport* current_transport() noexcept { return g_transport.get(); }

}  // namespace shoal::detail
