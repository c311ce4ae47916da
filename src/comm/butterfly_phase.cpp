// The phase collective over hypercube edges (butterfly_phase.hpp).
#include "comm/butterfly_phase.hpp"

#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <memory>
#include <vector>

namespace shoal::detail {
namespace {

/// A message of round `round` of process `from`: its running sums.
struct round_message {
  bool present = false;
  wave_totals sums;
};

/// What a round message says of its sender besides the sums: the process,
/// and the collective of the slot it runs by butterfly rounds
/// (route_control_over_hypercube on there), counted as in barrier.cpp.
struct sender_of_round {
  int rank;
  std::uint64_t collective;
};

/// One slot's rounds on this process. The inbox and the round's progress
/// belong to local core 0; the tally is added to by every local core.
struct slot_rounds {
  std::uint64_t round = 0;       // the round under way or next, counted across collectives
  std::uint64_t collective = 0;  // the collective under way (butterfly_begin's)
  int step = -1;                 // the inbox index this process waits for; -1: none
  bool first = true;             // the round under way is its collective's first
  bool drain = false;
  std::uint32_t selector = 0;
  void (*release)(std::uint32_t) = nullptr;
  wave_totals sums;    // this round's running sums
  wave_totals before;  // the previous round's totals
  // By round parity, then index: 0 the sum of r + p2, 1 + d the partner
  // of bit d, bits + 1 the total from r - p2.
  std::array<std::vector<round_message>, 2> inbox;
  std::atomic<int> left{0};  // cores yet to sample this round
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> handled{0};
};

std::array<std::unique_ptr<slot_rounds>, max_streams + 1> g_slots;

/// Which protocol this process runs a slot's collectives by, as the other
/// processes' round messages and this process's arrivals tell it: 1 + the
/// collective index, 0 for none (butterfly_coordinated). Written by local
/// core 0 (heard) and by the core that arrives last (coordinated); seq_cst,
/// so that of a round message and an arrival by the coordinator for the
/// same collective, whichever comes second sees the first.
struct slot_choices {
  std::atomic<std::uint64_t> heard{0};        // the latest collective a round message came for
  std::atomic<int> heard_from{-1};            // its sender
  std::atomic<std::uint64_t> coordinated{0};  // the collective this process runs by the coordinator
  std::atomic<const char*> why{""};           // that collective's name
};
std::array<slot_choices, max_streams + 1> g_choices;

/// Process `on` sent a round message of collective `collective` of `slot`
/// (named `why`), which this process runs by the coordinator.
[[noreturn, gnu::cold, gnu::noinline]] void fatal_choices_differ(std::uint32_t slot,
                                                                 std::uint64_t collective,
                                                                 const char* why, int on) {
  fatal_user(fmt::format(
      "{}: process {} entered it with route_control_over_hypercube on and process {} with it "
      "off (collective {} of phase slot {}); switch it the same way on every process before "
      "the collective",
      why, on, g_info.rank, collective, slot));
}

/// This process's place in the butterfly.
struct place {
  int rank = g_info.rank;
  int ranks = g_info.ranks;
  int p2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(g_info.ranks)));
  int bits = std::countr_zero(static_cast<unsigned>(p2));
  bool extra() const { return rank >= p2; }
  bool has_extra() const { return rank + p2 < ranks; }
  int pre() const { return 0; }
  int post() const { return bits + 1; }
};

slot_rounds& rounds_of(std::uint32_t slot) {
  std::unique_ptr<slot_rounds>& s = g_slots[slot];
  if (!s) {
    s = std::make_unique<slot_rounds>();
    const place at;
    for (auto& box : s->inbox) box.resize(static_cast<std::size_t>(at.bits + 2));
  }
  return *s;
}

void on_message(std::uint32_t slot, std::uint64_t round, int index, const wave_totals& sums,
                sender_of_round from);

/// Sends inbox entry `index` of `round` to process `rank`'s local core 0.
void send_to(int rank, std::uint32_t slot, std::uint64_t round, int index,
             const wave_totals& sums) {
  const sender_of_round from{g_info.rank, g_slots[slot]->collective};
  send_control(rank * g_info.local_cores,
               [slot, round, index, sums, from] { on_message(slot, round, index, sums, from); });
}

void begin_round(std::uint32_t slot, const wave_totals& sample);

