// The process's side of messages between processes (comm layer, above the
// transport): per-destination-process network buffers that combine the
// aggregation buffers of all cores (Grappa: one stream per destination node;
// GMT: per-thread command blocks feed a per-destination buffer), the
// try-lock under which cores take turns driving the transport, and the
// receive path that splits an arrived network buffer into per-core batches.
//
// Contract.
// - stage(b, rank): copies a core's aggregation buffer for a core of another
//   rank into that rank's network buffer (64-byte header, payload padded to
//   64); a network buffer that leaves holding one batch sends the core
//   buffer itself, uncopied (the first batch is copied only when a second
//   joins it). The core buffer stays out of its pool until the network buffer
//   holding it has been sent, then returns to its owner's return ring: so a
//   process never holds more outgoing bytes than its cores' buffer pools
//   (--buffers-per-core x --aggregation-bytes per core), and a worker that
//   floods another process is held back by the pool (it yields) exactly as
//   it is for a slow core of its own process. Any core, concurrently (one
//   mutex per destination).
// - progress(): at most one thread at a time drives the transport (a
//   try-lock: a core that finds it taken goes on with its work). It sends
//   filled buffers, and a partly filled one when nothing to that rank is in
//   flight (combining without waiting), reports finished sends, and splits
//   arrived buffers into the destination cores' inbound rings. The batches
//   stay in place in the buffer the transport received (no copy): the buffer
//   goes back to the transport once every core has handled its batch.
// - Flow control: at most `window` network buffers in flight per
//   destination; further ones wait here (holding their core buffers). On
//   the receive side, once `receive_limit` bytes of received network buffers
//   (counted whole) wait for their cores, no more arrivals are taken until
//   the cores catch up: the transport then holds the senders back.
// - Ordering: batches from one core to one core arrive in the order they
//   were staged (one FIFO per destination, MPI's non-overtaking rule,
//   receives delivered in posting order).
// - Counting: batches staged for and received from other ranks, monotonic,
//   for job-wide termination detection (runtime.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "shoal/detail/buffer.hpp"
#include "shoal/detail/thread_safety.hpp"
#include "transport/transport.hpp"

namespace shoal::detail {

class network {
 public:
  /// `node_shared`: messages to the ranks of this node through shared
  /// memory (transport::start_messages).
  network(transport& t, std::size_t net_bytes, int window, std::size_t receive_limit,
          bool node_shared = false);
  ~network();
  network(const network&) = delete;
  network& operator=(const network&) = delete;

