// Layer 1, transport: messages between the processes of one node through
// shared memory, read in place by the receiver (no copy by MPI, none by the
// kernel). Used by mpi_transport.cpp for the peers that share its node
// (--node-messages shm); no MPI here, so a unit test runs it on threads.
//
// Contract.
// - Each process owns one segment (segment_bytes()) that every process of
//   the node maps: `slots` message slots of `slot_bytes` each, and per peer
//   two single-producer rings of slot numbers: the owner's messages to that
//   peer (written by the owner, read by the peer) and the owner's slots the
//   peer hands back (written by the peer, read by the owner). A slot is in
//   at most one ring at a time, so a ring of `slots` entries never fills.
// - Sending: take_slot() gives a free slot of this process's segment (or
//   null when all are out); the caller writes the message into it and
//   publish()es it to one peer, which reads it where it is. A slot comes
//   back to the free list when its reader hands it back (give_back() on
//   the reader's side, collect_returns() on the owner's).
// - Ordering: the messages one process publishes to one peer are read in
//   the order they were published.
// - Threads: take_slot() and put_slot() from any thread (a mutex); the
//   rest from one thread at a time per process (the transport's lock).
// - Memory order: publish() releases the message's bytes with the ring's
//   head; the reader acquires them with it. give_back() releases the
//   reader's last reads before the owner may write the slot again.
// - Cost: a publish or a give-back is two stores and a release; a poll of
//   a peer with nothing new reads one line of the peer's segment.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace shoal::detail {

class node_mailbox {
 public:
  /// Bytes of one process's segment for a node of `node_size` processes.
  static std::size_t segment_bytes(int node_size, std::uint32_t slots, std::size_t slot_bytes);

  /// `bases[i]`: node process i's segment, mapped here (64-byte aligned);
  /// this process is `me` among them. init_segment() must have run on each
  /// (by its owner) before any other process reads it.
  node_mailbox(std::vector<char*> bases, int me, std::uint32_t slots, std::size_t slot_bytes);

  /// Lays out a fresh (zeroed) segment. The owner, before the others map it.
  static void init_segment(char* base, int node_size, std::uint32_t slots);

  /// A free slot of this process's segment, or null when no more than
  /// `keep_free` are free.
  char* take_slot(std::uint32_t keep_free = 0);
  /// Returns a slot taken and never published to the free list.
  void put_slot(char* slot);
  /// Whether `p` is the start of one of this process's slots.
  bool is_own_slot(const char* p) const noexcept;

  /// Makes slot `slot` (from take_slot), holding `bytes` bytes, readable by
  /// node process `peer`.
  void publish(int peer, char* slot, std::size_t bytes);

  /// Takes back the slots peers have handed back. True when any came.
  bool collect_returns();

  /// Calls f(data, bytes) for each message published by node process
  /// `peer` and not yet read, in order, at most `most` of them; f returns
  /// true to keep the slot (give_back() it later) or false when done with
  /// it. Returns how many it read.
  template <class F>
  int read_from(int peer, int most, F&& f) {
    ring& r = ring_of(peer, /*to=*/me_, /*returns=*/false);
    std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
    const std::uint64_t head = r.head.load(std::memory_order_acquire);
    int n = 0;
    for (; tail != head && n < most; ++tail, ++n) {
      const std::uint64_t e = r.entries()[tail & mask_];
      char* data = slot_at(peer, static_cast<std::uint32_t>(e >> 32));
      // The read position first: a peer only ever reads it as a count.
      r.tail.store(tail + 1, std::memory_order_relaxed);
      if (!f(data, static_cast<std::size_t>(e & 0xffffffffu))) give_back(data);
    }
    return n;
  }

  /// Hands a slot read from a peer back to its owner.
  void give_back(const char* data);
  /// The node process whose segment holds `p`, or -1.
  int owner_of(const char* p) const noexcept;

  std::uint32_t slots() const noexcept { return slots_; }
  std::size_t slot_bytes() const noexcept { return slot_bytes_; }
  /// Slots of this process out of its free list (taken, published, or held
  /// by a reader). For tests and statistics.
  std::uint32_t slots_out();

 private:
  struct ring {
    alignas(64) std::atomic<std::uint64_t> head;  // written by the producer
    alignas(64) std::atomic<std::uint64_t> tail;  // written by the consumer
    std::uint64_t* entries() noexcept {
      return reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(this) + 128);
    }
  };
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
  static std::size_t ring_bytes(std::uint32_t slots);
  static std::uint32_t ring_capacity(std::uint32_t slots);
  static std::size_t slots_offset(int node_size, std::uint32_t slots);
  /// The ring in `owner`'s segment: owner's messages to `peer`, or (returns)
  /// owner's slots that `peer` hands back.
  ring& ring_in(int owner, int peer, bool returns) const noexcept;
  /// Messages from `from` to `to` live in from's segment.
  ring& ring_of(int from, int to, bool returns) const noexcept {
    return ring_in(from, to, returns);
  }
  char* slot_at(int owner, std::uint32_t index) const noexcept {
    return bases_[static_cast<std::size_t>(owner)] + slots_off_ + index * slot_bytes_;
  }

  std::vector<char*> bases_;
  const int me_;
  const int node_size_;
  const std::uint32_t slots_;
  const std::size_t slot_bytes_;
  const std::uint64_t mask_;
  const std::size_t slots_off_;
  std::mutex free_mu_;
  std::vector<std::uint32_t> free_;  // guarded by free_mu_
};

}  // namespace shoal::detail
