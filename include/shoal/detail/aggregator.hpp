// The aggregator of one core: per-destination staging of outgoing messages,
// delivery of full batches, and the receive loop.
//
// Contract.
// - Staging: messages to one destination on one stream (closures, or one
//   typed channel) are appended to that pair's buffer; a buffer holds
//   messages only while staged, and then sits in the dirty list.
// - Flush: a staged buffer is delivered when the next message does not fit
//   (size), when the oldest staged message is older than --flush-us (age,
//   checked at every poll), when the core goes idle, and on flush().
// - Delivery to a core of this process pushes the buffer pointer into that
//   core's lock-free MPSC inbound ring and nudges it awake; no process-wide
//   lock. The receiver runs the batch's handlers in its scheduler context and
//   returns the buffer to its owner's return ring.
// - Ordering: messages from one core to one core on one stream run in the
//   order they were sent; there is no order between streams.
// - Memory: each core owns --buffers-per-core buffers. A worker that needs a
//   buffer when none is free first flushes everything it has staged, then
//   yields until buffers come back (back-pressure). Handler code (scheduler
//   context) cannot yield: it takes an overflow buffer, counted in stats;
//   overflow buffers are freed, not pooled, when they come back.
// - Send bound (a core that sends must also receive). A core polls for
//   arrivals (and drives the network) at its scheduler's polls, every
//   poll_interval switches (scheduler.hpp) or when it has nothing to do, and
//   takes at most max_batches_per_poll batches per poll. A core that computes
//   and floods a channel would poll too rarely: with one core per process
//   its peer's batches pile up unhandled here while it sends, until the
//   peer's buffers run out and the peer waits on back-pressure. So once this
//   core has handed on poll_after_batches batches since its last poll, the
//   next batch a worker starts (reserve) first yields through the scheduler,
//   which polls: polls keep pace with sends, and in a flood between peers
//   that means with arrivals. A poll that leaves batches in the inbound ring
//   asks for the next switch to poll again. Handlers never wait for this
//   (they are not workers); a task that sends never needs its own window.
// - Handlers run to completion and must not suspend; one that needs to wait
//   spawns a task.
#pragma once

#include "shoal/closure.hpp"
#include "shoal/detail/buffer.hpp"
#include "shoal/detail/mpsc_ring.hpp"
#include "shoal/stats.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

namespace shoal::detail {

class scheduler;
struct reduction_cache;

/// A typed channel's receive side, registered per process under its id.
struct channel_entry {
  void (*deliver)(const void* state, const char* data, std::uint32_t count) = nullptr;
  alignas(8) unsigned char state[max_channel_handler_bytes];
  /// Bytes per value; 0: variable-length records (object_channel.hpp).
  std::uint32_t value_bytes = 0;
  /// Flow control (channel_options::max_in_flight): 0 = none; otherwise
  /// the receiving core acknowledges each handled batch to its source.
  std::uint32_t max_in_flight = 0;
  /// Per-channel coalescing (channel_options::coalesce_values): a batch of
  /// the channel leaves once it holds this many payload bytes; 0 = the
  /// aggregation buffer's capacity.
  std::uint32_t coalesce_bytes = 0;
  /// Message reductions (reduction.hpp): slots of each core's source cache,
  /// 0 = none; `caches` holds one per core of this process, made by
  /// open_channel and freed by close_channel.
  std::uint32_t cache_slots = 0;
  reduction_cache* caches = nullptr;
};

inline constexpr std::uint32_t max_streams = 256;
/// Stream 0 carries the application's closures; streams 1 .. control_stream-1
/// typed channels; control_stream the runtime's own closures (termination
/// waves, barrier releases, collective plumbing), which the message
/// accounting below leaves out so that a protocol that counts messages is
/// not disturbed by its own.
inline constexpr std::uint32_t control_stream = max_streams - 1;
inline constexpr bool is_closure_stream(std::uint32_t s) noexcept {
  return s == 0 || s == control_stream;
}

class aggregator {
 public:
  /// Batches handed on (to a core's ring or the network) after which the
  /// next batch a worker starts polls first (the send bound above): half of
  /// what one poll takes, so a poll takes what a peer sent meanwhile.
  static constexpr std::uint32_t max_batches_per_poll = 16;
  static constexpr std::uint32_t poll_after_batches = max_batches_per_poll / 2;

