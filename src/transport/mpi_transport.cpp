// The MPI transport: with mpi_peer_watch.cpp (liveness and departure), the
// only files of shoal that include <mpi.h>.
#include "shoal/detail/thread_safety.hpp"
#include "shoal/exit_status.hpp"

#include "transport/transport.hpp"

#ifdef SHOAL_HAVE_MPI

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <mpi.h>

#include "transport/mpi_peer_watch.hpp"

namespace shoal::detail {
namespace {

bool g_we_initialised = false;
transport* g_mpi = nullptr;  // the one mpi_transport, for the exit hook

// A process that exits without leave() leaves here: MPI_Finalize waits for
// every rank, so a rank that exits alone must not reach it (the job would
// hang); leave() ends the job instead when the others do not follow.
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_mpi != nullptr) g_mpi->leave(-1, {});
  MPI_Finalize();
}

// MPI_Init waits for every rank of the job to start MPI; a rank that never
// does (another program, or one that exited before) would hang it forever.
// Ends the process after join_s: the launcher then ends the job, since a
// rank that started MPI exited without finalizing.
class init_timer {
 public:
  explicit init_timer(int join_s)
      : thread_([this, join_s] {
          std::unique_lock lock(mu_);
          if (done_cv_.wait_for(lock, std::chrono::seconds(join_s), [this] { return done_; }))
            return;
          const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
          if (rank == nullptr) rank = std::getenv("PMI_RANK");
          std::fprintf(stderr,
                       "shoal: fatal on rank %s: MPI_Init did not finish within %d s (--join-s): "
                       "some rank of the job never started MPI (a program other than shoal, or "
                       "one that exited before start-up)\n",
                       rank != nullptr ? rank : "?", join_s);
          std::fflush(stderr);
          std::_Exit(exit_status::fatal);
        }) {}
  ~init_timer() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

class mpi_transport final : public transport {
 public:
  explicit mpi_transport(int join_s) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      init_timer timer(join_s);
      // OpenMPI 4.1's default RMA component (osc/rdma) over its shared-memory
      // transport (vader) crashes in MPI_Compare_and_swap on a rank's own
      // window. pt2pt (windows made by MPI_Win_create) and sm (shared
      // windows) do not; a user's own choice (the variable set) wins.
      setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
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
    if (ranks_ > 1) watch_ = std::make_unique<mpi_peer_watch>(MPI_COMM_WORLD, mu_, rank_, ranks_);
    g_mpi = this;
    // MPI_Finalize first deletes the attributes of MPI_COMM_SELF, calling
    // their delete functions (MPI 4.0, section 11.2.2): the one hook that
    // runs whoever finalizes, finalize_at_exit or a program that started
    // MPI itself. shoal's receives stay posted from run to run, and MPI
    // wants no pending operation at MPI_Finalize (MPICH over UCX warned at
    // exit about each of them, "not returned to mpool ucp_requests").
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &mpi_transport::at_finalize, &finalize_key_,
                           nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, finalize_key_, this);
  }

  const char* name() const noexcept override { return "mpi"; }
  int rank() const noexcept override { return rank_; }
  int ranks() const noexcept override { return ranks_; }

  void barrier() override {
    MPI_Request r = MPI_REQUEST_NULL;
    {
      lock_guard lock(mu_);
      MPI_Ibarrier(comm_, &r);
    }
    wait_collective(r, "a barrier");
  }
  void allreduce_sum(std::uint64_t* v, int n) override {
    MPI_Request r = MPI_REQUEST_NULL;
    {
      lock_guard lock(mu_);
      MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, comm_, &r);
    }
    wait_collective(r, "an allreduce");
  }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    MPI_Request r = MPI_REQUEST_NULL;
    {
      lock_guard lock(mu_);
      MPI_Iallgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes),
                     MPI_BYTE, comm_, &r);
    }
    wait_collective(r, "an allgather");
  }

  void watch_peers(int silent_s, int join_s) override {
    if (watch_ != nullptr) watch_->start(silent_s, join_s);
  }
  void note_run_started(std::uint64_t runs) override {
    if (watch_ != nullptr) watch_->note_run_started(runs);
  }
  void note_run_ended() override {
    if (watch_ != nullptr) watch_->note_run_ended();
  }
  void leave(int status, const std::string& why) override {
    if (left_) return;
    left_ = true;
    if (watch_ != nullptr) watch_->leave(status, why);
  }
  [[noreturn]] void abort(int status) noexcept override { abort_mpi_job(mu_, status); }

  char* make_shared_heap(std::size_t bytes, std::vector<char*>& bases) override {
    barrier();  // polled: every rank is here before the blocking calls below
    lock_guard lock(mu_);
    // The last run's shared heap, kept past its finalize (one_sided_stop:
    // the free is collective, and a rank leaving early must not meet it);
    // every rank of this node is here now, so it goes before the next.
    if (shm_win_ != MPI_WIN_NULL) MPI_Win_free(&shm_win_);
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
    bases.assign(static_cast<std::size_t>(ranks_), nullptr);
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_);
    int node_size = 0;
    MPI_Comm_size(node_comm_, &node_size);
    std::vector<int> world(static_cast<std::size_t>(node_size));
    MPI_Allgather(&rank_, 1, MPI_INT, world.data(), 1, MPI_INT, node_comm_);
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    char* mine = nullptr;
    // A failure here aborts the job through MPI's default handler, on
    // purpose: with MPI_ERRORS_RETURN, Open MPI 4.1.4 returned
    // MPI_ERR_INTERN on the rank that could not make the segment while the
    // others waited in the collective for ever (2 ranks asking 1 TiB: rank 0
    // got the error, rank 1 hung). The usual cause, too little room in
    // /dev/shm, is caught before this call: the ranks vote on the room
    // (one_sided.cpp, choose_node) and fall back to am together.
    // One page more than asked, so each segment can start on a page.
    MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes + page), 1, info, node_comm_, &mine,
                            &shm_win_);
    MPI_Info_free(&info);
    for (int i = 0; i < node_size; ++i) {
      MPI_Aint size = 0;
      int unit = 0;
      char* base = nullptr;
      MPI_Win_shared_query(shm_win_, i, &size, &unit, &base);
      bases[static_cast<std::size_t>(world[static_cast<std::size_t>(i)])] = page_up(base);
    }
    return page_up(mine);
  }

  bool expose_heap(char* base, std::size_t bytes) override {
    barrier();
    lock_guard lock(mu_);
    MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm_, &win_);
    int* model = nullptr;
    int found = 0;
    MPI_Win_get_attr(win_, MPI_WIN_MODEL, &model, &found);
    unified_ = found != 0 && *model == MPI_WIN_UNIFIED;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
    return true;
  }

  void unexpose_heap() override {
    if (win_ == MPI_WIN_NULL && shm_win_ == MPI_WIN_NULL) return;
    barrier();  // no rank still reads or writes the windows
    lock_guard lock(mu_);
    if (win_ != MPI_WIN_NULL) {
      MPI_Win_unlock_all(win_);
      MPI_Win_free(&win_);
    }
    if (shm_win_ != MPI_WIN_NULL) MPI_Win_free(&shm_win_);
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  }

  std::string library_version() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(text, &length);
    return std::string(text, static_cast<std::size_t>(length));
  }

  const char* rma_model() const noexcept override {
    if (win_ == MPI_WIN_NULL) return "none";
    return unified_ ? "unified" : "separate";
  }

  void rma_get(int rank, std::size_t offset, void* dst, std::size_t bytes, rma_handle& h) override {
    lock_guard lock(mu_);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Rget(dst, static_cast<int>(bytes), MPI_BYTE, rank, static_cast<MPI_Aint>(offset),
             static_cast<int>(bytes), MPI_BYTE, win_, &r);
    store(h, r);
  }
  void rma_put(int rank, std::size_t offset, const void* src, std::size_t bytes,
               rma_handle& h) override {
    lock_guard lock(mu_);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Rput(src, static_cast<int>(bytes), MPI_BYTE, rank, static_cast<MPI_Aint>(offset),
             static_cast<int>(bytes), MPI_BYTE, win_, &r);
    store(h, r);
  }
  void rma_fetch_op(int rank, std::size_t offset, const void* operand, void* result, int width,
                    rma_op op, rma_handle& h) override {
    static constexpr MPI_Op ops[] = {MPI_SUM, MPI_BOR, MPI_BAND, MPI_BXOR, MPI_REPLACE, MPI_NO_OP};
    const MPI_Datatype type = width == 8 ? MPI_UINT64_T : MPI_UINT32_T;
    lock_guard lock(mu_);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Rget_accumulate(operand, 1, type, result, 1, type, rank, static_cast<MPI_Aint>(offset), 1,
                        type, ops[static_cast<int>(op)], win_, &r);
    store(h, r);
  }
  void rma_compare_swap(int rank, std::size_t offset, const void* compare, const void* desired,
                        void* result, int width) override {
    const MPI_Datatype type = width == 8 ? MPI_UINT64_T : MPI_UINT32_T;
    lock_guard lock(mu_);
    MPI_Compare_and_swap(desired, compare, result, type, rank, static_cast<MPI_Aint>(offset), win_);
    MPI_Win_flush(rank, win_);
  }
  bool rma_test(rma_handle& h) override {
    MPI_Request r = load(h);
    if (r == MPI_REQUEST_NULL) return true;
    int complete = 0;
    {
      lock_guard lock(mu_);
      MPI_Test(&r, &complete, MPI_STATUS_IGNORE);
    }
    store(h, r);
    return complete != 0;
  }
  void rma_flush_all() override {
    lock_guard lock(mu_);
    MPI_Win_flush_all(win_);
    // The separate memory model needs this for this process's own loads to
    // see what others put here; the unified one does not, and it is cheap.
    MPI_Win_sync(win_);
  }

  ~mpi_transport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {  // the receives end before their buffers go
      MPI_Comm_delete_attr(MPI_COMM_SELF, finalize_key_);
      MPI_Comm_free_keyval(&finalize_key_);
    }
    for (char* p : owned_) std::free(p);
  }

  void start_messages(std::size_t max_bytes, int receives) override {
    if (!recv_requests_.empty()) return;  // kept across init/finalize cycles
    lock_guard lock(mu_);
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

  // Polls a started collective to its end, with mu_ free between tests (the
  // heartbeat thread takes it), and ends the job when a peer has left: it
  // will never join. Short yields first, since most collectives end at once.
  void wait_collective(MPI_Request& r, const char* what) {
    const auto since = std::chrono::steady_clock::now();
    for (int round = 0;; ++round) {
      int complete = 0;
      {
        lock_guard lock(mu_);
        MPI_Test(&r, &complete, MPI_STATUS_IGNORE);
      }
      if (complete) return;
      if (watch_ != nullptr && round % 64 == 63) watch_->check_waiting(what, since);
      if (round < 1000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void send(int dest, const void* data, std::size_t bytes, void* token) override {
    lock_guard lock(mu_);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, dest, message_tag, comm_, &r);
    send_requests_.push_back(r);
    send_tokens_.push_back(token);
  }

  void start_allreduce_sum(std::uint64_t* v, int n) override {
    lock_guard lock(mu_);
    MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, comm_, &collective_);
  }
  bool allreduce_done() override {
    if (collective_ == MPI_REQUEST_NULL) return true;
    lock_guard lock(mu_);
    int complete = 0;
    MPI_Test(&collective_, &complete, MPI_STATUS_IGNORE);
    return complete != 0;
  }

  bool poll(const events& e, bool receive) override {
    // Held across the callbacks too: they only queue what arrived or was sent.
    lock_guard lock(mu_);
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
  static constexpr std::size_t page = 4096;
  static_assert(sizeof(MPI_Request) <= sizeof(rma_handle::bytes));

  static char* page_up(char* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return reinterpret_cast<char*>((a + page - 1) / page * page);
  }
  static void store(rma_handle& h, MPI_Request r) { std::memcpy(h.bytes, &r, sizeof r); }
  static MPI_Request load(const rma_handle& h) {
    MPI_Request r;
    std::memcpy(&r, h.bytes, sizeof r);
    return r;
  }

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

  static int at_finalize(MPI_Comm, int, void* self, void*) {
    static_cast<mpi_transport*>(self)->cancel_receives();
    return MPI_SUCCESS;
  }

  // Cancels and completes every posted receive. A receive that a message
  // had already matched completes with it instead: a message that came
  // after the job's last run, which nothing will handle, so it is named.
  void cancel_receives() {
    lock_guard lock(mu_);
    int arrived = 0;
    for (const int i : posted_) {
      MPI_Request& r = recv_requests_[static_cast<std::size_t>(i)];
      MPI_Cancel(&r);
      MPI_Status status;
      MPI_Wait(&r, &status);
      int cancelled = 0;
      MPI_Test_cancelled(&status, &cancelled);
      if (!cancelled) ++arrived;
    }
    posted_.clear();
    if (arrived > 0)
      std::fprintf(stderr,
                   "shoal: warning: rank %d: %d message(s) arrived after shoal's last run and "
                   "were not handled\n",
                   rank_, arrived);
  }

  void post_receive(int i) {
    MPI_Irecv(recv_buffers_[static_cast<std::size_t>(i)], static_cast<int>(max_bytes_), MPI_BYTE,
              MPI_ANY_SOURCE, message_tag, comm_, &recv_requests_[static_cast<std::size_t>(i)]);
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
  annotated_mutex mu_;      // guards no field: one MPI call at a time (heartbeats too)
  std::unique_ptr<mpi_peer_watch> watch_;  // jobs of several processes
  bool left_ = false;
  MPI_Request collective_ = MPI_REQUEST_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int finalize_key_ = MPI_KEYVAL_INVALID;  // MPI_COMM_SELF's attribute: at_finalize
  MPI_Comm node_comm_ = MPI_COMM_NULL;  // processes of this node (shared heap)
  MPI_Win shm_win_ = MPI_WIN_NULL;      // the node-shared heap segments
  MPI_Win win_ = MPI_WIN_NULL;          // RMA window over every rank's heap
  bool unified_ = false;
  int rank_ = 0;
  int ranks_ = 1;
};

}  // namespace

std::unique_ptr<transport> make_mpi_transport(int join_s) {
  return std::make_unique<mpi_transport>(join_s);
}

}  // namespace shoal::detail

#else  // built without MPI

namespace shoal::detail {
std::unique_ptr<transport> make_mpi_transport(int) { return nullptr; }
}  // namespace shoal::detail

#endif
