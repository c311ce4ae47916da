#include "comm/network.hpp"

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/message.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "comm/arrived_buffer.hpp"
#include "comm/stream_copy.hpp"
#include "tasks/scheduler.hpp"

namespace shoal::detail {
namespace {
network* g_network = nullptr;
constexpr std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }
constexpr int receives_posted = 16;
}  // namespace

network* this_network() noexcept { return g_network; }

void push_staged() {
  tls_aggregator->flush_all();
  // Another thread driving the network sends what was staged (progress
  // returns at once then); else this core sends it now.
  if (g_network != nullptr) g_network->progress();
}

void push_staged_partial() {
  tls_aggregator->flush_all();
  if (g_network != nullptr) g_network->send_partial();
}

network::network(transport& t, std::size_t net_bytes, int window, std::size_t receive_limit,
                 bool node_shared)
    : net_(t),
      net_bytes_(net_bytes),
      window_(window),
      receive_limit_(static_cast<std::int64_t>(receive_limit)) {
  for (int r = 0; r < t.ranks(); ++r) out_.push_back(std::make_unique<outbox>());
  net_.start_messages(net_bytes_, receives_posted, node_shared);
  g_network = this;
}

network::~network() {
  g_network = nullptr;
  auto drop = [this](net_buffer* nb) {
    if (nb != nullptr && nb->in_node()) net_.drop_node_buffer(nb->data);
    delete nb;
  };
  for (auto& o : out_) {
    drop(o->current);
    for (net_buffer* nb : o->queued) drop(nb);
  }
  for (net_buffer* nb : pool_) delete nb;
  // The transport outlives this network (init/finalize cycles): give back
  // the receive buffers that were kept, handled or not.
  for (auto& rb : blocks_)
    if (rb->data != nullptr) net_.recycle(rb->data);
}

network::net_buffer* network::take_buffer(int dest) {
  net_buffer* nb = nullptr;
  {
    lock_guard lock(pool_mu_);
    peak_ = std::max(peak_, ++out_count_);
    if (!pool_.empty()) {
      nb = pool_.back();
      pool_.pop_back();
    }
  }
  if (nb == nullptr) {
    // Bounded: every buffer out holds at least one core buffer, and those
    // come from the cores' fixed pools.
    allocated_.fetch_add(1, std::memory_order_relaxed);
    nb = new net_buffer;
    nb->batches.reserve(16);
  }
  nb->data = net_.node_buffer(dest);
  if (nb->data == nullptr) {
    if (nb->bytes.empty()) nb->bytes.resize(net_bytes_);
    nb->data = nb->bytes.data();
  }
  return nb;
}