  aggregator(int local_core, int rank_base, int total_cores, std::size_t buffer_bytes,
             int pool_buffers, std::uint64_t flush_ns, scheduler& sched, core_stats& stats);
  ~aggregator();
  aggregator(const aggregator&) = delete;
  aggregator& operator=(const aggregator&) = delete;

  /// Reserves `n` payload bytes for one message to global core `dest` on
  /// `stream` and returns where to write them. May suspend the calling worker
  /// (back-pressure) when no buffer is free, and yields it once through the
  /// scheduler's poll when it starts a batch past the send bound.
  char* reserve(std::uint32_t stream, int dest, std::uint32_t n) {
    buffer* b = slots_[stream][dest];  // a stream never staged on: the empty row
    if (b != nullptr && b->bytes + n <= limit_[stream]) [[likely]]
      return append(b, n);
    return reserve_slow(stream, dest, n);
  }

  /// Room for up to `want` (>= 1) values of `value_bytes` bytes each, to
  /// global core `dest` on channel `stream`, in the batch staged there: the
  /// first value is reserved as reserve() does (starting a batch when none
  /// is staged or the staged one is full, with reserve()'s suspensions), the
  /// others only while they fit that batch (the channel's batch size).
  /// Returns where to write them and how many fit (1 .. want), counted as
  /// that many messages of the batch.
  struct run_room {
    char* at;
    std::uint32_t values;
  };
  run_room reserve_run(std::uint32_t stream, int dest, std::uint32_t value_bytes,
                       std::uint32_t want) {
    char* const at = reserve(stream, dest, value_bytes);
    // No suspension since: the batch staged for the pair holds `at` last.
    buffer* b = slots_[stream][dest];
    const std::uint32_t more = std::min(want - 1, (limit_[stream] - b->bytes) / value_bytes);
    b->bytes += more * value_bytes;
    b->count += more;
    return {at, more + 1};
  }

  /// `n` bytes at `offset` of the batch staged for (`stream`, `dest`), while
  /// one is staged and holds them; nullptr otherwise. Message reductions
  /// combine into values that have not left yet through this.
  char* staged(std::uint32_t stream, int dest, std::uint32_t offset,
               std::uint32_t n) const noexcept {
    buffer* b = slots_[stream][dest];
    if (b == nullptr || offset + n > b->bytes) return nullptr;
    return b->data() + offset;
  }
  /// Offset of `p` (returned by reserve() just now, with no suspension in
  /// between) in the batch staged for (`stream`, `dest`).
  std::uint32_t staged_offset(std::uint32_t stream, int dest, const char* p) const noexcept {
    return static_cast<std::uint32_t>(p - slots_[stream][dest]->data());
  }

  /// Reserves room for one closure message of `padded` bytes whose invoker
  /// has id `handler`, to global core `dest`, and returns where to copy the
  /// closure. A closure of the same type as the last one staged for `dest`
  /// joins that run and costs no header. May suspend like reserve().
  char* reserve_closure(int dest, std::int32_t handler, std::uint32_t padded,
                        std::uint32_t stream = 0) {
    buffer* b = slots_[stream][dest];
    if (b != nullptr && b->run_handler == handler && b->bytes + padded <= capacity_)
      return append(b, padded);
    return reserve_closure_slow(stream, dest, handler, padded);
  }

  /// Delivers every staged buffer now.
  void flush_all();
  /// Delivers every buffer of `stream` staged here now (channel::flush).
  void flush_stream(std::uint32_t stream);

  /// Poll hook: returns, inbound batches, age flush. True when it did work.
  bool poll();
  /// Idle hook: flushes what is staged. True when it flushed something.
  bool on_idle();

  /// Largest payload one message may have.
  std::uint32_t capacity() const noexcept { return capacity_; }