/// Every core of this process samples its counters for the next round;
/// the last one hands the sum to local core 0.
void sample_for_round(std::uint32_t slot) {
  slot_rounds& s = *g_slots[slot];
  const wave_totals t = sample_here(s.selector);
  s.sent.fetch_add(t.sent, std::memory_order_relaxed);
  s.handled.fetch_add(t.handled, std::memory_order_relaxed);
  // acq_rel: the last core reads every other core's additions.
  if (s.left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const wave_totals sum{s.sent.exchange(0, std::memory_order_relaxed),
                        s.handled.exchange(0, std::memory_order_relaxed)};
  if (mycore() == g_info.rank_base) {
    begin_round(slot, sum);
  } else {
    send_control(g_info.rank_base, [slot, sum] { begin_round(slot, sum); });
    push_staged();
  }
}

/// Round `s.round` is over with the job's totals: ends the collective or
/// starts the next round (every process decides the same).
void finish_round(std::uint32_t slot, const wave_totals& total) {
  slot_rounds& s = *g_slots[slot];
  s.step = -1;
  ++s.round;
  if (!s.drain || (!s.first && total.sent == s.before.handled)) {
    s.first = true;
    s.release(slot);
    return;
  }
  s.before = total;
  s.first = false;
  s.left.store(g_info.local_cores, std::memory_order_relaxed);
  for (int c = 1; c < g_info.local_cores; ++c)
    send_control(g_info.rank_base + c, [slot] { sample_for_round(slot); });
  sample_for_round(slot);  // flushes the requests above too
}

/// Consumes the messages the round waits for, as they are in the inbox.
void advance(std::uint32_t slot) {
  slot_rounds& s = *g_slots[slot];
  const place at;
  while (s.step >= 0) {
    round_message& m = s.inbox[s.round & 1][static_cast<std::size_t>(s.step)];
    if (!m.present) return;
    m.present = false;
    if (s.step == at.post()) {  // this process is an extra one: the job's totals
      finish_round(slot, m.sums);
      return;
    }
    s.sums.sent += m.sums.sent;
    s.sums.handled += m.sums.handled;
    if (s.step < at.bits) {  // pre (0) or bit step - 1 done: on to bit step
      const int bit = s.step;
      ++s.step;
      send_to(at.rank ^ (1 << bit), slot, s.round, s.step, s.sums);
      push_staged();
      continue;
    }
    if (at.has_extra()) {
      send_to(at.rank + at.p2, slot, s.round, at.post(), s.sums);
      push_staged();
    }
    finish_round(slot, s.sums);
    return;
  }
}

void begin_round(std::uint32_t slot, const wave_totals& sample) {
  slot_rounds& s = *g_slots[slot];
  const place at;
  s.sums = sample;
  if (at.extra()) {
    send_to(at.rank - at.p2, slot, s.round, at.pre(), sample);
    s.step = at.post();
  } else if (at.has_extra()) {
    s.step = at.pre();
  } else {
    send_to(at.rank ^ 1, slot, s.round, 1, sample);
    s.step = 1;
  }
  push_staged();
  advance(slot);
}

void on_message(std::uint32_t slot, std::uint64_t round, int index, const wave_totals& sums,
                sender_of_round from) {
  slot_choices& c = g_choices[slot];
  c.heard_from.store(from.rank, std::memory_order_relaxed);
  // The latest collective heard of (a message of an earlier one may come
  // after one of the next).
  std::uint64_t heard = c.heard.load();
  while (heard < from.collective + 1 &&
         !c.heard.compare_exchange_weak(heard, from.collective + 1)) {
  }
  if (c.coordinated.load() == from.collective + 1) [[unlikely]]
    fatal_choices_differ(slot, from.collective, c.why.load(std::memory_order_relaxed), from.rank);
  slot_rounds& s = rounds_of(slot);
  SHOAL_CHECK(round == s.round || round == s.round + 1,
              "phase collective {}: a message of round {} arrived at process {} in round {} "
              "(route_control_over_hypercube differs between processes?)",
              slot, round, g_info.rank, s.round);
  round_message& m = s.inbox[round & 1][static_cast<std::size_t>(index)];
  SHOAL_CHECK(!m.present, "phase collective {}: two messages for step {} of round {} at process {}",
              slot, index, round, g_info.rank);
  m = {true, sums};
  if (round == s.round) advance(slot);
}

}  // namespace

void butterfly_begin(std::uint32_t slot, std::uint64_t collective, std::uint32_t selector,
                     bool drain, const wave_totals& arrival, void (*release)(std::uint32_t slot)) {
  slot_rounds& s = rounds_of(slot);
  s.collective = collective;
  s.selector = selector;
  s.drain = drain;
  s.release = release;
  s.first = true;
  begin_round(slot, arrival);
}

void butterfly_coordinated(std::uint32_t slot, std::uint64_t collective, const char* why) {
  slot_choices& c = g_choices[slot];
  c.why.store(why, std::memory_order_relaxed);
  c.coordinated.store(collective + 1);
  if (c.heard.load() == collective + 1) [[unlikely]]
    fatal_choices_differ(slot, collective, why, c.heard_from.load(std::memory_order_relaxed));
}

void reset_butterfly_phases() {
  for (auto& s : g_slots) s.reset();
  for (slot_choices& c : g_choices) {
    c.heard.store(0, std::memory_order_relaxed);
    c.heard_from.store(-1, std::memory_order_relaxed);
    c.coordinated.store(0, std::memory_order_relaxed);
  }
}

}  // namespace shoal::detail
