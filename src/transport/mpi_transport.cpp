// The MPI transport: with mpi_peer_watch.cpp (liveness and departure), the
// only files of shoal that include <mpi.h>.
#include "shoal/detail/thread_safety.hpp"
#include "shoal/exit_status.hpp"

#include "transport/transport.hpp"

#ifdef SHOAL_HAVE_MPI

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include "transport/mpi_peer_watch.hpp"
#include "transport/node_mailbox.hpp"

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
    const std::vector<int> world = split_node(node_comm_);
    const auto node_size = static_cast<int>(world.size());
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

  void start_messages(std::size_t max_bytes, int receives, bool node_shared) override {
    if (!recv_requests_.empty()) {  // kept across init/finalize cycles
      if (max_bytes <= max_bytes_) return;
      // MPI would truncate such a message, and a node slot is too small for it.
      std::fprintf(stderr,
                   "shoal: error: rank %d: --network-bytes %zu is above %zu, the first run's in "
                   "this process (the transport's buffers are made once per process); pass the "
                   "largest value to the first shoal::init\n",
                   rank_, max_bytes, max_bytes_);
      std::fflush(stderr);
      abort(exit_status::usage);
    }
    if (node_shared && ranks_ > 1) open_node_mailbox(max_bytes);
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

  void recycle(char* data) override {
    if (mail_ != nullptr && mail_->owner_of(data) >= 0)
      mail_->give_back(data);  // read in place from a peer of this node
    else
      spare_.push_back(data);
  }

  // Not the last few slots: those are for the copies of messages that wait
  // for one (send of a buffer of the caller's own). Every slot they take is
  // published at once and comes back once read, so a waiting message always
  // gets one, even while the network holds every other slot unsent (in a
  // buffer being filled, or queued behind the waiting message itself).
  char* node_buffer(int dest) override {
    return mail_ != nullptr && node_peer(dest) >= 0 ? mail_->take_slot(copy_slots) : nullptr;
  }
  void drop_node_buffer(char* data) override {
    if (mail_ != nullptr && mail_->is_own_slot(data)) mail_->put_slot(data);
  }
  std::string node_messages() const override {
    if (alone_on_node_) return "none (no other rank on this node)";
    if (mail_ == nullptr) return node_note_.empty() ? "mpi" : "mpi (" + node_note_ + ")";
    return fmt::format("shm ({} ranks on this node, {} slots of {} bytes each)", node_world_.size(),
                       mail_->slots(), mail_->slot_bytes());
  }

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
    if (const int peer = node_peer(dest); peer >= 0) {
      // Behind any message to this peer still waiting for a slot: in order.
      std::deque<node_send>& q = node_waiting_[static_cast<std::size_t>(peer)];
      if (q.empty() && publish(peer, data, bytes))
        node_sent_.push_back(token);
      else
        q.push_back(node_send{data, bytes, token});
      return;
    }
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
    bool any = mail_ != nullptr && poll_node(e, receive);
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

  // ---- Messages to the ranks of this node through shared memory.

  /// A message to a peer of this node waiting for a free slot.
  struct node_send {
    const void* data;
    std::size_t bytes;
    void* token;
  };

  // This node's index of world rank `dest`, when messages to it go through
  // the mailbox; else -1 (another node, this rank, or no mailbox).
  int node_peer(int dest) const noexcept {
    if (mail_ == nullptr || dest == rank_) return -1;
    return node_index_[static_cast<std::size_t>(dest)];
  }

  // Makes the message readable by `peer`: in place when it is a slot of
  // this rank's segment (node_buffer), else copied into a free one. False
  // when no slot is free.
  bool publish(int peer, const void* data, std::size_t bytes) {
    char* slot = static_cast<char*>(const_cast<void*>(data));
    if (!mail_->is_own_slot(slot)) {
      slot = mail_->take_slot();
      if (slot == nullptr) return false;
      std::memcpy(slot, data, bytes);
    }
    mail_->publish(peer, slot, bytes);
    return true;
  }

  // poll()'s share for the mailbox: slots handed back, waiting messages
  // published, sends reported, and (when `receive`) arrivals read in place,
  // at most a few per peer per call, as the MPI path takes one round.
  bool poll_node(const events& e, bool receive) {
    bool any = mail_->collect_returns();
    for (std::size_t p = 0; p < node_waiting_.size(); ++p) {
      std::deque<node_send>& q = node_waiting_[p];
      while (!q.empty() && publish(static_cast<int>(p), q.front().data, q.front().bytes)) {
        node_sent_.push_back(q.front().token);
        q.pop_front();
      }
    }
    if (!node_sent_.empty()) {
      any = true;
      for (void* token : node_sent_) e.sent(e.context, token);  // never sends again
      node_sent_.clear();
    }
    if (!receive) return any;
    for (std::size_t p = 0; p < node_world_.size(); ++p) {
      const int source = node_world_[p];
      if (source == rank_) continue;
      any |= mail_->read_from(static_cast<int>(p), receives_per_poll, [&](char* d, std::size_t n) {
        return e.received(e.context, source, d, n);
      }) > 0;
    }
    return any;
  }

  // Collective (every rank, from start_messages): maps a segment of every
  // rank of this node (POSIX shared memory, unlinked once all have mapped
  // it). Any rank that cannot (no room in /dev/shm, a failed mapping)
  // makes the whole node use MPI, with the reason for --verbose.
  void open_node_mailbox(std::size_t max_bytes) {
    // The knobs first: a bad value ends the job before the collectives.
    const bool simulate_failure = simulated_node_failure();
    const int forced_slots = forced_node_slots();
    barrier();  // polled: every rank is here before the blocking calls below
    lock_guard lock(mu_);
    MPI_Comm node = MPI_COMM_NULL;
    const std::vector<int> world = split_node(node);
    if (world.size() > 1) {
      map_node_segments(node, world, max_bytes, simulate_failure, forced_slots);
    } else {
      alone_on_node_ = true;
    }
    MPI_Comm_free(&node);
  }

  // Makes `node`, the ranks of this rank's node; returns their world ranks,
  // by node rank. Collective; under mu_.
  std::vector<int> split_node(MPI_Comm& node) {
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    int size = 0;
    MPI_Comm_size(node, &size);
    std::vector<int> world(static_cast<std::size_t>(size));
    MPI_Allgather(&rank_, 1, MPI_INT, world.data(), 1, MPI_INT, node);
    return world;
  }

  void map_node_segments(MPI_Comm node, const std::vector<int>& world, std::size_t max_bytes,
                         bool simulate_failure, int forced_slots) {
    const int size = static_cast<int>(world.size());
    int me = 0;
    MPI_Comm_rank(node, &me);
    // Slots for each peer's window of 4 buffers in flight, one being filled
    // and the 2 kept for copies: 4 a peer plus 8, from 16 to 64, and at most
    // 256 MiB a rank (but 4 slots) when --network-bytes is large.
    constexpr std::size_t most_bytes = std::size_t{256} << 20;
    const auto by_room =
        static_cast<std::uint32_t>(std::max<std::size_t>(4, most_bytes / max_bytes));
    std::uint32_t slots =
        std::min({std::max<std::uint32_t>(16, 4 * static_cast<std::uint32_t>(size - 1) + 8),
                  std::uint32_t{64}, by_room});
    if (forced_slots > 0) slots = static_cast<std::uint32_t>(forced_slots);
    const std::size_t bytes = node_mailbox::segment_bytes(size, slots, max_bytes);
    // A name of this job's own: node rank 0's pid and clock.
    unsigned long long tag[2] = {static_cast<unsigned long long>(getpid()),
                                 static_cast<unsigned long long>(
                                     std::chrono::steady_clock::now().time_since_epoch().count())};
    MPI_Bcast(tag, 2, MPI_UNSIGNED_LONG_LONG, 0, node);
    auto name = [&tag](int i) { return fmt::format("/shoal-{}-{}-{}", tag[0], tag[1], i); };
    std::vector<char*> bases(static_cast<std::size_t>(size), nullptr);
    std::string why;
    if (simulate_failure)
      why =
          fmt::format("rank {}: SHOAL_NODE_MESSAGES_FAIL=1, a simulated failure to map it", rank_);
    const std::string mine = name(me);
    int fd = why.empty() ? shm_open(mine.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600) : -1;
    if (why.empty() && fd < 0)
      why = fmt::format("rank {}: shm_open {}: {}", rank_, mine, std::strerror(errno));
    if (why.empty()) {
      // Reserved now: a tmpfs short of room fails here, not with SIGBUS later.
      const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
      if (err != 0)
        why = fmt::format("rank {}: /dev/shm has no room for {} bytes: {}", rank_, bytes,
                          std::strerror(err));
    }
    if (why.empty()) why = map_one(rank_, fd, bytes, bases[static_cast<std::size_t>(me)]);
    if (why.empty()) node_mailbox::init_segment(bases[static_cast<std::size_t>(me)], size, slots);
    if (fd >= 0) close(fd);
    bool ok = agree(node, why);
    for (int i = 0; ok && i < size; ++i) {
      if (i == me) continue;
      const int peer_fd = shm_open(name(i).c_str(), O_RDWR, 0600);
      if (peer_fd < 0) {
        why = fmt::format("rank {}: shm_open {}: {}", rank_, name(i), std::strerror(errno));
        break;
      }
      why = map_one(rank_, peer_fd, bytes, bases[static_cast<std::size_t>(i)]);
      close(peer_fd);
      if (!why.empty()) break;
    }
    // Every rank has tried to map every segment once this agreement returns:
    // the names can go (the mappings stay until the processes exit).
    ok = agree(node, why) && ok;
    if (fd >= 0) shm_unlink(mine.c_str());
    if (!ok) {
      for (char* b : bases)
        if (b != nullptr) munmap(b, bytes);
      node_note_ = why;
      return;
    }
    mail_ = std::make_unique<node_mailbox>(bases, me, slots, max_bytes);
    node_world_ = world;
    node_index_.assign(static_cast<std::size_t>(ranks_), -1);
    for (int i = 0; i < size; ++i)
      node_index_[static_cast<std::size_t>(world[static_cast<std::size_t>(i)])] = i;
    node_waiting_.resize(static_cast<std::size_t>(size));
  }

  // SHOAL_NODE_MESSAGES_FAIL=1 makes this rank fail to map the node's
  // message segments (tests of the fall back to MPI); 0 or unset: it does
  // not. Any other value ends the job, naming it.
  bool simulated_node_failure() {
    const char* v = std::getenv("SHOAL_NODE_MESSAGES_FAIL");
    if (v == nullptr || std::strcmp(v, "0") == 0) return false;
    if (std::strcmp(v, "1") == 0) return true;
    std::fprintf(stderr,
                 "shoal: error: SHOAL_NODE_MESSAGES_FAIL on rank %d: expected 0 or 1, got '%s'\n",
                 rank_, v);
    std::fflush(stderr);
    abort(exit_status::usage);
  }

  // SHOAL_NODE_SLOTS (tests: few slots, so messages wait for them): the
  // slots of each rank's segment, in [4, 4096]; 0 when unset. Any other
  // value ends the job, naming it.
  int forced_node_slots() {
    const char* v = std::getenv("SHOAL_NODE_SLOTS");
    if (v == nullptr) return 0;
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(v, &end, 10);
    if (end != v && *end == '\0' && errno == 0 && n >= 4 && n <= 4096) return static_cast<int>(n);
    std::fprintf(stderr,
                 "shoal: error: SHOAL_NODE_SLOTS on rank %d: expected a whole number in [4, 4096], "
                 "got '%s'\n",
                 rank_, v);
    std::fflush(stderr);
    abort(exit_status::usage);
  }

  static std::string map_one(int rank, int fd, std::size_t bytes, char*& base) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
      return fmt::format("rank {}: mmap of {} bytes: {}", rank, bytes, std::strerror(errno));
    base = static_cast<char*>(p);
    return {};
  }

  // Whether no rank of `node` has a reason (`why`) not to go on; if one
  // has, `why` becomes the first such rank's, on every rank.
  static bool agree(MPI_Comm node, std::string& why) {
    int me = 0;
    MPI_Comm_rank(node, &me);
    int first = why.empty() ? INT_MAX : me;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, node);
    if (first == INT_MAX) return true;
    std::array<char, 256> text{};
    why.copy(text.data(), text.size() - 1);
    MPI_Bcast(text.data(), static_cast<int>(text.size()), MPI_CHAR, first, node);
    why = text.data();
    return false;
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
  static constexpr int receives_per_poll = 16;       // from each peer of the node
  static constexpr std::uint32_t copy_slots = 2;     // kept from node_buffer()
  std::unique_ptr<node_mailbox> mail_;               // null: every message through MPI
  bool alone_on_node_ = false;  // no peer to share a node with: nothing to open
  std::string node_note_;                            // why not, when a rank could not map it
  std::vector<int> node_world_;                      // node index -> world rank
  std::vector<int> node_index_;                      // world rank -> node index, -1 elsewhere
  std::vector<std::deque<node_send>> node_waiting_;  // by node index: no free slot yet
  std::vector<void*> node_sent_;                     // published, not yet reported
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