  /// Buffers delivered to cores of this process and buffers processed here
  /// (monotonic; for quiescence detection). Acquire: pair with the
  /// counters' release increments, so a detector that sees the counts also
  /// sees the ring pushes and handler effects that came before them.
  std::uint64_t delivered() const noexcept { return delivered_.load(std::memory_order_acquire); }
  std::uint64_t processed() const noexcept { return processed_.load(std::memory_order_acquire); }
  /// Whether some delivery found a full ring and waits to be retried.
  bool has_pending_delivery() const noexcept {
    // Acquire: pairs with the owner's release store in deliver()/retry_pending().
    return pending_size_.load(std::memory_order_acquire) != 0;
  }
  /// After the run: takes back returned buffers, then counts those still out.
  std::size_t buffers_out_after_drain() {
    drain_returns();
    return buffers_out();
  }
  /// Returns a buffer of this core's pool (or frees an overflow one) after
  /// the network has sent it. Any thread.
  void give_back(buffer* b);
  /// Takes a batch that arrived from another process (in place in a network
  /// buffer, owner -1): false when the inbound ring is full (retry later).
  bool accept_remote(buffer* b);

  /// Buffers of this core's pool not currently free (staged or in flight).
  std::size_t buffers_out() const noexcept;

  // ---- Message accounting (owning core only; monotonic). A message counts
  // as sent when its batch leaves this core (delivered to a core's ring or
  // staged into the network: flush first to count what is staged here) and
  // as handled once every handler of its batch has returned, so the messages
  // a handler sends are counted as sent before the message that caused them
  // is counted as handled. The control stream is left out.

  /// Messages of `stream` sent from / handled on this core.
  std::uint64_t sent(std::uint32_t stream) const noexcept { return sent_[stream]; }
  std::uint64_t handled(std::uint32_t stream) const noexcept { return handled_[stream]; }
  /// Messages of every stream but the control stream.
  std::uint64_t app_sent() const noexcept { return app_sent_; }
  std::uint64_t app_handled() const noexcept { return app_handled_; }

  // ---- Depth-limited phases (channel::end_phase_depth). A round marker is
  // an empty batch on the channel's stream: batches from one core to one
  // core on one stream arrive in order, so once a core has a marker of round
  // k from a source, every value that source sent before it has been handled.

  /// Sends what is staged for `dest` on `stream`, then a round marker (or,
  /// with `fence` > 0, that fence's marker: see Fences below). May suspend
  /// the calling worker like reserve().
  void send_marker(std::uint32_t stream, int dest, std::uint64_t fence = 0);
  /// Round markers of `stream` that arrived here from global core `source`.
  std::uint64_t markers_from(std::uint32_t stream, int source) const noexcept {
    return markers_[stream] != nullptr ? markers_[stream][source] : 0;
  }
  /// Rounds of depth-limited phases this core has completed on `stream`.
  std::uint64_t& rounds(std::uint32_t stream) noexcept { return rounds_[stream]; }

  // ---- Fences (channel::fence; owning core only). Each batch a channel
  // stream starts here marks its destination as sent to (once per fence
  // interval, not per value). A fence sends a fence marker to each
  // destination marked since the previous fence and forgets the marks: the
  // batch staged there, carrying the fence's number in its header, or an
  // empty batch when none is staged. The receiving core acknowledges it
  // with one control message once it is handled, and batches from one core
  // to one core on one stream run in order, so by then every value this core
  // sent there before the fence has been handled. Fences complete in the
  // order they were made; one with no destination completes with the one
  // before it (at once when none is outstanding). Books are never reset: a
  // closed channel's late acknowledgements land in its own fences.

  /// Makes the next fence of `stream` (markers handed on, but not pushed to
  /// the network) and returns its number (1, 2, ...) and its markers. May
  /// suspend like reserve().
  struct fence_made {
    std::uint64_t number;
    std::size_t markers;
  };
  fence_made make_fence(std::uint32_t stream);
  /// Fences of `stream` made here that have completed.
  std::uint64_t fences_done(std::uint32_t stream) const noexcept {
    return fences_[stream] != nullptr ? fences_[stream]->done : 0;
  }
  /// Fence `number` of `stream` was handled at one of its destinations.
  void fence_acknowledged(std::uint32_t stream, std::uint64_t number) noexcept;

