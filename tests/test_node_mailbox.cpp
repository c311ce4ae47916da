// node_mailbox: the shared-memory path for messages between processes of one
// node (src/transport/node_mailbox.hpp), with threads standing in for the
// processes: each "process" owns a segment of one allocation that all of them
// see, as the mapped segments are seen on a node. Slots are taken until none
// is left and come back only when their reader hands them back; messages
// from one sender to one reader arrive complete and in order, under
// concurrent senders and readers; a kept message stays readable until
// handed back.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "transport/node_mailbox.hpp"

namespace {

using shoal::detail::node_mailbox;

// `n` segments, laid out by their owners, and one mailbox per "process".
struct node {
  node(int n, std::uint32_t slots, std::size_t slot_bytes)
      : bytes(node_mailbox::segment_bytes(n, slots, slot_bytes)) {
    for (int i = 0; i < n; ++i) {
      auto* p = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
      std::memset(p, 0xEE, bytes);  // not zero: init_segment must lay out every ring
      node_mailbox::init_segment(p, n, slots);
      segments.emplace_back(p);
      bases.push_back(p);
    }
    for (int i = 0; i < n; ++i)
      boxes.push_back(std::make_unique<node_mailbox>(bases, i, slots, slot_bytes));
  }
  struct freer {
    void operator()(char* p) const { std::free(p); }
  };
  std::size_t bytes;
  std::vector<std::unique_ptr<char, freer>> segments;
  std::vector<char*> bases;
  std::vector<std::unique_ptr<node_mailbox>> boxes;
};

TEST(node_mailbox, SegmentHoldsItsRingsAndSlots) {
  const std::size_t two = node_mailbox::segment_bytes(2, 16, 65536);
  EXPECT_GE(two, 16u * 65536u);
  EXPECT_GT(node_mailbox::segment_bytes(64, 16, 65536), two);  // more peers, more rings
  EXPECT_GT(node_mailbox::segment_bytes(2, 32, 65536), two);   // more slots
  // A slot size that is no multiple of 64 is rounded up, so slots stay aligned.
  node n(2, 4, 1000);
  EXPECT_EQ(n.boxes[0]->slot_bytes(), 1024u);
  char* a = n.boxes[0]->take_slot();
  char* b = n.boxes[0]->take_slot();
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(b - a, 1024);
  EXPECT_LE(static_cast<std::size_t>(a - n.bases[0]) + 4 * 1024, n.bytes);
}

TEST(node_mailbox, SlotsRunOutAndComeBackOnlyWhenTheReaderHandsThemBack) {
  node n(2, 4, 256);
  node_mailbox& sender = *n.boxes[0];
  node_mailbox& reader = *n.boxes[1];
  // take_slot(keep_free) leaves that many free.
  EXPECT_EQ(sender.take_slot(4), nullptr);
  char* kept = sender.take_slot(3);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(sender.take_slot(3), nullptr);  // three left
  sender.put_slot(kept);
  EXPECT_EQ(sender.slots_out(), 0u);
  std::vector<char*> taken;
  for (int i = 0; i < 4; ++i) {
    char* s = sender.take_slot();
    ASSERT_NE(s, nullptr) << "slot " << i;
    EXPECT_TRUE(sender.is_own_slot(s));
    EXPECT_FALSE(reader.is_own_slot(s));
    EXPECT_EQ(reader.owner_of(s), 0);
    taken.push_back(s);
  }
  EXPECT_EQ(sender.take_slot(), nullptr);  // all four out
  EXPECT_EQ(sender.slots_out(), 4u);
  EXPECT_FALSE(sender.is_own_slot(taken[0] + 1));  // inside a slot, not its start
  EXPECT_EQ(sender.owner_of(reinterpret_cast<const char*>(&n)), -1);
  sender.put_slot(taken[3]);  // never published: straight back
  EXPECT_EQ(sender.slots_out(), 3u);
  for (int i = 0; i < 3; ++i) {
    std::memset(taken[i], 'a' + i, 100);
    sender.publish(1, taken[i], 100 + static_cast<std::size_t>(i));
  }
  EXPECT_FALSE(sender.collect_returns());  // nothing read yet
  EXPECT_EQ(sender.slots_out(), 3u);
  // The reader takes two of the three; it keeps the first, is done with the second.
  std::vector<std::pair<char*, std::size_t>> seen;
  EXPECT_EQ(reader.read_from(0, 2,
                             [&](char* d, std::size_t b) {
                               seen.emplace_back(d, b);
                               return seen.size() == 1;  // keep the first
                             }),
            2);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, taken[0]);  // read in place, in order
  EXPECT_EQ(seen[0].second, 100u);
  EXPECT_EQ(seen[1].second, 101u);
  EXPECT_EQ(seen[1].first[99], 'b');
  EXPECT_TRUE(sender.collect_returns());  // the second came back
  EXPECT_EQ(sender.slots_out(), 2u);
  EXPECT_EQ(seen[0].first[0], 'a');  // the kept one is still there
  reader.give_back(seen[0].first);
  EXPECT_EQ(reader.read_from(0, 8,
                             [&](char* d, std::size_t b) {
                               EXPECT_EQ(b, 102u);
                               EXPECT_EQ(d[0], 'c');
                               return false;
                             }),
            1);
  EXPECT_EQ(reader.read_from(0, 8, [](char*, std::size_t) { return false; }), 0);
  EXPECT_TRUE(sender.collect_returns());
  EXPECT_EQ(sender.slots_out(), 0u);
  // Reused: four again.
  for (int i = 0; i < 4; ++i) EXPECT_NE(sender.take_slot(), nullptr);
}

