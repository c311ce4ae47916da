// Layer 1, transport: moves bytes between the processes of a job and offers
// the few collectives the runtime needs. Two implementations: `local` (one
// process; every call is trivial) and `mpi` (mpi_transport.cpp, the only file
// of shoal that includes <mpi.h>).
//
// Contract.
// - One transport per process, made by init() and kept until the process
//   exits (MPI cannot be initialised twice, so finalize() keeps it and a
//   later init() reuses it; MPI_Finalize runs at exit).
// - Collectives are called by every rank in the same order, from one thread
//   at a time (MPI_THREAD_SERIALIZED).
// - abort() ends the whole job from any thread: every rank, promptly, with
//   the launcher's exit status non-zero.
// - Liveness (jobs of several processes, mpi_transport.cpp): from
//   watch_peers() on, a thread of the transport sends a heartbeat to every
//   peer and ends the job, naming the rank, when a peer stays silent for the
//   watchdog time (a stopped process, a lost link). A process that exits
//   announces its departure (leave(), or at exit) with how many runs it
//   finished; a peer that started more runs, or waits in a collective the
//   departed rank will never join, ends the job naming it and why. The
//   departing rank itself waits at most join_s for every peer to depart too
//   (the job's collective shutdown) and otherwise ends the job.
#pragma once

#include "shoal/config.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shoal::detail {

class transport {
 public:
  virtual ~transport() = default;
  virtual const char* name() const noexcept = 0;
  virtual int rank() const noexcept = 0;
  virtual int ranks() const noexcept = 0;

  /// Every rank waits until all have arrived.
  virtual void barrier() = 0;
  /// In place: v[i] becomes the sum of v[i] over all ranks.
  virtual void allreduce_sum(std::uint64_t* v, int n) = 0;
  /// `all` (ranks() * bytes) receives every rank's `mine` (bytes), by rank.
  virtual void allgather(const void* mine, void* all, std::size_t bytes) = 0;
  /// Ends every process of the job with a non-zero status. Any thread.
  [[noreturn]] virtual void abort(int status) noexcept = 0;

  // ---- Point to point (aggregated buffers between processes).
  // One thread at a time (the caller serialises, e.g. with a try-lock).

  /// What poll() reports.
  struct events {
    void* context = nullptr;
    /// A send finished: its buffer may be reused.
    void (*sent)(void* context, void* token) = nullptr;
    /// A message arrived in `data`, a receive buffer of max_bytes, 64-byte
    /// aligned. Returns true to keep the buffer (it stays valid until handed
    /// back with recycle(); another is posted in its place), false when done
    /// with it (then it is valid only during the call).
    bool (*received)(void* context, int source, char* data, std::size_t bytes) = nullptr;
  };

  /// Pre-posts `receives` receives of at most `max_bytes` each. Once, before
  /// the first send or poll; every rank the same values. Collective. With
  /// `node_shared`, messages to the ranks of this node travel through
  /// shared memory (node_mailbox.hpp) when every rank can map it; else, and
  /// for the other ranks, through MPI. A later call (init/finalize cycles)
  /// keeps the first call's choice.
  virtual void start_messages(std::size_t max_bytes, int receives, bool node_shared = false) = 0;
  /// Starts sending `bytes` (at most max_bytes) at `data` to rank `dest`
  /// (any, including this one). Non-blocking; the buffer stays untouched
  /// until poll() reports `token` sent. Messages from one rank to another
  /// arrive in the order they were sent. `data` may be a buffer from
  /// node_buffer(dest): it is then read in place by `dest` (no copy), and
  /// belongs to the transport from this call on.
  virtual void send(int dest, const void* data, std::size_t bytes, void* token) = 0;
  /// A buffer of max_bytes that rank `dest` reads in place when it is sent
  /// there, or null (not on this node, node_shared off, or none free).
  /// Any thread. One that is never sent goes back with drop_node_buffer().
  virtual char* node_buffer(int dest) {
    (void)dest;
    return nullptr;
  }
  virtual void drop_node_buffer(char* data) { (void)data; }
  /// How messages reach the ranks of this node, for --verbose: "shm (N
  /// ranks, S slots of B bytes)" or "mpi".
  virtual std::string node_messages() const { return "mpi"; }
  /// Reports finished sends and, when `receive`, arrived messages (re-posting
  /// their receives; with `receive` false arrivals wait in the transport,
  /// which holds their senders back: receive-side flow control). True when
  /// it reported anything.
  virtual bool poll(const events& e, bool receive) = 0;
  /// Hands back a receive buffer kept by events::received, to be posted
  /// again. Same thread rules as poll().
  virtual void recycle(char* data) = 0;

  // ---- Non-blocking collective (termination waves). Same thread rules.

  /// Starts an in-place sum of v[0..n) over all ranks; v must stay valid
  /// until allreduce_done() returns true. One at a time.
  virtual void start_allreduce_sum(std::uint64_t* v, int n) = 0;
  /// Whether the started allreduce has finished (v then holds the sums).
  virtual bool allreduce_done() = 0;

  // ---- One-sided access (memory/one_sided.cpp): MPI-3 shared-memory and RMA
  // windows over the global heap. Each call takes the MPI lock; the
  // non-blocking ones are polled with rma_test(). The defaults say "not
  // available" (the local transport): one_sided.cpp then never calls the rest.

