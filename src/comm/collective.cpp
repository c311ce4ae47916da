// The collectives' engine: process slots (level 1) and the leaders' tree
// exchange (level 2). See include/shoal/detail/collective_engine.hpp.
#include "shoal/detail/check.hpp"
#include "shoal/detail/collective_engine.hpp"
#include "tasks/scheduler.hpp"
#include "shoal/message.hpp"
#include "shoal/per_core.hpp"
#include "shoal/runtime.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "comm/send_in_place.hpp"

namespace shoal::detail {
namespace {

/// The process's slots, kept in local core 0's per_core entry.
struct process_slots {
  std::array<coll_slot, slot_ring> slots;
  process_slots() {
    for (int i = 0; i < slot_ring; ++i) {
      slots[static_cast<std::size_t>(i)].owner.store(i, std::memory_order_relaxed);
      slots[static_cast<std::size_t>(i)].posts.resize(static_cast<std::size_t>(g_info.local_cores));
    }
  }
};

/// A buffer arriving from another leader: (call, phase) from `src` rank.
struct inbox_entry {
  std::int64_t key = 0;  ///< seq * 4 + phase
  int src = 0;
  coll_kind kind = coll_kind::allreduce;
  std::int64_t received = 0;
  byte_buffer buf;
};

/// The leader's buffers in flight; touched only on local core 0.
struct leader_inbox {
  std::vector<std::unique_ptr<inbox_entry>> entries;
  inbox_entry* last = nullptr;  ///< consecutive chunks mostly hit the same entry
  /// The leader's task waiting in tree_recv, and for which buffer.
  worker* waiter = nullptr;
  std::int64_t wanted_key = -1;
  int wanted_src = -1;

