#include "shoal/detail/aggregator.hpp"

#include "shoal/detail/check.hpp"
#include "shoal/detail/handler_id.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/message.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>

#include <sched.h>

#include "comm/near_control.hpp"
#include "comm/network.hpp"
#include "tasks/scheduler.hpp"

namespace shoal::detail {
namespace {

// Polls a back-pressured sender makes before it also calls sched_yield.
constexpr int backpressure_spins = 64;
channel_entry g_channels[max_streams];

}  // namespace

channel_entry* channel_table() noexcept { return g_channels; }

aggregator::aggregator(int local_core, int rank_base, int total_cores, std::size_t buffer_bytes,
                       int pool_buffers, std::uint64_t flush_ns, scheduler& sched,
                       core_stats& stats)
    : local_core_(local_core),
      rank_base_(rank_base),
      total_cores_(total_cores),
      // Buffers sit back to back in one slab: round the stride to 64 bytes so
      // every buffer (and the 8-byte aligned payloads in it) stays aligned.
      capacity_(static_cast<std::uint32_t>((buffer_bytes + 63) / 64 * 64 - sizeof(buffer))),
      buffer_bytes_((buffer_bytes + 63) / 64 * 64),
      pool_buffers_(pool_buffers),
      sched_(sched),
      stats_(stats),
      flush_ns_(flush_ns),
      inbound_(static_cast<std::size_t>(total_cores) * static_cast<std::size_t>(pool_buffers) + 64),
      returns_(static_cast<std::size_t>(pool_buffers) + 64) {
  slab_ = static_cast<char*>(
      std::aligned_alloc(64, buffer_bytes_ * static_cast<std::size_t>(pool_buffers)));
  SHOAL_CHECK(slab_ != nullptr, "cannot allocate {} aggregation buffers", pool_buffers);
  free_.reserve(static_cast<std::size_t>(pool_buffers));
  for (int i = pool_buffers - 1; i >= 0; --i) {
    auto* b = new (slab_ + static_cast<std::size_t>(i) * buffer_bytes_) buffer;
    b->owner = local_core;
    free_.push_back(b);
  }
  dirty_.reserve(64);
  limit_.fill(capacity_);
  empty_row_.assign(static_cast<std::size_t>(total_cores), nullptr);
  slots_.fill(empty_row_.data());
}

aggregator::~aggregator() {
  for (buffer** row : slots_)
    if (row != empty_row_.data()) delete[] row;
  for (std::int64_t* row : in_flight_) delete[] row;
  for (std::uint64_t* row : markers_) delete[] row;
  for (fence_book* f : fences_) delete f;
  std::free(slab_);
}

std::size_t aggregator::buffers_out() const noexcept {
  return static_cast<std::size_t>(pool_buffers_) - free_.size();
}

char* aggregator::reserve_slow(std::uint32_t stream, int dest, std::uint32_t n) {
  // A stale copy of a closed channel's handle, named at the sender: seen on
  // its first message to a destination since the last batch there left.
  if (!is_closure_stream(stream) && g_channels[stream].deliver == nullptr)
    fatal_user(
        fmt::format("shoal::channel::send on channel id {}, which is closed (a stale "
                    "copy of a closed channel's handle)",
                    stream));
  SHOAL_CHECK(n <= capacity_,
              "a message of {} bytes does not fit an aggregation buffer of {} "
              "bytes; raise --aggregation-bytes",
              n, capacity_);
  SHOAL_CHECK(dest >= 0 && dest < total_cores_, "destination core {} out of range [0, {})", dest,
              total_cores_);
  if (sent_since_poll_ >= poll_after_batches && sched_.in_worker()) {
    poll_before_sending();
    return reserve(stream, dest, n);  // another task may have staged for dest meanwhile
  }
  // A channel's own batch size, read here (once per batch) so that a
  // reopened id takes its new channel's.
  const std::uint32_t want = is_closure_stream(stream) ? 0 : g_channels[stream].coalesce_bytes;
  limit_[stream] = want != 0 && want < capacity_ ? std::max(want, n) : capacity_;
  buffer**& row = slots_[stream];
  if (row == empty_row_.data()) row = new buffer*[static_cast<std::size_t>(total_cores_)]();
  if (row[dest] != nullptr) {  // full: flush on size
    buffer* full = row[dest];
    row[dest] = nullptr;
    unstage(full);
    ++stats_.flushes_on_size;
    deliver(full);
  }
  buffer* b = acquire();
  // acquire() may have suspended and other workers may have staged a buffer
  // for this pair meanwhile: use theirs if it has room.
  if (row[dest] != nullptr && row[dest]->bytes + n <= limit_[stream]) {
    release(b);
    b = row[dest];
  } else {
    if (row[dest] != nullptr) {
      buffer* full = row[dest];
      unstage(full);
      ++stats_.flushes_on_size;
      deliver(full);
    }
    b->stream = stream;
    b->dest = dest;
    b->source = rank_base_ + local_core_;
    b->bytes = 0;
    b->count = 0;
    b->run_handler = 0;
    b->fence = 0;
    row[dest] = b;
    if (!is_closure_stream(stream)) mark_sent_to(stream, dest);
    if (dirty_.empty()) first_staged_ns_ = now_ns();
    b->dirty_index = static_cast<std::int32_t>(dirty_.size());
    dirty_.push_back(b);
  }
  return append(b, n);
}

char* aggregator::reserve_closure_slow(std::uint32_t stream, int dest, std::int32_t handler,
                                       std::uint32_t padded) {
  // A new run: in a fresh buffer, or after a closure of another type.
  char* p = reserve(stream, dest, static_cast<std::uint32_t>(sizeof(closure_run_header)) + padded);
  // reserve() appended to the pair's staged buffer, whichever it now is, so
  // the run open in it (if any) ends where this one starts.
  buffer* b = slots_[stream][dest];
  const auto at = static_cast<std::uint32_t>(p - b->data());
  close_run(b, at);
  const closure_run_header h{handler, 0};
  std::memcpy(p, &h, sizeof h);
  b->run_handler = handler;
  b->run_at = at;
  return p + sizeof h;
}

// A run's length is written once, when it ends (another type follows, or the
// buffer is delivered), so that a message joining a run writes nothing but
// its closure.
void aggregator::close_run(buffer* b, std::uint32_t end) noexcept {
  if (b->run_handler == 0) return;
  const std::uint32_t first = b->run_at + static_cast<std::uint32_t>(sizeof(closure_run_header));
  const std::uint32_t bytes = end - first;
  std::memcpy(b->data() + b->run_at + offsetof(closure_run_header, bytes), &bytes, sizeof bytes);
  b->run_handler = 0;
}

void aggregator::unstage(buffer* b) {
  const auto i = static_cast<std::size_t>(b->dirty_index);
  dirty_[i] = dirty_.back();
  dirty_[i]->dirty_index = static_cast<std::int32_t>(i);
  dirty_.pop_back();
  b->dirty_index = -1;
}

// The send bound (header): this worker has sent enough since the last poll
// that the batches its peers sent back are likely waiting; the yield goes
// through the scheduler, whose poll takes them (and resets the count).
void aggregator::poll_before_sending() {
  sent_since_poll_ = 0;  // whatever the poll does, this worker yields once per bound
  ++stats_.polls_on_send;
  sched_.request_poll();
  sched_.yield();
}

buffer* aggregator::acquire() {
  drain_returns();
  if (free_.empty()) {
    if (sched_.in_worker()) {
      flush_all();  // put everything in flight so buffers can come back
      ++stats_.backpressure_waits;
      for (int spins = 0; free_.empty(); ++spins) {
        sched_.request_poll();
        sched_.yield();
        drain_returns();
        // Buffers to cores of this process come back once their receiver has
        // handled them: when that takes long, the receiver's thread may be
        // waiting for this very CPU (a loaded or oversubscribed machine), so
        // offer it to the OS instead of spinning through the time slice.
        if (spins >= backpressure_spins) sched_yield();
      }
    } else {
      // A handler cannot wait: it takes an overflow buffer. Flushing every
      // staged buffer here would not bring one back sooner, and a handler that
      // sends to many cores (dependent messages: permutation, random walks)
      // would then flush all of them at every take, in packets of a few
      // messages; they fill and leave as usual instead.
      ++stats_.overflow_buffers;
      void* mem = std::aligned_alloc(64, buffer_bytes_);
      SHOAL_CHECK(mem != nullptr, "out of memory for an overflow aggregation buffer");
      auto* b = new (mem) buffer;
      b->owner = local_core_;
      b->overflow = true;
      return b;
    }
  }
  buffer* b = free_.back();
  free_.pop_back();
  return b;
}

void aggregator::release(buffer* b) {
  if (b->overflow) {
    std::free(b);
  } else {
    free_.push_back(b);
  }
}

void aggregator::drain_returns() {
  while (buffer* b = returns_.try_pop()) release(b);
}

void aggregator::flush_all() {
  for (buffer* b : dirty_) {
    slots_[b->stream][b->dest] = nullptr;
    b->dirty_index = -1;
    deliver(b);
  }
  dirty_.clear();
}

void aggregator::flush_stream(std::uint32_t stream) {
  buffer** row = slots_[stream];
  if (row == empty_row_.data()) return;
  for (std::size_t i = 0; i < dirty_.size();) {
    buffer* b = dirty_[i];
    if (b->stream != stream) {
      ++i;
      continue;
    }
    row[b->dest] = nullptr;
    unstage(b);  // moves the last dirty buffer to i
    deliver(b);
  }
}

void aggregator::send_marker(std::uint32_t stream, int dest, std::uint64_t fence) {
  SHOAL_CHECK(dest >= 0 && dest < total_cores_, "destination core {} out of range [0, {})", dest,
              total_cores_);
  // What is staged for dest goes first; acquire() may suspend, and another
  // task of this core may stage for dest meanwhile: that goes first too.
  auto send_staged = [this, stream, dest] {
    buffer** row = slots_[stream];
    if (row[dest] == nullptr) return;
    buffer* staged = row[dest];
    row[dest] = nullptr;
    unstage(staged);
    deliver(staged);
  };
  send_staged();
  buffer* b = acquire();
  send_staged();
  b->stream = stream;
  b->dest = dest;
  b->source = rank_base_ + local_core_;
  b->bytes = 0;
  b->count = 0;
  b->run_handler = 0;
  b->fence = fence;
  b->dirty_index = -1;
  deliver(b);
}

void aggregator::give_back(buffer* b) {
  if (b->overflow) {
    std::free(b);
    return;
  }
  // Cannot fail: the return ring holds the whole pool.
  returns_.try_push(b);
}

bool aggregator::accept_remote(buffer* b) {
  if (!inbound_.try_push(b)) return false;
  // Release: the push is visible before the count to delivered()'s acquire.
  delivered_.fetch_add(1, std::memory_order_release);
  scheduler_of(local_core_).notify();
  return true;
}

void aggregator::deliver(buffer* b) {
  if (is_closure_stream(b->stream)) close_run(b, b->bytes);
  if (b->stream != control_stream) {
    sent_[b->stream] += b->count;
    app_sent_ += b->count;
  }
  ++sent_since_poll_;
  ++stats_.packets_sent;
  stats_.messages_sent += b->count;
  stats_.bytes_sent += b->bytes;
  const int dest_rank = b->dest / g_info.local_cores;
  if (dest_rank != g_info.rank) {
    // Relaxed: statistics, read by other threads only to sum them.
    remote_batches_.store(remote_batches_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
    remote_messages_.store(remote_messages_.load(std::memory_order_relaxed) + b->count,
                           std::memory_order_relaxed);
    remote_bytes_.store(remote_bytes_.load(std::memory_order_relaxed) + b->bytes + sizeof(buffer),
                        std::memory_order_relaxed);
    if (peer_seen_.empty()) peer_seen_.resize(static_cast<std::size_t>(g_info.ranks));
    if (!peer_seen_[static_cast<std::size_t>(dest_rank)]) {
      peer_seen_[static_cast<std::size_t>(dest_rank)] = true;
      remote_peers_.store(remote_peers_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
    }
    // Another process: the network copies the batch into its buffer for
    // that rank and gives ours back once that buffer has been sent.
    this_network()->stage(b, dest_rank);
    return;
  }
  const int dest_local = b->dest - rank_base_;
  aggregator& target = aggregator_of(dest_local);
  if (!pending_.empty() || !target.inbound_.try_push(b)) {
    pending_.push_back(b);
    // Release: to has_pending_delivery()'s acquire in the quiescence check.
    pending_size_.store(pending_.size(), std::memory_order_release);
    return;
  }
  // Release: as in accept_remote(); the push comes before the count.
  target.delivered_.fetch_add(1, std::memory_order_release);
  scheduler_of(dest_local).notify();
}

bool aggregator::retry_pending() {
  std::size_t done = 0;
  for (; done < pending_.size(); ++done) {
    buffer* b = pending_[done];
    // Read before the push: once pushed, the target core may handle the
    // batch and free or reuse b at once (ThreadSanitizer caught b->dest read
    // after the push, against the free of an overflow buffer).
    const int dest_local = b->dest - rank_base_;
    aggregator& target = aggregator_of(dest_local);
    if (!target.inbound_.try_push(b)) break;
    // Release: as in accept_remote(); the push comes before the count.
    target.delivered_.fetch_add(1, std::memory_order_release);
    scheduler_of(dest_local).notify();
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
  // Release: the deliveries' counts come before the pending size drops.
  pending_size_.store(pending_.size(), std::memory_order_release);
  return done > 0;
}

void aggregator::dispatch_closures(buffer* b) {
  char* p = b->data();
  char* const end = p + b->bytes;
  while (p < end) {
    closure_run_header h;
    std::memcpy(&h, p, sizeof h);
    from_handler_id(h.handler)(p + sizeof h, h.bytes);
    p += sizeof h + h.bytes;
  }
}

void aggregator::dispatch(buffer* b) {
  const char* p = b->data();
  if (is_closure_stream(b->stream)) {
    dispatch_closures(b);
  } else {
    const channel_entry& e = g_channels[b->stream];
    SHOAL_CHECK(e.deliver != nullptr,
                "a batch for typed channel {} arrived, but that channel is not open in this "
                "process (channels are not yet opened across processes)",
                b->stream);
    // The channel's receive loop reads count values: they must be the bytes
    // (value_bytes 0: variable-length records, which their loop checks).
    SHOAL_CHECK(e.value_bytes == 0 || std::uint64_t{b->count} * e.value_bytes == b->bytes,
                "a batch for typed channel {} holds {} bytes, not {} values of {} bytes", b->stream,
                b->bytes, b->count, e.value_bytes);
    // Read before the handlers run: once the last value is handled, the
    // program may close the channel and the entry may be reset or reused
    // (ThreadSanitizer caught the read after delivery racing with close).
    if (b->count == 0 && b->fence != 0) {
      acknowledge_fence(b);  // a fence's empty marker (channel_fence.cpp)
    } else if (b->count == 0) {
      // A round marker of a depth-limited phase (send_marker).
      std::uint64_t*& row = markers_[b->stream];
      if (row == nullptr) row = new std::uint64_t[static_cast<std::size_t>(total_cores_)]();
      ++row[b->source];
    } else {
      const bool bounded = e.max_in_flight != 0;
      tls_delivering_stream = b->stream;
      e.deliver(e.state, p, b->count);
      if (bounded) acknowledge(b);
      if (b->fence != 0) acknowledge_fence(b);  // the last batch before a fence
    }
  }
  if (b->stream != control_stream) {
    handled_[b->stream] += b->count;
    app_handled_ += b->count;
  }
  stats_.messages_received += b->count;
  stats_.bytes_received += b->bytes;
  ++stats_.packets_received;
}

void aggregator::flow_reserve_slow(std::uint32_t stream, int dest, std::uint32_t bound) {
  std::int64_t*& row = in_flight_[stream];
  if (row == nullptr) row = new std::int64_t[static_cast<std::size_t>(total_cores_)]();
  struct limit {
    const std::int64_t* count;
    std::int64_t bound;
  } const at{row + dest, static_cast<std::int64_t>(bound)};
  // Every waiting sender re-checks after its wake: another may have taken
  // the room first.
  while (sched_.in_worker() && row[dest] >= at.bound) {
    flush_all();  // what is staged here can be acknowledged only once it left
    sched_.wait_until(
        [](const void* a) {
          const auto* l = static_cast<const limit*>(a);
          return *l->count < l->bound;
        },
        &at, "channel flow control", static_cast<std::int64_t>(stream));
  }
  ++row[dest];
}

void aggregator::flow_acknowledged(std::uint32_t stream, int dest, std::uint32_t n) noexcept {
  SHOAL_ASSERT(in_flight_[stream] != nullptr, "an acknowledgement for channel {} that this core "
               "never sent on", stream);
  in_flight_[stream][dest] -= n;
}

// One control message per handled batch of a bounded channel, to the core
// that staged it (over hypercube edges under route_control_over_hypercube:
// a batch of a channel without routing may come from any process).
void aggregator::acknowledge(const buffer* b) {
  const std::uint32_t stream = b->stream;
  const std::uint32_t n = b->count;
  const int me = rank_base_ + local_core_;
  send_control_near(b->source,
                    [stream, me, n] { tls_aggregator->flow_acknowledged(stream, me, n); });
}

bool aggregator::poll() {
  bool worked = false;
  sent_since_poll_ = 0;
  drain_returns();
  if (!pending_.empty()) worked |= retry_pending();
  for (std::uint32_t i = 0; i < max_batches_per_poll; ++i) {
    buffer* b = inbound_.try_pop();
    if (b == nullptr) break;
    sched_.leave_idle();
    dispatch(b);
    if (b->owner < 0) {
      this_network()->consumed(b);  // arrived from another process, in place
    } else if (b->overflow) {
      std::free(b);  // overflow buffers are not pooled
    } else {
      // Cannot fail: the owner's return ring holds its whole pool.
      aggregator_of(b->owner).returns_.try_push(b);
    }
    // Release: the batch's handler effects (sends, counts) come before the
    // count that quiescence compares with delivered().
    processed_.fetch_add(1, std::memory_order_release);
    worked = true;
    if (tls_nudge) {
      tls_nudge = false;
      nudge_watchers();
    }
  }
  if (inbound_.ready()) {
    // More arrived than one poll takes: the next switch polls again rather
    // than poll_interval switches later (header: send bound).
    ++stats_.polls_backlogged;
    sched_.request_poll();
  }
  if (!dirty_.empty() && now_ns() - first_staged_ns_ >= flush_ns_) {
    ++stats_.flushes_on_age;
    flush_all();
  }
  if (network* n = this_network()) worked |= n->progress();
  return worked;
}

bool aggregator::on_idle() {
  network* n = this_network();
  if (dirty_.empty() && pending_.empty()) return n != nullptr && n->progress();
  ++stats_.flushes_on_idle;
  flush_all();
  retry_pending();
  if (n != nullptr) n->progress();
  return true;
}

}  // namespace shoal::detail