// Three "processes", each sending numbered messages to both others while
// reading its own arrivals: every message arrives whole, each sender's in
// order, and every slot is back at the end. Slots are few (8 for 2 peers),
// so senders wait on returns all the time.
TEST(node_mailbox, ThreeProcessesExchangeInOrderUnderPressure) {
  constexpr int procs = 3;
  constexpr std::uint32_t per_peer = 20000;
  node n(procs, 8, 512);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int me = 0; me < procs; ++me) {
    threads.emplace_back([&, me] {
      node_mailbox& box = *n.boxes[static_cast<std::size_t>(me)];
      std::vector<std::uint32_t> next_sent(procs, 0), next_seen(procs, 0);
      std::uint32_t seen_total = 0;
      auto read_all = [&] {
        for (int p = 0; p < procs; ++p) {
          if (p == me) continue;
          box.read_from(p, 16, [&](char* d, std::size_t b) {
            std::uint32_t seq = 0;
            std::memcpy(&seq, d, 4);
            const std::size_t want = 8 + seq % 400;
            bool ok = seq == next_seen[static_cast<std::size_t>(p)] && b == want;
            for (std::size_t i = 4; ok && i < b; ++i)
              ok = d[i] == static_cast<char>(seq + i + static_cast<std::size_t>(p));
            if (!ok) failures.fetch_add(1);
            ++next_seen[static_cast<std::size_t>(p)];
            ++seen_total;
            return false;
          });
        }
        box.collect_returns();
      };
      const std::uint32_t all = per_peer * (procs - 1);
      std::uint32_t sent = 0;
      while (sent < all || seen_total < all) {
        for (int p = 0; p < procs && sent < all; ++p) {
          if (p == me || next_sent[static_cast<std::size_t>(p)] == per_peer) continue;
          char* s = box.take_slot();
          if (s == nullptr) break;
          const std::uint32_t seq = next_sent[static_cast<std::size_t>(p)]++;
          const std::size_t b = 8 + seq % 400;
          std::memcpy(s, &seq, 4);
          for (std::size_t i = 4; i < b; ++i)
            s[i] = static_cast<char>(seq + i + static_cast<std::size_t>(me));
          box.publish(p, s, b);
          ++sent;
        }
        read_all();
      }
      // Peers may still be reading this one's last messages: wait for the slots.
      while (box.slots_out() != 0) box.collect_returns();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (auto& b : n.boxes) EXPECT_EQ(b->slots_out(), 0u);
}

}  // namespace