  /// Holds one MPI_Request of a started RMA operation (opaque here).
  struct rma_handle {
    alignas(8) unsigned char bytes[8] = {};
  };
  /// Fetch-and-op operations (32- or 64-bit unsigned words).
  enum class rma_op : int { sum, bor, band, bxor, replace, no_op };

  /// Collective. `bytes` of node-shared memory (4096-aligned) for this
  /// process's heap; `bases[r]` becomes the address here of rank r's segment
  /// when r shares this node, else null. Null when the job's processes
  /// cannot share memory this way.
  virtual char* make_shared_heap(std::size_t bytes, std::vector<char*>& bases) {
    (void)bytes;
    bases.assign(static_cast<std::size_t>(ranks()), nullptr);
    return nullptr;
  }
  /// Collective. Exposes [base, base + bytes) of every rank in one RMA
  /// window, locked for passive-target access to every rank (lock_all).
  /// False when this transport has no RMA.
  virtual bool expose_heap(char* base, std::size_t bytes) {
    (void)base;
    (void)bytes;
    return false;
  }
  /// Collective. Unlocks and frees the window and the shared memory (after
  /// a barrier, so no rank still uses them).
  virtual void unexpose_heap() {}
  /// The MPI library's version string (MPI_Get_library_version); empty
  /// without MPI.
  virtual std::string library_version() const { return {}; }
  /// "unified" or "separate" (MPI_WIN_MODEL of the window), for --verbose.
  virtual const char* rma_model() const noexcept { return "none"; }
  /// Starts reading `bytes` at `offset` of rank `rank`'s window into `dst`.
  virtual void rma_get(int rank, std::size_t offset, void* dst, std::size_t bytes, rma_handle& h);
  /// Starts writing; h completes when `src` may be reused (local
  /// completion); remote completion is at rma_flush_all().
  virtual void rma_put(int rank, std::size_t offset, const void* src, std::size_t bytes,
                       rma_handle& h);
  /// Starts an atomic fetch-and-op on the `width`-byte word (4 or 8); h
  /// completes when `result` holds the old value (the op has been applied).
  virtual void rma_fetch_op(int rank, std::size_t offset, const void* operand, void* result,
                            int width, rma_op op, rma_handle& h);
  /// Atomic compare-and-swap; blocking: returns with the old value in
  /// `result`, applied at the target (MPI has no request-based form; it
  /// waits in MPI_Win_flush under the lock, on this process's own operation).
  virtual void rma_compare_swap(int rank, std::size_t offset, const void* compare,
                                const void* desired, void* result, int width);
  /// Whether the operation of `h` has completed (as its start call says).
  virtual bool rma_test(rma_handle& h);
  /// Remote completion of every RMA operation this process started.
  virtual void rma_flush_all();

  // ---- Liveness and departure (see the contract above). Trivial for one process.

  /// Starts (or, on a later init(), retunes) the heartbeat: a peer silent for
  /// `silent_s` seconds ends the job (0: heartbeats off); `join_s` bounds the
  /// waits at start-up and at exit for ranks that never come. Main thread.
  virtual void watch_peers(int silent_s, int join_s) {
    (void)silent_s;
    (void)join_s;
  }
  /// This process has started its `runs`-th run (collective: every rank
  /// starts the same runs). Ends the job at once when a peer has departed
  /// after fewer runs. Main thread.
  virtual void note_run_started(std::uint64_t runs) { (void)runs; }
  /// The run started last has ended on every rank (after its closing barrier).
  virtual void note_run_ended() {}
  /// This process leaves the job with exit status `status` because of `why`
  /// (empty: a plain exit). Waits for every peer to leave too, then returns
  /// (the caller exits); ends the whole job when they do not within join_s.
  /// Once per process; also run at exit for a process that did not call it.
  virtual void leave(int status, const std::string& why) {
    (void)status;
    (void)why;
  }
};

/// Whether this process was started by an MPI launcher (mpirun, mpiexec,
/// srun), judged by the variables they set; `ranks` gets the job size they
/// announce (1 when unknown).
bool launched_by_mpi(int& ranks) noexcept;

/// The transport this process uses for `kind` (automatic: mpi when launched
/// by an MPI launcher with more than one rank, else local). Made once;
/// asking again returns the same one. Fails the job (exit 2) when `mpi` is
/// asked for and cannot be had, or when a different kind was made before.
/// `join_s` bounds the wait in MPI_Init for ranks that never start MPI.
transport& obtain_transport(transport_kind kind, int join_s);

/// The transport made by obtain_transport, or null.
transport* current_transport() noexcept;

/// The transport of a job of one process (local_transport.cpp).
std::unique_ptr<transport> make_local_transport();

/// Made by mpi_transport.cpp; null when the library was built without MPI.
/// Ends the process (status 3) when MPI_Init has not returned within join_s:
/// some rank of the job never started MPI, and MPI_Init would wait forever.
std::unique_ptr<transport> make_mpi_transport(int join_s);

/// A 64-bit hash of this process's executable file: ranks compare it at
/// start-up and refuse to run different binaries together.
std::uint64_t build_fingerprint();

/// Checks that every rank runs the same binary with the same job-shaping
/// configuration (cores, heap, block and buffer sizes) and the same
/// application arguments `args` (a hash of them travels); otherwise every
/// rank exits with status 2, rank 0 says which rank differs in what, and
/// ranks with other arguments show theirs.
void check_job_consistency(transport& t, const config& cfg, const std::vector<std::string>& args);

}  // namespace shoal::detail