  inbox_entry* find(std::int64_t key, int src) {
    if (last != nullptr && last->key == key && last->src == src) return last;
    for (auto& e : entries)
      if (e->key == key && e->src == src) return last = e.get();
    return nullptr;
  }
};

per_core<coll_core_state> g_core_state;
per_core<process_slots> g_slots;  // only [0] is used
per_core<leader_inbox> g_inbox;   // only local core 0's is used

constexpr std::size_t chunk_payload = 224;

/// One piece of a buffer sent between leaders; 256 bytes, a closure message.
struct tree_chunk {
  std::int64_t key;
  std::int64_t total;
  std::int64_t offset;
  std::int32_t src_rank;
  std::int16_t bytes;
  coll_kind kind;
  std::byte payload[chunk_payload];
  void operator()() const;
};
static_assert(sizeof(tree_chunk) == max_message_bytes);

void tree_chunk::operator()() const {
  leader_inbox& in = g_inbox.local();
  inbox_entry* e = in.find(key, src_rank);
  if (e == nullptr) {
    auto fresh = std::make_unique<inbox_entry>();
    fresh->key = key;
    fresh->src = src_rank;
    fresh->kind = kind;
    fresh->buf = byte_buffer::make(total);
    e = in.last = fresh.get();
    in.entries.push_back(std::move(fresh));
  }
  if (bytes > 0) std::memcpy(e->buf.begin() + offset, payload, static_cast<std::size_t>(bytes));
  e->received += bytes;
  // The waiting task runs on this core: wake it directly, not at the next poll.
  if (e->received == e->buf.size && in.waiter != nullptr && in.wanted_key == key &&
      in.wanted_src == src_rank) {
    worker* w = std::exchange(in.waiter, nullptr);
    this_scheduler().wake(w);
  }
}

std::int64_t tree_key(const coll_call& c, int phase) { return c.seq * 4 + phase; }

bool all_posted(const void* slot) {
  // Acquire: pairs with each poster's fetch_add, making its post visible.
  return static_cast<const coll_slot*>(slot)->arrived.load(std::memory_order_acquire) ==
         g_info.local_cores;
}

bool published(const void* slot) {
  // Acquire: pairs with coll_publish's release store of the result.
  return static_cast<const coll_slot*>(slot)->ready.load(std::memory_order_acquire);
}

void check_posts_agree(const coll_call& c) {
  const std::vector<coll_post>& posts = c.slot->posts;
  for (std::size_t i = 1; i < posts.size(); ++i) {
    const int core = g_info.rank_base + static_cast<int>(i);
    SHOAL_CHECK(posts[i].kind == posts[0].kind,
                "shoal collective #{}: core {} called shoal::{}, core {} called shoal::{} (every "
                "core must call the same collectives in the same order)",
                c.seq, g_info.rank_base, coll_name(posts[0].kind), core, coll_name(posts[i].kind));
    SHOAL_CHECK(posts[i].root == posts[0].root,
                "shoal::{} #{}: core {} passed root {}, core {} passed root {}", coll_name(c.kind),
                c.seq, g_info.rank_base, posts[0].root, core, posts[i].root);
  }
}

/// Appends `b` to `out` at `at`; returns the new end.
std::int64_t append(byte_buffer& out, std::int64_t at, const void* data, std::int64_t bytes) {
  if (bytes > 0) std::memcpy(out.begin() + at, data, static_cast<std::size_t>(bytes));
  return at + bytes;
}

/// This process's part of a gather: [local_cores counts][values in core order].
byte_buffer own_gather_part(const coll_call& c, std::size_t elem) {
  const std::vector<coll_post>& posts = c.slot->posts;
  std::int64_t bytes = static_cast<std::int64_t>(posts.size() * sizeof(std::int64_t));
  for (const coll_post& p : posts) bytes += p.count * static_cast<std::int64_t>(elem);
  byte_buffer out = byte_buffer::make(bytes);
  std::int64_t at = 0;
  for (const coll_post& p : posts) at = append(out, at, &p.count, sizeof p.count);
  for (const coll_post& p : posts)
    at = append(out, at, p.data, p.count * static_cast<std::int64_t>(elem));
  return out;
}

/// Concatenates `parts` into one buffer.
byte_buffer concat(std::vector<byte_buffer>& parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  std::int64_t bytes = 0;
  for (const byte_buffer& p : parts) bytes += p.size;
  byte_buffer out = byte_buffer::make(bytes);
  std::int64_t at = 0;
  for (const byte_buffer& p : parts) at = append(out, at, p.begin(), p.size);
  return out;
}

/// At the gather's root: the subtree blob (each rank's part, in relative
/// rank order from root_rank) turned into [offsets][values in core order].
byte_buffer assemble_gather(const coll_call& c, const byte_buffer& blob, int root_rank,
                            std::size_t elem, bool same_counts) {
  const int nranks = g_info.ranks;
  const int lc = g_info.local_cores;
  const auto nc = static_cast<std::size_t>(g_info.total_cores);
  std::vector<const std::byte*> values_of(static_cast<std::size_t>(nranks));
  std::vector<std::int64_t> counts(nc);
  std::int64_t at = 0;
  for (int i = 0; i < nranks; ++i) {
    const int r = (root_rank + i) % nranks;
    std::memcpy(&counts[static_cast<std::size_t>(r * lc)], blob.begin() + at,
                static_cast<std::size_t>(lc) * sizeof(std::int64_t));
    at += lc * static_cast<std::int64_t>(sizeof(std::int64_t));
    values_of[static_cast<std::size_t>(r)] = blob.begin() + at;
    for (int k = 0; k < lc; ++k)
      at += counts[static_cast<std::size_t>(r * lc + k)] * static_cast<std::int64_t>(elem);
  }
  SHOAL_CHECK(at == blob.size, "shoal::{} #{}: malformed gather ({} of {} bytes)",
              coll_name(c.kind), c.seq, at, blob.size);
  for (std::size_t k = 1; same_counts && k < nc; ++k)
    SHOAL_CHECK(counts[k] == counts[0],
                "shoal::{} #{}: core {} passed {} elements, core {} passed {}", coll_name(c.kind),
                c.seq, 0, counts[0], k, counts[k]);
  std::vector<std::int64_t> offsets(nc + 1, 0);
  for (std::size_t k = 0; k < nc; ++k) offsets[k + 1] = offsets[k] + counts[k];
  const auto head = static_cast<std::int64_t>((nc + 1) * sizeof(std::int64_t));
  byte_buffer out = byte_buffer::make(head + offsets[nc] * static_cast<std::int64_t>(elem));
  append(out, 0, offsets.data(), head);
  for (int r = 0; r < nranks; ++r) {
    const std::int64_t first = offsets[static_cast<std::size_t>(r * lc)];
    const std::int64_t n = offsets[static_cast<std::size_t>((r + 1) * lc)] - first;
    append(out, head + first * static_cast<std::int64_t>(elem),
           values_of[static_cast<std::size_t>(r)], n * static_cast<std::int64_t>(elem));
  }
  return out;
}

}  // namespace

const char* coll_name(coll_kind k) noexcept {
  switch (k) {
    case coll_kind::allreduce:
      return "allreduce";
    case coll_kind::reduce:
      return "reduce";
    case coll_kind::broadcast:
      return "broadcast";
    case coll_kind::gather:
      return "gather";
    case coll_kind::allgather:
      return "allgather";
    case coll_kind::scan:
      return "exclusive_scan_sum";
  }
  return "collective";
}

coll_call coll_enter(coll_kind kind, const void* data, std::int64_t count, int root) {
  SHOAL_CHECK(tls_core >= 0 && in_worker(),
              "shoal::{} called outside a task on a shoal core (collectives are for SPMD tasks, "
              "e.g. inside on_all_cores)",
              coll_name(kind));
  const std::int64_t seq = g_core_state.local().next_seq++;
  coll_slot& slot = g_slots[0].slots[static_cast<std::size_t>(seq % slot_ring)];
  // Acquire: pairs with the release in coll_leave that handed the slot on.
  SHOAL_CHECK(slot.owner.load(std::memory_order_acquire) == seq,
              "shoal::{} #{}: the slot of this call is still held by call #{}", coll_name(kind),
              seq, slot.owner.load(std::memory_order_relaxed));
  const int local = tls_core - g_info.rank_base;
  slot.posts[static_cast<std::size_t>(local)] = coll_post{data, count, kind, root};
  // Acq_rel: publishes this post to the leader (release); orders after earlier posts.
  const int arrived = slot.arrived.fetch_add(1, std::memory_order_acq_rel) + 1;
  coll_call c{&slot, seq, kind, root, local == 0};
  if (!c.leader) {
    if (arrived == g_info.local_cores) scheduler_of(0).notify();
    return c;
  }
  this_scheduler().wait_until(all_posted, &slot, coll_name(kind), seq);
  check_posts_agree(c);
  return c;
}

void coll_check_local_counts(const coll_call& c, std::int64_t count) {
  const std::vector<coll_post>& posts = c.slot->posts;
  for (std::size_t i = 0; i < posts.size(); ++i)
    SHOAL_CHECK(posts[i].count == count,
                "shoal::{} #{}: core {} passed {} elements, core {} passed {} (the lengths must "
                "agree)",
                coll_name(c.kind), c.seq, g_info.rank_base, count,
                g_info.rank_base + static_cast<int>(i), posts[i].count);
}

void coll_publish(const coll_call& c, byte_buffer result) {
  c.slot->result = std::move(result);
  // Release: the result is complete before a waiting core sees `ready`.
  c.slot->ready.store(true, std::memory_order_release);
  if (g_info.local_cores > 1) nudge_watchers();
}

void coll_wait_result(const coll_call& c) {
  this_scheduler().wait_until(published, c.slot, coll_name(c.kind), c.seq);
}

void coll_leave(const coll_call& c) {
  coll_slot& s = *c.slot;
  // Acq_rel: the last core to leave sees every other core's reads finished.
  if (s.left.fetch_add(1, std::memory_order_acq_rel) + 1 < g_info.local_cores) return;
  s.result = byte_buffer{};
  s.arrived.store(0, std::memory_order_relaxed);
  s.left.store(0, std::memory_order_relaxed);
  s.ready.store(false, std::memory_order_relaxed);
  // Release: the reset above happens before the next owner's first post.
  s.owner.store(c.seq + slot_ring, std::memory_order_release);
}

rank_tree make_rank_tree(int root_rank) {
  const int n = g_info.ranks;
  const int v = (g_info.rank - root_rank + n) % n;
  rank_tree t;
  const int low = v & -v;  // 0 at the root
  if (v > 0) t.parent = (v - low + root_rank) % n;
  t.wait_for_ask = v > 0 && low > 1;  // not its parent's first child (v - low + 1)
  for (int k = 1; (v == 0 || k < low) && v + k < n; k <<= 1)
    t.children.push_back((v + k + root_rank) % n);
  return t;
}

void tree_send(int rank, const coll_call& c, int phase, const void* data, std::int64_t bytes) {
  const int dest = rank * g_info.local_cores;
  const auto* from = static_cast<const std::byte*>(data);
  std::int64_t offset = 0;
  do {
    const std::int64_t n = std::min<std::int64_t>(chunk_payload, bytes - offset);
    tree_chunk* m = stage_in_place<tree_chunk>(dest);
    m->key = tree_key(c, phase);
    m->total = bytes;
    m->offset = offset;
    m->src_rank = g_info.rank;
    m->kind = c.kind;
    m->bytes = static_cast<std::int16_t>(n);
    if (n > 0) std::memcpy(m->payload, from + offset, static_cast<std::size_t>(n));
    offset += n;
  } while (offset < bytes);
  flush();
}

byte_buffer tree_recv(int rank, const coll_call& c, int phase) {
  const std::int64_t key = tree_key(c, phase);
  leader_inbox& in = g_inbox.local();
  const inbox_entry* e = in.find(key, rank);
  if (e == nullptr || e->received < e->buf.size) {
    scheduler& s = this_scheduler();
    in.waiter = s.current;
    in.wanted_key = key;
    in.wanted_src = rank;
    s.suspend(coll_name(c.kind), c.seq);
  }
  auto it = std::find_if(in.entries.begin(), in.entries.end(),
                         [&](const auto& x) { return x->key == key && x->src == rank; });
  SHOAL_CHECK((*it)->kind == c.kind,
              "shoal collective #{}: core {} called shoal::{}, core {} called shoal::{} (every "
              "core must call the same collectives in the same order)",
              c.seq, rank * g_info.local_cores, coll_name((*it)->kind), tls_core,
              coll_name(c.kind));
  byte_buffer out = std::move((*it)->buf);
  if (in.last == it->get()) in.last = nullptr;
  in.entries.erase(it);
  return out;
}

void tree_send_up(const rank_tree& t, const coll_call& c, const void* data, std::int64_t bytes) {
  if (t.wait_for_ask) (void)tree_recv(t.parent, c, 2);
  tree_send(t.parent, c, 0, data, bytes);
}

byte_buffer tree_pull(const rank_tree& t, std::size_t i, const coll_call& c) {
  if (i > 0) tree_send(t.children[i], c, 2, nullptr, 0);
  return tree_recv(t.children[i], c, 0);
}

byte_buffer gather_to(const coll_call& c, std::size_t elem, bool to_all, bool same_counts) {
  const int root_rank = to_all ? 0 : c.root / g_info.local_cores;
  const rank_tree t = make_rank_tree(root_rank);
  std::vector<byte_buffer> parts;
  parts.push_back(own_gather_part(c, elem));
  for (std::size_t i = 0; i < t.children.size(); ++i) parts.push_back(tree_pull(t, i, c));
  byte_buffer blob = concat(parts);
  byte_buffer result;
  if (t.parent >= 0) {
    tree_send_up(t, c, blob.begin(), blob.size);
  } else {
    result = assemble_gather(c, blob, root_rank, elem, same_counts);
  }
  if (!to_all) return result;
  return broadcast_down(c, 0, std::move(result));
}

byte_buffer broadcast_down(const coll_call& c, int root_rank, byte_buffer payload) {
  const rank_tree t = make_rank_tree(root_rank);
  if (t.parent >= 0) payload = tree_recv(t.parent, c, 1);
  // Largest subtree first: it has the longest way to go.
  for (auto it = t.children.rbegin(); it != t.children.rend(); ++it)
    tree_send(*it, c, 1, payload.begin(), payload.size);
  return payload;
}

}  // namespace shoal::detail
