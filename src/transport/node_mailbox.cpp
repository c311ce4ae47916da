#include "transport/node_mailbox.hpp"

#include "shoal/detail/check.hpp"

#include <bit>
#include <new>

namespace shoal::detail {
namespace {
constexpr std::size_t up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

std::uint32_t node_mailbox::ring_capacity(std::uint32_t slots) {
  return std::bit_ceil(std::max<std::uint32_t>(slots, 2));
}

std::size_t node_mailbox::ring_bytes(std::uint32_t slots) {
  return up(128 + std::size_t{ring_capacity(slots)} * sizeof(std::uint64_t), 64);
}

std::size_t node_mailbox::slots_offset(int node_size, std::uint32_t slots) {
  return up(2 * static_cast<std::size_t>(node_size) * ring_bytes(slots), 4096);
}

std::size_t node_mailbox::segment_bytes(int node_size, std::uint32_t slots,
                                        std::size_t slot_bytes) {
  return slots_offset(node_size, slots) + std::size_t{slots} * up(slot_bytes, 64);
}

void node_mailbox::init_segment(char* base, int node_size, std::uint32_t slots) {
  const std::size_t rb = ring_bytes(slots);
  for (std::size_t i = 0; i < 2 * static_cast<std::size_t>(node_size); ++i) {
    auto* r = new (base + i * rb) ring;
    r->head.store(0, std::memory_order_relaxed);
    r->tail.store(0, std::memory_order_relaxed);
  }
  // Published to the other processes by the collective that follows (they
  // map it only after it), as a thread's writes are by starting another.
}

node_mailbox::node_mailbox(std::vector<char*> bases, int me, std::uint32_t slots,
                           std::size_t slot_bytes)
    : bases_(std::move(bases)),
      me_(me),
      node_size_(static_cast<int>(bases_.size())),
      slots_(slots),
      slot_bytes_(up(slot_bytes, 64)),
      mask_(ring_capacity(slots) - 1),
      slots_off_(slots_offset(node_size_, slots)) {
  SHOAL_CHECK(me >= 0 && me < node_size_ && slots > 0, "node_mailbox: process {} of {}, {} slots",
              me, node_size_, slots);
  free_.reserve(slots);
  // Lowest slot last, so the first taken is slot 0 (tests read it so).
  for (std::uint32_t i = slots; i > 0; --i) free_.push_back(i - 1);
}

node_mailbox::ring& node_mailbox::ring_in(int owner, int peer, bool returns) const noexcept {
  const std::size_t index = 2 * static_cast<std::size_t>(peer) + (returns ? 1 : 0);
  return *std::launder(reinterpret_cast<ring*>(bases_[static_cast<std::size_t>(owner)] +
                                               index * ring_bytes(slots_)));
}

char* node_mailbox::take_slot(std::uint32_t keep_free) {
  std::lock_guard lock(free_mu_);
  if (free_.size() <= keep_free) return nullptr;
  const std::uint32_t i = free_.back();
  free_.pop_back();
  return slot_at(me_, i);
}

bool node_mailbox::is_own_slot(const char* p) const noexcept {
  const char* first = bases_[static_cast<std::size_t>(me_)] + slots_off_;
  if (p < first || p >= first + std::size_t{slots_} * slot_bytes_) return false;
  return static_cast<std::size_t>(p - first) % slot_bytes_ == 0;
}

void node_mailbox::put_slot(char* slot) {
  SHOAL_ASSERT(is_own_slot(slot), "node_mailbox::put_slot: not a slot of this process");
  const char* first = bases_[static_cast<std::size_t>(me_)] + slots_off_;
  std::lock_guard lock(free_mu_);
  free_.push_back(static_cast<std::uint32_t>(static_cast<std::size_t>(slot - first) / slot_bytes_));
}

void node_mailbox::publish(int peer, char* slot, std::size_t bytes) {
  SHOAL_ASSERT(is_own_slot(slot) && bytes <= slot_bytes_ && peer != me_,
               "node_mailbox::publish: {} bytes to node process {}", bytes, peer);
  const char* first = bases_[static_cast<std::size_t>(me_)] + slots_off_;
  const auto index =
      static_cast<std::uint64_t>(static_cast<std::size_t>(slot - first) / slot_bytes_);
  ring& r = ring_of(me_, peer, /*returns=*/false);
  const std::uint64_t head = r.head.load(std::memory_order_relaxed);
  SHOAL_ASSERT(head - r.tail.load(std::memory_order_relaxed) <= mask_,
               "node_mailbox: a full ring (a slot published twice?)");
  r.entries()[head & mask_] = index << 32 | static_cast<std::uint64_t>(bytes);
  // Release: the message's bytes and the entry before the peer sees head.
  r.head.store(head + 1, std::memory_order_release);
}

int node_mailbox::owner_of(const char* p) const noexcept {
  for (int i = 0; i < node_size_; ++i) {
    const char* first = bases_[static_cast<std::size_t>(i)] + slots_off_;
    if (p >= first && p < first + std::size_t{slots_} * slot_bytes_) return i;
  }
  return -1;
}

void node_mailbox::give_back(const char* data) {
  const int owner = owner_of(data);
  SHOAL_ASSERT(owner >= 0 && owner != me_, "node_mailbox::give_back: not a peer's slot");
  const char* first = bases_[static_cast<std::size_t>(owner)] + slots_off_;
  const auto index =
      static_cast<std::uint64_t>(static_cast<std::size_t>(data - first) / slot_bytes_);
  ring& r = ring_in(owner, me_, /*returns=*/true);
  const std::uint64_t head = r.head.load(std::memory_order_relaxed);
  r.entries()[head & mask_] = index;
  // Release: this process's reads of the slot come before its owner reuses it.
  r.head.store(head + 1, std::memory_order_release);
}

bool node_mailbox::collect_returns() {
  bool any = false;
  for (int p = 0; p < node_size_; ++p) {
    if (p == me_) continue;
    ring& r = ring_in(me_, p, /*returns=*/true);
    std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
    const std::uint64_t head = r.head.load(std::memory_order_acquire);
    if (tail == head) continue;
    any = true;
    std::lock_guard lock(free_mu_);
    for (; tail != head; ++tail)
      free_.push_back(static_cast<std::uint32_t>(r.entries()[tail & mask_]));
    r.tail.store(tail, std::memory_order_relaxed);
  }
  return any;
}

std::uint32_t node_mailbox::slots_out() {
  std::lock_guard lock(free_mu_);
  return slots_ - static_cast<std::uint32_t>(free_.size());
}

}  // namespace shoal::detail