  /// Stages batch `b` (for a core of rank `dest_rank`) into the network
  /// (copied, unless it leaves alone in its network buffer); b
  /// goes back to its owner once sent.
  void stage(buffer* b, int dest_rank) SHOAL_EXCLUDES(pool_mu_);
  /// Drives the transport if no other thread does. True when it did work.
  bool progress() SHOAL_EXCLUDES(drive_);
  /// Batch `b`, received from another process, has been handled by its
  /// core. Any core.
  void consumed(buffer* b) SHOAL_EXCLUDES(handled_mu_);
  /// Whether nothing is staged, queued, in flight or waiting for a core.
  bool idle() const;
  /// Closes every partly filled buffer for sending (queued behind those
  /// already queued, sent as the window allows), then drives the transport if
  /// no other thread does. Without it a partly filled buffer leaves only once
  /// nothing to its rank is in flight, which waits for this process's next
  /// look at finished sends: a core handling a backlog of arrivals held the
  /// last data of a BFS level and the phase's own messages that long (about
  /// 50 us). For push_staged_partial(). Any core.
  void send_partial() SHOAL_EXCLUDES(drive_);
  /// Batches sent to / received from other ranks (monotonic). Acquire:
  /// pairs with the acq_rel increments in stage()/on_received(), for the
  /// termination waves.
  std::uint64_t batches_sent() const noexcept { return sent_.load(std::memory_order_acquire); }
  std::uint64_t batches_received() const noexcept {
    return received_.load(std::memory_order_acquire);
  }
  /// Network buffers sent, and network buffers allocated in all (the pool).
  /// Relaxed: statistics only, written relaxed; nothing is ordered by them.
  std::uint64_t buffers_sent() const noexcept { return net_sent_.load(std::memory_order_relaxed); }
  std::uint64_t buffers_allocated() const noexcept {
    return allocated_.load(std::memory_order_relaxed);
  }
  /// Each network buffer's size (--network-bytes).
  std::size_t buffer_bytes() const noexcept { return net_bytes_; }
  /// The most network buffers out of the pool at once (being filled, queued
  /// or in flight) since the last reset_buffers_peak(): the buffer memory a
  /// phase needed, without what start-up and earlier phases allocated.
  std::uint64_t buffers_peak() SHOAL_EXCLUDES(pool_mu_) {
    lock_guard lock(pool_mu_);
    return peak_;
  }
  /// The most destination processes with a network buffer open for
  /// combining at once since the last reset (Active Pebbles' coalescing
  /// buffers: one per peer, so P - 1 under direct routing and ceil(log2 P)
  /// under hypercube routing, whose neighbours are also the only peers of
  /// the runtime's control messages (near_control.hpp) and steal requests;
  /// buffers queued or in flight behind an open one are transit, bounded by
  /// the cores' pools and counted by buffers_peak()).
  std::uint64_t open_peak() const noexcept { return open_peak_.load(std::memory_order_relaxed); }
  /// Starts both peaks anew at what is out and open now. Any thread.
  void reset_buffers_peak() SHOAL_EXCLUDES(pool_mu_) {
    {
      lock_guard lock(pool_mu_);
      peak_ = out_count_;
    }
    open_peak_.store(open_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }

  /// Runs `f` with the transport to itself (the lock that serialises MPI).
  template <class F>
  decltype(auto) with_transport(F&& f) SHOAL_EXCLUDES(drive_) {
    lock_guard lock(drive_);
    return f(net_);
  }

 private:
  struct net_buffer {
    std::vector<char> bytes;  // own storage, made when first needed
    // Where the batches are copied: `bytes`, or a buffer of the transport
    // that the destination reads in place (transport::node_buffer).
    char* data = nullptr;
    std::vector<buffer*> batches;  // core buffers copied in, returned once sent
    // The only batch so far, not copied: a core buffer is laid out as on
    // the wire (header, payload, room to pad it to 64), so a buffer that
    // leaves with one batch sends it from where it is.
    buffer* lone = nullptr;
    std::size_t used = 0;  // bytes on the wire
    int dest = 0;
    /// data is the transport's (a node buffer): never sent as `lone`.
    bool in_node() const noexcept { return data != nullptr && data != bytes.data(); }
    const void* wire() const noexcept {
      return lone != nullptr ? static_cast<const void*>(lone) : data;
    }
  };
  // A received network buffer whose batches the cores are handling in place.
  struct recv_block {
    char* data = nullptr;
    std::atomic<int> batches{0};  // not yet handled
  };
  struct outbox {
    annotated_mutex mu;
    net_buffer* current SHOAL_GUARDED_BY(mu) = nullptr;   // being filled
    std::deque<net_buffer*> queued SHOAL_GUARDED_BY(mu);  // full, waiting for the window
    int in_flight SHOAL_GUARDED_BY(mu) = 0;
  };

  /// Takes the outbox's partly filled buffer out of filling (it no longer
  /// counts as open) and returns it.
  net_buffer* close_current(outbox& o) SHOAL_REQUIRES(o.mu);
  /// A buffer for rank `dest`: the transport's in-place one when it has
  /// one for `dest`, else one of this process's.
  net_buffer* take_buffer(int dest) SHOAL_EXCLUDES(pool_mu_);
  /// Copies batch `b` as it travels (header, then payload) to `to`.
  static void copy_batch(const buffer* b, char* to);
  void give_back(net_buffer* nb) SHOAL_EXCLUDES(pool_mu_);
  void note_open(std::uint64_t now);  // raises open_peak_ to `now`
  // Transport callbacks: run inside net_.poll(), so under drive_.
  static void on_sent(void* self, void* token);
  static bool on_received(void* self, int source, char* data, std::size_t bytes);
  bool drive() SHOAL_REQUIRES(drive_);  // progress()'s work, once it holds drive_
  recv_block* take_block(char* data) SHOAL_REQUIRES(drive_);
  bool recycle_blocks() SHOAL_REQUIRES(drive_) SHOAL_EXCLUDES(handled_mu_);
  bool send_ready() SHOAL_REQUIRES(drive_);
  bool retry_inbound() SHOAL_REQUIRES(drive_);

  transport& net_;
  const std::size_t net_bytes_;
  const int window_;
  const std::int64_t receive_limit_;
  std::vector<std::unique_ptr<outbox>> out_;
  annotated_mutex pool_mu_;
  std::vector<net_buffer*> pool_ SHOAL_GUARDED_BY(pool_mu_);
  std::uint64_t out_count_ SHOAL_GUARDED_BY(pool_mu_) = 0;  // buffers out of the pool
  std::uint64_t peak_ SHOAL_GUARDED_BY(pool_mu_) = 0;       // most out at once since a reset
  annotated_mutex drive_;                                          // who drives the transport
  std::vector<buffer*> pending_inbound_ SHOAL_GUARDED_BY(drive_);  // rings were full
  std::vector<std::unique_ptr<recv_block>> blocks_ SHOAL_GUARDED_BY(drive_);  // every record
  std::vector<recv_block*> free_blocks_ SHOAL_GUARDED_BY(drive_);
  annotated_mutex handled_mu_;
  // Every batch handled; back to the transport next drive.
  std::vector<recv_block*> handled_ SHOAL_GUARDED_BY(handled_mu_);
  std::atomic<bool> has_handled_{false};
  std::atomic<std::size_t> pending_count_{0};
  std::atomic<int> unsent_{0};  // buffers being filled, queued or in flight
  std::atomic<std::int64_t> held_{0};  // bytes of received buffers not yet given back
  std::atomic<std::uint64_t> sent_{0};
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> net_sent_{0};
  std::atomic<std::uint64_t> allocated_{0};
  std::atomic<std::uint64_t> open_{0};       // outboxes with a current buffer
  std::atomic<std::uint64_t> open_peak_{0};  // most open at once since a reset
};

/// The network of this process; null in a job of one process.
network* this_network() noexcept;

/// As push_staged() (message.hpp), and partly filled network buffers leave
/// at once too (network::send_partial): for the steps of a phase that other
/// processes wait on (a channel phase's values, barrier arrivals and
/// releases, round markers, wave replies). Not for shoal::flush(), whose
/// callers flush often and gain from combining behind buffers in flight
/// (gups at 2 x 1: 8% slower with every flush sending its partial buffer).
/// The calling core.
void push_staged_partial();

}  // namespace shoal::detail