  // ---- Traffic to other processes (owning core writes; relaxed atomics so
  // that another thread may sum them for statistics: routing.hpp).
  struct remote_traffic {
    std::uint64_t batches = 0;   ///< aggregation buffers staged into the network
    std::uint64_t messages = 0;  ///< messages in them
    std::uint64_t bytes = 0;     ///< payload + buffer header bytes
    std::uint64_t peers = 0;     ///< distinct processes this core sent to
  };
  remote_traffic remote() const noexcept {
    // Relaxed: statistics.
    return {remote_batches_.load(std::memory_order_relaxed),
            remote_messages_.load(std::memory_order_relaxed),
            remote_bytes_.load(std::memory_order_relaxed),
            remote_peers_.load(std::memory_order_relaxed)};
  }
  /// Processes any core of this process has sent to (a bit per rank).
  const std::vector<bool>& peers_touched() const noexcept { return peer_seen_; }

  // ---- Flow control of bounded channels (owning core only). A value to
  // `dest` on `stream` is in flight from its send until the receiver's
  // acknowledgement of its batch (one control message per handled batch)
  // comes back. Counters are never reset: a late acknowledgement of a closed
  // channel brings its counter back to zero, whatever reuses the id.

  /// Counts one value to `dest` in flight; a worker that finds `bound` in
  /// flight first flushes and suspends until acknowledgements bring it
  /// below. Handlers cannot wait: they count the value and go on.
  void flow_reserve(std::uint32_t stream, int dest, std::uint32_t bound) {
    std::int64_t* row = in_flight_[stream];
    if (row != nullptr && row[dest] < static_cast<std::int64_t>(bound)) [[likely]] {
      ++row[dest];
      return;
    }
    flow_reserve_slow(stream, dest, bound);
  }
  /// flow_reserve for up to `want` (>= 1) values at once: counts as many as
  /// the bound leaves room for now (at least one, after waiting as
  /// flow_reserve does when none is left) and returns that number. A
  /// handler counts one value at a time past the bound.
  std::uint32_t flow_reserve_run(std::uint32_t stream, int dest, std::uint32_t bound,
                                 std::uint32_t want) {
    std::int64_t* row = in_flight_[stream];
    if (row != nullptr && row[dest] < static_cast<std::int64_t>(bound)) [[likely]] {
      const auto room = static_cast<std::int64_t>(bound) - row[dest];
      const auto take = static_cast<std::uint32_t>(std::min<std::int64_t>(want, room));
      row[dest] += take;
      return take;
    }
    flow_reserve_slow(stream, dest, bound);
    return 1;
  }
  /// `n` values to `dest` on `stream` have been handled there.
  void flow_acknowledged(std::uint32_t stream, int dest, std::uint32_t n) noexcept;
  /// Values to `dest` on `stream` not yet acknowledged.
  std::int64_t in_flight(std::uint32_t stream, int dest) const noexcept {
    return in_flight_[stream] != nullptr ? in_flight_[stream][dest] : 0;
  }

 private:
  char* reserve_slow(std::uint32_t stream, int dest, std::uint32_t n);
  char* reserve_closure_slow(std::uint32_t stream, int dest, std::int32_t handler,
                             std::uint32_t padded);
  // Messages and bytes sent are counted per batch when it is delivered: a
  // per-message update of the stats line would cost a read-modify-write.
  static char* append(buffer* b, std::uint32_t n) noexcept {
    char* p = b->data() + b->bytes;
    b->bytes += n;
    ++b->count;
    return p;
  }
  static void close_run(buffer* b, std::uint32_t end) noexcept;
  buffer* acquire();
  void release(buffer* b);
  void deliver(buffer* b);
  void unstage(buffer* b);
  void drain_returns();
  bool retry_pending();
  void dispatch(buffer* b);
  void dispatch_closures(buffer* b);
  void flow_reserve_slow(std::uint32_t stream, int dest, std::uint32_t bound);
  void acknowledge(const buffer* b);
  void acknowledge_fence(const buffer* b);
  void poll_before_sending();

