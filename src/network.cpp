#include "network.hpp"

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace shoal::detail {
namespace {
network* g_network = nullptr;
constexpr std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }
constexpr int receives_posted = 16;
}  // namespace

network* this_network() noexcept { return g_network; }

network::network(transport& t, std::size_t net_bytes, int window, std::size_t receive_limit)
    : net_(t),
      net_bytes_(net_bytes),
      window_(window),
      receive_limit_(static_cast<std::int64_t>(receive_limit)) {
  for (int r = 0; r < t.ranks(); ++r) out_.push_back(std::make_unique<outbox>());
  net_.start_messages(net_bytes_, receives_posted);
  g_network = this;
}

network::~network() {
  g_network = nullptr;
  for (auto& o : out_) {
    delete o->current;
    for (net_buffer* nb : o->queued) delete nb;
  }
  for (net_buffer* nb : pool_) delete nb;
  for (buffer* b : pending_inbound_) std::free(b);
}

network::net_buffer* network::take_buffer() {
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    if (!pool_.empty()) {
      net_buffer* nb = pool_.back();
      pool_.pop_back();
      return nb;
    }
  }
  // Bounded: every buffer out holds at least one core buffer, and those
  // come from the cores' fixed pools.
  allocated_.fetch_add(1, std::memory_order_relaxed);
  auto* nb = new net_buffer;
  nb->bytes.resize(net_bytes_);
  nb->batches.reserve(16);
  return nb;
}

void network::give_back(net_buffer* nb) {
  nb->used = 0;
  nb->batches.clear();
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(nb);
}

void network::stage(buffer* b, int dest_rank) {
  const std::size_t need = sizeof(buffer) + align64(b->bytes);
  SHOAL_ASSERT(need <= net_bytes_, "an aggregation buffer exceeds the network buffer");
  outbox& o = *out_[static_cast<std::size_t>(dest_rank)];
  std::lock_guard<std::mutex> lock(o.mu);
  if (o.current != nullptr && o.current->used + need > net_bytes_) {
    o.queued.push_back(o.current);
    o.current = nullptr;
  }
  if (o.current == nullptr) {
    o.current = take_buffer();
    o.current->dest = dest_rank;
    unsent_.fetch_add(1, std::memory_order_acq_rel);
  }
  char* p = o.current->bytes.data() + o.current->used;
  std::memcpy(p, static_cast<const void*>(b), sizeof(buffer));
  std::memcpy(p + sizeof(buffer), b->data(), b->bytes);
  o.current->used += need;
  o.current->batches.push_back(b);
  sent_.fetch_add(1, std::memory_order_acq_rel);
}

void network::on_sent(void* self, void* token) {
  auto* n = static_cast<network*>(self);
  auto* nb = static_cast<net_buffer*>(token);
  for (buffer* b : nb->batches) aggregator_of(b->owner).give_back(b);
  {
    outbox& o = *n->out_[static_cast<std::size_t>(nb->dest)];
    std::lock_guard<std::mutex> lock(o.mu);
    --o.in_flight;
  }
  n->give_back(nb);
  n->net_sent_.fetch_add(1, std::memory_order_relaxed);
  n->unsent_.fetch_sub(1, std::memory_order_acq_rel);
}

void network::on_received(void* self, int, const char* data, std::size_t bytes) {
  auto* n = static_cast<network*>(self);
  std::size_t at = 0;
  while (at < bytes) {
    buffer header;
    std::memcpy(static_cast<void*>(&header), data + at, sizeof header);
    const std::size_t total = sizeof(buffer) + align64(header.bytes);
    void* mem = std::aligned_alloc(64, total);
    SHOAL_CHECK(mem != nullptr, "out of memory for a received batch of {} bytes", total);
    auto* b = new (mem) buffer(header);
    std::memcpy(b->data(), data + at + sizeof(buffer), header.bytes);
    b->overflow = true;  // freed by the receiving core after dispatch
    b->owner = -1;       // came from the network: its core reports consumed()
    b->dirty_index = -1;
    at += total;
    n->held_.fetch_add(static_cast<std::int64_t>(header.bytes), std::memory_order_relaxed);
    n->received_.fetch_add(1, std::memory_order_acq_rel);
    if (!n->pending_inbound_.empty() ||
        !aggregator_of(b->dest - g_info.rank_base).accept_remote(b)) {
      n->pending_inbound_.push_back(b);
      n->pending_count_.store(n->pending_inbound_.size(), std::memory_order_release);
    }
  }
}

bool network::retry_inbound() {
  std::size_t done = 0;
  for (; done < pending_inbound_.size(); ++done) {
    buffer* b = pending_inbound_[done];
    if (!aggregator_of(b->dest - g_info.rank_base).accept_remote(b)) break;
  }
  pending_inbound_.erase(pending_inbound_.begin(),
                         pending_inbound_.begin() + static_cast<std::ptrdiff_t>(done));
  pending_count_.store(pending_inbound_.size(), std::memory_order_release);
  return done > 0;
}

bool network::send_ready() {
  bool any = false;
  for (auto& op : out_) {
    outbox& o = *op;
    for (;;) {
      net_buffer* nb = nullptr;
      {
        std::lock_guard<std::mutex> lock(o.mu);
        if (o.in_flight >= window_) break;
        if (!o.queued.empty()) {
          nb = o.queued.front();
          o.queued.pop_front();
        } else if (o.current != nullptr && o.in_flight == 0) {
          // Nothing to this rank in flight: send what is there now rather
          // than wait for the buffer to fill (latency); what comes while it
          // travels is combined into the next one.
          nb = o.current;
          o.current = nullptr;
        } else {
          break;
        }
        ++o.in_flight;
      }
      net_.send(nb->dest, nb->bytes.data(), nb->used, nb);
      any = true;
    }
  }
  return any;
}

bool network::progress() {
  std::unique_lock<std::mutex> lock(drive_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = false;
  if (!pending_inbound_.empty()) any |= retry_inbound();
  if (unsent_.load(std::memory_order_acquire) != 0) any |= send_ready();
  const bool receive = held_.load(std::memory_order_relaxed) < receive_limit_;
  any |= net_.poll(transport::events{this, on_sent, on_received}, receive);
  return any;
}

bool network::idle() const {
  return unsent_.load(std::memory_order_acquire) == 0 &&
         pending_count_.load(std::memory_order_acquire) == 0;
}

}  // namespace shoal::detail
