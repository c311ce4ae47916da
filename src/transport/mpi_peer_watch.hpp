// Liveness of the ranks of an MPI job, and their departure at exit: the
// part of the transport contract (transport.hpp) that ends a job, naming the
// rank and the reason, when one of its processes stops answering or leaves
// while the others still count on it. Private to src/transport (includes
// <mpi.h>, like mpi_transport.cpp).
//
// Protocol, on a communicator of its own (one tag, so that one peer's
// messages arrive in the order it sent them):
// - heartbeat: a small message to every peer every `period` (a tenth of the
//   silence limit, 20-500 ms), sent only when the previous one to that peer
//   has gone out (at most one in flight per peer);
// - leave(runs finished, status, why): the sender's last message; after it the sender
//   sends nothing more, so a rank that has seen every peer's leave has
//   received all they sent and may call MPI_Finalize.
// A thread of this class drains the messages and judges, every period:
// - a peer never heard from within join_s: named (not a shoal process of
//   this job, or it exited or stopped before start-up);
// - a peer heard from, then silent for silent_s (when > 0): named (stopped,
//   hung outside shoal, or unreachable);
// - a peer that left having finished fewer runs than this rank started:
//   named with its reason (the ranks did not make the same calls, or it
//   exited in the middle of a run).
// The thread takes the transport's MPI lock for each MPI call, so the
// process still makes one MPI call at a time (MPI_THREAD_SERIALIZED).
#pragma once

#include "shoal/detail/thread_safety.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

namespace shoal::detail {

/// Ends the whole job with `status` from any thread. MPI_Abort while
/// another thread is inside MPI (a core polling) is not allowed under
/// MPI_THREAD_SERIALIZED and was seen to hang: this waits a moment for
/// `mpi_mu` (then keeps it: the process is ending) and aborts anyway; should
/// MPI_Abort still not end the process, a timer does, and the launcher ends
/// the job (a rank exited without MPI_Finalize).
[[noreturn]] void abort_mpi_job(annotated_mutex& mpi_mu, int status) noexcept;

class mpi_peer_watch {
 public:
  using clock = std::chrono::steady_clock;

  /// Collective over `world` (duplicates it). `mpi_mu` serialises MPI calls.
  mpi_peer_watch(MPI_Comm world, annotated_mutex& mpi_mu, int rank, int ranks);
  ~mpi_peer_watch();
  mpi_peer_watch(const mpi_peer_watch&) = delete;
  mpi_peer_watch& operator=(const mpi_peer_watch&) = delete;

  /// Starts the thread, or retunes its limits (a later init()).
  void start(int silent_s, int join_s);
  /// See transport::note_run_started / note_run_ended.
  void note_run_started(std::uint64_t runs);
  void note_run_ended();
  /// Called while waiting (since `since`) for a collective named `what`:
  /// ends the job when a peer has left and the collective has not finished
  /// within a grace time after (that peer will never join it).
  void check_waiting(const char* what, clock::time_point since);
  /// See transport::leave. Returns when every peer has left with the same
  /// runs (the thread stopped, every send done); otherwise ends the job.
  void leave(int status, const std::string& why);

 private:
  struct departure {
    bool left = false;
    std::uint64_t runs = 0;
    int status = 0;
    std::string why;
    clock::time_point when{};
  };

  void loop();
  void exchange();  // sends heartbeats, receives what arrived
  /// Ends the job when a peer is lost: departed after fewer runs, or (with
  /// `silences`, the thread only) never heard or silent too long.
  void judge(bool silences);
  void send_leave(int status, const std::string& why);
  bool everyone_left();
  [[noreturn]] void end_job(const std::string& what, int status);

  MPI_Comm comm_ = MPI_COMM_NULL;
  annotated_mutex& mpi_mu_;
  const int rank_;
  const int ranks_;
  clock::time_point started_ = clock::now();
  std::vector<clock::time_point> last_seen_;  // by rank; only the thread
  std::vector<bool> heard_;                   // likewise
  std::vector<MPI_Request> beats_;            // one heartbeat in flight per peer
  std::vector<MPI_Request> leaves_;
  std::vector<char> leave_message_;

  std::mutex state_mu_;              // guards departed_, leaving_, the limits
  std::condition_variable wake_;     // with state_mu_: stop and leave are prompt
  std::vector<departure> departed_;  // by rank
  bool leaving_ = false;             // this rank has sent its leave
  bool stop_ = false;
  int silent_s_ = 0;
  int join_s_ = 30;
  std::atomic<std::uint64_t> runs_{0};  // started by this rank
  std::atomic<bool> in_run_{false};     // between note_run_started and note_run_ended
  std::thread thread_;
};

}  // namespace shoal::detail