void network::note_open(std::uint64_t now) {
  // Relaxed: a statistic; the CAS only keeps the largest value seen.
  std::uint64_t peak = open_peak_.load(std::memory_order_relaxed);
  while (now > peak && !open_peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

network::net_buffer* network::close_current(outbox& o) {
  net_buffer* nb = o.current;
  o.current = nullptr;
  open_.fetch_sub(1, std::memory_order_relaxed);
  return nb;
}

void network::give_back(net_buffer* nb) {
  nb->used = 0;
  nb->lone = nullptr;
  nb->batches.clear();
  nb->data = nullptr;  // a node buffer is the transport's once sent
  lock_guard lock(pool_mu_);
  --out_count_;
  pool_.push_back(nb);
}

void network::copy_batch(const buffer* b, char* to) {
  std::memcpy(to, static_cast<const void*>(b), sizeof(buffer));
  copy_streaming(to + sizeof(buffer), b->data(), b->bytes);
}

void network::stage(buffer* b, int dest_rank) {
  const std::size_t need = sizeof(buffer) + align64(b->bytes);
  SHOAL_ASSERT(need <= net_bytes_, "an aggregation buffer exceeds the network buffer");
  outbox& o = *out_[static_cast<std::size_t>(dest_rank)];
  lock_guard lock(o.mu);
  if (o.current != nullptr && o.current->used + need > net_bytes_)
    o.queued.push_back(close_current(o));
  if (o.current == nullptr) {
    o.current = take_buffer(dest_rank);
    note_open(open_.fetch_add(1, std::memory_order_relaxed) + 1);
    o.current->dest = dest_rank;
    // Acq_rel: the new buffer counts before its batch is counted sent, for
    // idle() and the driver's acquire load in drive().
    unsent_.fetch_add(1, std::memory_order_acq_rel);
  }
  net_buffer& nb = *o.current;
  if (nb.batches.empty() && !nb.in_node()) {
    // Alone so far: it may leave as it is (lone_batch), so no copy yet.
    // (Into a node buffer every batch is copied at once: that copy is the
    // only one on its way, the receiver reads it where it is.)
    nb.lone = b;
  } else {
    if (nb.lone != nullptr) {
      copy_batch(nb.lone, nb.data);
      nb.lone = nullptr;
    }
    copy_batch(b, nb.data + nb.used);
  }
  nb.used += need;
  nb.batches.push_back(b);
  // Acq_rel: the staged batch (and unsent_) are visible to a termination
  // wave that reads this count with acquire.
  sent_.fetch_add(1, std::memory_order_acq_rel);
}

void network::on_sent(void* self, void* token) {
  auto* n = static_cast<network*>(self);
  auto* nb = static_cast<net_buffer*>(token);
  n->drive_.assert_held();  // called back from net_.poll() in drive()
  for (buffer* b : nb->batches) aggregator_of(b->owner).give_back(b);
  {
    outbox& o = *n->out_[static_cast<std::size_t>(nb->dest)];
    lock_guard lock(o.mu);
    --o.in_flight;
  }
  n->give_back(nb);
  n->net_sent_.fetch_add(1, std::memory_order_relaxed);
  // Acq_rel: the core buffers' give-back comes before idle() sees zero.
  n->unsent_.fetch_sub(1, std::memory_order_acq_rel);
}

bool network::on_received(void* self, int source, char* data, std::size_t bytes) {
  auto* n = static_cast<network*>(self);
  n->drive_.assert_held();  // called back from net_.poll() in drive()
  if (bytes == 0) return false;
  // Checked whole before any batch is split off: the walk below and the
  // cores' dispatch trust every header and run length in it.
  const arrived_limits lim{source, g_info.ranks, g_info.local_cores, g_info.rank, n->net_bytes_};
  const std::string bad = check_arrived(data, bytes, lim);
  SHOAL_CHECK(bad.empty(), "a malformed network buffer of {} bytes arrived from rank {}: {}", bytes,
              source, bad);
  recv_block* rb = n->take_block(data);
  int batches = 0;
  for_each_batch(data, bytes, [&](std::size_t, const buffer&) { ++batches; });
  // Relaxed: published to the cores with the batches, by the ring pushes.
  rb->batches.store(batches, std::memory_order_relaxed);
  n->held_.fetch_add(static_cast<std::int64_t>(n->net_bytes_), std::memory_order_relaxed);
  for_each_batch(data, bytes, [&](std::size_t at, const buffer& header) {
    // The batch is handled where it arrived: 64-byte aligned, since the
    // buffer is and every batch in it starts at a multiple of 64.
    auto* b = new (data + at) buffer(header);
    b->overflow = false;
    b->owner = -1;  // came from the network: its core reports consumed()
    b->dirty_index = -1;
    b->block = rb;
    // Acq_rel: counted before the batch reaches its core, so a wave never
    // sees its effects without the receive (pairs with batches_received()).
    n->received_.fetch_add(1, std::memory_order_acq_rel);
    if (!n->pending_inbound_.empty() ||
        !aggregator_of(b->dest - g_info.rank_base).accept_remote(b)) {
      n->pending_inbound_.push_back(b);
      // Release: to idle()'s acquire; a waiting batch keeps the net busy.
      n->pending_count_.store(n->pending_inbound_.size(), std::memory_order_release);
    }
  });
  return true;
}

network::recv_block* network::take_block(char* data) {
  if (free_blocks_.empty()) {
    // Bounded like the kept buffers themselves (by the receive limit).
    blocks_.push_back(std::make_unique<recv_block>());
    free_blocks_.push_back(blocks_.back().get());
  }
  recv_block* rb = free_blocks_.back();
  free_blocks_.pop_back();
  rb->data = data;
  return rb;
}

void network::consumed(buffer* b) {
  auto* rb = static_cast<recv_block*>(b->block);
  // Acq_rel: this core's reads of its batch happen before the buffer is
  // reused, and the last core to finish sees every other core's.
  if (rb->batches.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  lock_guard lock(handled_mu_);
  handled_.push_back(rb);
  // Relaxed: a hint that spares the driver the lock; handled_ is under it.
  has_handled_.store(true, std::memory_order_relaxed);
}

// Driver only: gives the fully handled receive buffers back to the
// transport, which posts them again.
bool network::recycle_blocks() {
  lock_guard lock(handled_mu_);
  for (recv_block* rb : handled_) {
    net_.recycle(rb->data);
    rb->data = nullptr;
    free_blocks_.push_back(rb);
    held_.fetch_sub(static_cast<std::int64_t>(net_bytes_), std::memory_order_relaxed);
  }
  const bool any = !handled_.empty();
  handled_.clear();
  // Relaxed: a hint, as in consumed().
  has_handled_.store(false, std::memory_order_relaxed);
  return any;
}

bool network::retry_inbound() {
  std::size_t done = 0;
  for (; done < pending_inbound_.size(); ++done) {
    buffer* b = pending_inbound_[done];
    if (!aggregator_of(b->dest - g_info.rank_base).accept_remote(b)) break;
  }
  pending_inbound_.erase(pending_inbound_.begin(),
                         pending_inbound_.begin() + static_cast<std::ptrdiff_t>(done));
  // Release: the ring pushes (and delivered counts) come before idle() sees
  // the count drop.
  pending_count_.store(pending_inbound_.size(), std::memory_order_release);
  return done > 0;
}

void network::send_partial() {
  for (auto& op : out_) {
    outbox& o = *op;
    lock_guard lock(o.mu);
    if (o.current != nullptr) o.queued.push_back(close_current(o));
  }
  progress();
}

bool network::send_ready() {
  bool any = false;
  for (auto& op : out_) {
    outbox& o = *op;
    for (;;) {
      net_buffer* nb = nullptr;
      {
        lock_guard lock(o.mu);
        if (o.in_flight >= window_) break;
        if (!o.queued.empty()) {
          nb = o.queued.front();
          o.queued.pop_front();
        } else if (o.current != nullptr && o.in_flight == 0) {
          // Nothing to this rank in flight: send what is there now rather
          // than wait for the buffer to fill (latency); what comes while it
          // travels is combined into the next one.
          nb = close_current(o);
        } else {
          break;
        }
        ++o.in_flight;
      }
      net_.send(nb->dest, nb->wire(), nb->used, nb);
      any = true;
    }
  }
  return any;
}

bool network::progress() {
  if (!drive_.try_lock()) return false;  // another thread drives: go on with the work
  lock_guard lock(drive_, adopt_lock);
  // A worker drives on its core's service stack: MPI calls may need more
  // stack than a worker has (scheduler::run_off_worker_stack).
  bool any = false;
  off_worker_stack([this, &any] {
    drive_.assert_held();  // by this thread, which waits for the call
    any = drive();
  });
  return any;
}

bool network::drive() {
  bool any = false;
  // Relaxed: a hint, as in consumed(); a late one is seen at the next drive.
  if (has_handled_.load(std::memory_order_relaxed)) any |= recycle_blocks();
  if (!pending_inbound_.empty()) any |= retry_inbound();
  // Acquire: pairs with stage()'s increment; the outbox is then read under its lock.
  if (unsent_.load(std::memory_order_acquire) != 0) any |= send_ready();
  const bool receive = held_.load(std::memory_order_relaxed) < receive_limit_;
  any |= net_.poll(transport::events{this, on_sent, on_received}, receive);
  return any;
}

bool network::idle() const {
  // Acquire: pair with the release sides in stage()/on_sent() and
  // on_received()/retry_inbound(), for the quiescence check.
  return unsent_.load(std::memory_order_acquire) == 0 &&
         pending_count_.load(std::memory_order_acquire) == 0;
}

}  // namespace shoal::detail
