// The engine under shoal's collectives (collective.hpp): two levels.
//
// Contract.
// - Calls. Every core of the job calls the same collectives in the same
//   order; the i-th call on every core has sequence number i (per core,
//   counted by enter()). A call's kind (allreduce, gather, ...) and root are
//   checked to agree between cores; a mismatch is fatal and named.
// - Level 1, inside a process (shared memory, no message). Each call owns
//   one of `slot_ring` process slots (seq mod slot_ring). A core posts a
//   pointer to its input and the input's length, then waits. The process's
//   leader (local core 0) waits for every local post, reads the inputs in
//   place, runs level 2, publishes one result buffer and wakes the others;
//   each core copies what it needs out of the result, and the last one to
//   leave frees the buffer and hands the slot to call seq + slot_ring.
//   Inputs are read only before the result is published, so a caller's span
//   may be its output too. A slot cannot be needed by call seq + slot_ring
//   while call seq holds it: a core reaches call seq + 2 only after every
//   local core has left call seq.
// - Level 2, between processes (leaders only). A binomial tree over ranks:
//   with relative rank v = (rank - root_rank) mod ranks, v's parent is v with
//   its lowest set bit cleared and its children are v + 2^k for 2^k below
//   that bit (ascending k); v's subtree is the contiguous relative ranks
//   [v, v + min(lowbit(v), ranks - v)). Depth ceil(log2 ranks). A buffer
//   travels from one leader to another as closure messages of 224 payload
//   bytes each (aggregated by the runtime), keyed by (seq, phase, source
//   rank): phase 0 flows up the tree, phase 1 down, phase 2 carries a
//   parent's request for a phase-0 buffer (tree_pull). Messages of a call may
//   arrive before the receiving leader has reached it; they wait in the
//   leader's inbox (one buffer per (call, phase, source), allocated at its
//   first chunk).
// - Waiting suspends the calling worker with the collective's name and the
//   call's sequence number, which the watchdog prints ("allgather #3").
#pragma once

#include "shoal/detail/process_info.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace shoal::detail {

enum class coll_kind : std::int16_t { allreduce, reduce, broadcast, gather, allgather, scan };

/// "allreduce", "gather", ...: the public name of a collective kind.
const char* coll_name(coll_kind k) noexcept;

/// An owned, uninitialised byte buffer (no zeroing of large payloads).
struct byte_buffer {
  std::unique_ptr<std::byte[]> data;
  std::int64_t size = 0;

  static byte_buffer make(std::int64_t bytes) {
    byte_buffer b;
    b.data = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
    b.size = bytes;
    return b;
  }
  std::byte* begin() const noexcept { return data.get(); }
};

/// What one core brings to a call: its input (count elements) and the root.
struct coll_post {
  const void* data = nullptr;
  std::int64_t count = 0;
  coll_kind kind = coll_kind::allreduce;
  int root = 0;
};

/// A call in flight in this process (see the contract above).
struct alignas(64) coll_slot {
  std::atomic<std::int64_t> owner{0};  ///< the sequence number that may use the slot
  std::atomic<int> arrived{0};         ///< local cores that have posted
  std::atomic<int> left{0};            ///< local cores done with the result
  std::atomic<bool> ready{false};      ///< the leader has published `result`
  std::vector<coll_post> posts;        ///< by local core
  byte_buffer result;                  ///< written by the leader before `ready`
};

/// Calls in flight per process at most (two suffice; see the contract).
inline constexpr int slot_ring = 4;

/// One core's view of the call it is in.
struct coll_call {
  coll_slot* slot;
  std::int64_t seq;
  coll_kind kind;
  int root;
  bool leader;  ///< local core 0: runs level 2 and publishes
};

/// Starts this core's next call: posts `data`/`count`, and on the leader
/// waits until every local core has posted (kinds and roots checked equal).
/// Suspends; SPMD.
coll_call coll_enter(coll_kind kind, const void* data, std::int64_t count, int root);

/// Leader: fatal unless every local post has `count` elements (names the
/// collective, the cores and both lengths).
void coll_check_local_counts(const coll_call& c, std::int64_t count);

/// Leader: publishes `result` and wakes the process's waiting cores.
void coll_publish(const coll_call& c, byte_buffer result);

/// Non-leader: suspends until the leader has published. Then any core may
/// read c.slot->result until coll_leave().
void coll_wait_result(const coll_call& c);

/// Done with the result; the last local core frees it and the slot.
void coll_leave(const coll_call& c);

// ---- level 2 (leaders only) ----

/// The binomial tree over ranks rooted at `root_rank`, seen from this rank.
struct rank_tree {
  int parent = -1;            ///< rank, or -1 at the root
  std::vector<int> children;  ///< ranks, ascending subtree order
  bool wait_for_ask = false;  ///< not the parent's first child: send up when asked
};
rank_tree make_rank_tree(int root_rank);

/// Sends `bytes` of `data` to the leader of `rank` as buffer (seq, phase)
/// from this rank. May suspend (back-pressure). Leader task only.
void tree_send(int rank, const coll_call& c, int phase, const void* data, std::int64_t bytes);

/// The buffer (seq, phase) from `rank`; suspends until all of it has
/// arrived. Fatal if that rank's leader was in another kind of collective.
byte_buffer tree_recv(int rank, const coll_call& c, int phase);

/// Up the tree a parent takes one child's stream at a time: its first child
/// sends at once, every later child waits for the parent's request (a
/// zero-byte phase-2 buffer), sent when the parent turns to it. Several
/// streams arriving at one core at once are several times slower than the
/// same streams one after another; the request costs one small message.
/// Child: sends `bytes` of `data` to its parent as phase 0. Leader only;
/// suspends.
void tree_send_up(const rank_tree& t, const coll_call& c, const void* data, std::int64_t bytes);

/// Parent: the phase-0 buffer of child t.children[i], asking for it first
/// when i > 0. Leader only; suspends.
byte_buffer tree_pull(const rank_tree& t, std::size_t i, const coll_call& c);

/// Gathers every core's input (elem_bytes each element, any count per core)
/// to `root`'s process, or to every process when `to_all`; returns on those
/// leaders the result buffer [cores()+1 int64 offsets (elements)][values in
/// core order], elsewhere an empty buffer. With `same_counts`, fatal unless
/// every core passed as many elements as core 0. Leader only; suspends.
byte_buffer gather_to(const coll_call& c, std::size_t elem_bytes, bool to_all, bool same_counts);

/// Carries `payload` (meaningful at the root's process only) down the tree
/// from the root's process; returns it on every leader. Leader only.
byte_buffer broadcast_down(const coll_call& c, int root_rank, byte_buffer payload);

/// A core's count of the collectives it has entered (its next call's seq).
struct coll_core_state {
  std::int64_t next_seq = 0;
};

}  // namespace shoal::detail
