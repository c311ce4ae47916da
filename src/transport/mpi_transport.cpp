// The MPI transport: the only file of shoal that includes <mpi.h>.
#include "transport/transport.hpp"

#include "shoal/detail/thread_safety.hpp"

#ifdef SHOAL_HAVE_MPI

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <vector>

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
    lock_guard lock(mu_);
    MPI_Barrier(comm_);
  }
  void allreduce_sum(std::uint64_t* v, int n) override {
    lock_guard lock(mu_);
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, comm_);
  }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    lock_guard lock(mu_);
    MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE,
                  comm_);
  }
  [[noreturn]] void abort(int status) noexcept override {
    // No lock: abort must work while another thread is inside MPI.
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; be sure
  }

  ~mpi_transport() override {
    for (char* p : owned_) std::free(p);
  }

  void start_messages(std::size_t max_bytes, int receives) override {
    if (!recv_requests_.empty()) return;  // kept across init/finalize cycles
    max_bytes_ = max_bytes;
    recv_buffers_.resize(static_cast<std::size_t>(receives));
    recv_requests_.assign(static_cast<std::size_t>(receives), MPI_REQUEST_NULL);
    for (int i = 0; i < receives; ++i) {
      recv_buffers_[static_cast<std::size_t>(i)] = receive_buffer();
      post_receive(i);
    }
    done_.resize(static_cast<std::size_t>(receives));
  }

  void recycle(char* data) override { spare_.push_back(data); }

  void send(int dest, const void* data, std::size_t bytes, void* token) override {
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, message_tag, comm_, &r);
    send_requests_.push_back(r);
    send_tokens_.push_back(token);
  }

  void start_allreduce_sum(std::uint64_t* v, int n) override {
    MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, comm_, &collective_);
  }
  bool allreduce_done() override {
    if (collective_ == MPI_REQUEST_NULL) return true;
    int complete = 0;
    MPI_Test(&collective_, &complete, MPI_STATUS_IGNORE);
    return complete != 0;
  }

  bool poll(const events& e, bool receive) override {
    bool any = false;
    if (!send_requests_.empty()) {
      int n = 0;
      done_.resize(std::max(done_.size(), send_requests_.size()));
      MPI_Testsome(static_cast<int>(send_requests_.size()), send_requests_.data(), &n, done_.data(),
                   MPI_STATUSES_IGNORE);
      if (n > 0 && n != MPI_UNDEFINED) {
        any = true;
        for (int k = 0; k < n; ++k)
          e.sent(e.context,
                 send_tokens_[static_cast<std::size_t>(done_[static_cast<std::size_t>(k)])]);
        // Compact: drop the finished (now MPI_REQUEST_NULL) entries, keep order.
        std::size_t w = 0;
        for (std::size_t i = 0; i < send_requests_.size(); ++i) {
          if (send_requests_[i] == MPI_REQUEST_NULL) continue;
          send_requests_[w] = send_requests_[i];
          send_tokens_[w] = send_tokens_[i];
          ++w;
        }
        send_requests_.resize(w);
        send_tokens_.resize(w);
      }
    }
    // Receives are matched in the order they were posted, so delivering
    // them in that order keeps each source's messages in sending order.
    // At most one round of the posted receives per call: a fast sender must
    // not keep this loop (and the caller's memory) growing without bound.
    for (std::size_t round = posted_.size(); receive && round > 0 && !posted_.empty(); --round) {
      const int i = posted_.front();
      int complete = 0;
      MPI_Status status;
      MPI_Test(&recv_requests_[static_cast<std::size_t>(i)], &complete, &status);
      if (!complete) break;
      posted_.pop_front();
      any = true;
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      char*& slot = recv_buffers_[static_cast<std::size_t>(i)];
      if (e.received(e.context, status.MPI_SOURCE, slot, static_cast<std::size_t>(bytes)))
        slot = receive_buffer();  // the receiver keeps the one that arrived
      post_receive(i);
    }
    return any;
  }

 private:
  static constexpr int message_tag = 7;

  // A spare receive buffer, or a new one. Bounded: the receiver keeps
  // buffers only up to its receive limit, then stops taking arrivals.
  char* receive_buffer() {
    if (!spare_.empty()) {
      char* p = spare_.back();
      spare_.pop_back();
      return p;
    }
    auto* p = static_cast<char*>(std::aligned_alloc(64, (max_bytes_ + 63) / 64 * 64));
    if (p == nullptr) {
      std::fputs("shoal: error: out of memory for an MPI receive buffer\n", stderr);
      abort(2);
    }
    owned_.push_back(p);
    return p;
  }

  void post_receive(int i) {
    MPI_Irecv(recv_buffers_[static_cast<std::size_t>(i)], static_cast<int>(max_bytes_),
              MPI_BYTE, MPI_ANY_SOURCE, message_tag, comm_,
              &recv_requests_[static_cast<std::size_t>(i)]);
    posted_.push_back(i);
  }

  std::size_t max_bytes_ = 0;
  std::vector<char*> recv_buffers_;  // posted, by receive slot
  std::vector<char*> spare_;         // handed back by the receiver
  std::vector<char*> owned_;         // every receive buffer, freed with the transport
  std::vector<MPI_Request> recv_requests_;
  std::vector<MPI_Request> send_requests_;
  std::vector<void*> send_tokens_;
  std::vector<int> done_;
  std::deque<int> posted_;  // receive indices in posting order
  annotated_mutex mu_;      // guards no field: serialises the collectives on comm_
  MPI_Request collective_ = MPI_REQUEST_NULL;
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