  /// One stream's fences on this core (see Fences above).
  struct fence_book {
    std::vector<std::uint8_t> marked;  // by destination core: sent to since the last fence
    std::vector<int> dests;            // those destinations, in the order marked
    std::uint64_t made = 0;
    std::uint64_t done = 0;
    std::deque<std::uint32_t> unacked;  // acknowledgements missing, fences done+1 .. made
  };
  fence_book& fences(std::uint32_t stream);
  /// A batch of channel `stream` for `dest` was started (reserve_slow).
  void mark_sent_to(std::uint32_t stream, int dest) {
    fence_book& f = fences(stream);
    auto& m = f.marked[static_cast<std::size_t>(dest)];
    if (m != 0) return;
    m = 1;
    f.dests.push_back(dest);
  }

  const int local_core_;
  const int rank_base_;
  const int total_cores_;
  const std::uint32_t capacity_;
  const std::size_t buffer_bytes_;
  const int pool_buffers_;
  scheduler& sched_;
  core_stats& stats_;
  const std::uint64_t flush_ns_;

  // The batch staged for each (stream, destination core). A stream's row is
  // allocated at its first batch; until then it is empty_row_ (all null,
  // never written), so that reserve() needs no test for a missing row.
  std::array<buffer**, max_streams> slots_{};
  std::vector<buffer*> empty_row_;
  // Per-stream batch size (channel_entry::coalesce_bytes, at most
  // capacity_), refreshed whenever a batch of the stream is started.
  std::array<std::uint32_t, max_streams> limit_;
  std::array<std::uint64_t, max_streams> sent_{};
  std::array<std::uint64_t, max_streams> handled_{};
  std::uint64_t app_sent_ = 0;
  std::uint64_t app_handled_ = 0;
  std::array<std::int64_t*, max_streams> in_flight_{};  // bounded channels: row per dest
  std::array<std::uint64_t*, max_streams> markers_{};  // by source core, counted at dispatch
  std::array<std::uint64_t, max_streams> rounds_{};
  std::array<fence_book*, max_streams> fences_{};  // channels, at their first batch
  std::atomic<std::uint64_t> remote_batches_{0};
  std::atomic<std::uint64_t> remote_messages_{0};
  std::atomic<std::uint64_t> remote_bytes_{0};
  std::atomic<std::uint64_t> remote_peers_{0};
  std::vector<bool> peer_seen_;  // by rank, sized at the first remote batch
  std::vector<buffer*> dirty_;
  std::uint64_t first_staged_ns_ = 0;
  std::uint32_t sent_since_poll_ = 0;  // batches handed on since the last poll (send bound)
  std::vector<buffer*> free_;
  std::vector<buffer*> pending_;              // deliveries that found a full ring, in order
  std::atomic<std::size_t> pending_size_{0};  // pending_.size(), readable by other threads
  char* slab_ = nullptr;

  mpsc_ring<buffer> inbound_;
  mpsc_ring<buffer> returns_;
  alignas(64) std::atomic<std::uint64_t> delivered_{0};  // written by senders
  alignas(64) std::atomic<std::uint64_t> processed_{0};  // written by this core
};

/// The stream whose batch the calling core is handling (set by dispatch
/// before a channel's receive loop): a routing hop forwards on it.
inline thread_local std::uint32_t tls_delivering_stream = 0;

/// The aggregator of the calling core.
inline thread_local aggregator* tls_aggregator = nullptr;

/// Process-wide table of channels (index = stream id; 0 is unused).
channel_entry* channel_table() noexcept;
/// Opens a channel on every process of the job with receive side `e`
/// (its deliver function and handler state) and returns its id. In a job
/// of several processes rank 0 hands out ids and the entry is installed on
/// every rank before this returns (blocking: one round trip per rank; a
/// worker only). Fails the job when all ids are taken.
std::uint32_t open_channel(const channel_entry& e);
/// Removes channel `id` from every process and frees its id (blocking
/// likewise in a job of several processes).
void close_channel(std::uint32_t id);

/// Aggregators of this process, by local core.
aggregator& aggregator_of(int local_core) noexcept;

}  // namespace shoal::detail
