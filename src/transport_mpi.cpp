// The MPI transport: the only file of shoal that includes <mpi.h>.
#include "transport.hpp"

#ifdef SHOAL_HAVE_MPI

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <mpi.h>

namespace shoal::detail {
namespace {

bool g_we_initialised = false;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

class mpi_transport final : public transport {
 public:
  mpi_transport() {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      // Serialized: shoal's cores take turns in MPI under mu_.
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        std::fputs("shoal: error: MPI_Init_thread failed\n", stderr);
        std::_Exit(2);
      }
      if (provided < MPI_THREAD_SERIALIZED) {
        std::fprintf(stderr,
                     "shoal: error: this MPI provides thread level %d, shoal needs "
                     "MPI_THREAD_SERIALIZED (%d)\n",
                     provided, MPI_THREAD_SERIALIZED);
        std::_Exit(2);
      }
      g_we_initialised = true;
      std::atexit(finalize_at_exit);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
  }

  const char* name() const noexcept override { return "mpi"; }
  int rank() const noexcept override { return rank_; }
  int ranks() const noexcept override { return ranks_; }

  void barrier() override {
    std::lock_guard<std::mutex> lock(mu_);
    MPI_Barrier(comm_);
  }
  void allreduce_sum(std::uint64_t* v, int n) override {
    std::lock_guard<std::mutex> lock(mu_);
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, comm_);
  }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes),
                  MPI_BYTE, comm_);
  }
  [[noreturn]] void abort(int status) noexcept override {
    // No lock: abort must work while another thread is inside MPI.
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; be sure
  }

 private:
  std::mutex mu_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 1;
};

}  // namespace

std::unique_ptr<transport> make_mpi_transport() { return std::make_unique<mpi_transport>(); }

}  // namespace shoal::detail

#else  // built without MPI

namespace shoal::detail {
std::unique_ptr<transport> make_mpi_transport() { return nullptr; }
}  // namespace shoal::detail

#endif
