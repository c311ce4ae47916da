// GUPS the Active Pebbles way: a typed channel of bare 64-bit update values.
// Batches to a core hold nothing but the values; the receiving core runs
// the handler over them in a tight loop, XORing each into its word through
// the core's apply_queue, which overlaps the cache misses. The core's own
// updates go through the same queue as they are generated, so the memory
// system sees one stream of prefetched updates whoever generated them.
//
// Under --outstanding sent a core sends its chunks and never waits for
// them: keeping the cores in step while they flood the channel is the
// runtime's job (aggregator.hpp's send bound), not the app's. Each core
// ends with the channel's phase, after which every update has reached its
// home core's apply queue, and drains its own queue.
//
// Under --outstanding applied, knowing when a chunk has been applied (the
// sliding window of updater.hpp) costs no bytes per update. After a chunk
// the sender puts a marker on the channel to each core that got some of
// it. Messages on one stream from one core to another run in order
// (aggregator.hpp), so when a marker is handled every update before it has
// been; the handler applies what it has queued and puts an ack on the same
// channel back to the sender, where it rides in the batches that core sends
// anyway. Markers and acks are control values of even parity, which no
// update can be (hpcc_stream.hpp).
#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "gups/apply_queue.hpp"
#include "gups/plain/hpcc_stream.hpp"
#include "gups/update_stream.hpp"
#include "gups/updater.hpp"

namespace shoal_apps::gups {

namespace {

/// The chunks one sender has in flight: slot s's event counts the markers
/// of the chunk using it until their acks are back. It lives on the sender
/// task's stack; acks, which run on the sender's core, find it by name.
struct send_window {
  std::array<shoal::completion_event, window_slots> slots;
};

/// Per-core state the handler reaches by name on every process.
struct receive_state {
  apply_queue queue;
  shoal::channel<std::uint64_t> channel;  // to send acks on
  send_window* window = nullptr;          // this core's sender, while it runs
};
shoal::per_core<receive_state> receivers;

// Control values: (payload << 2) | kind, plus a low bit that makes the
// number of set bits even. A marker's payload is (sender core, slot); an
// ack's is the slot.
constexpr std::uint64_t kind_marker = 0;
constexpr std::uint64_t kind_ack = 2;

std::uint64_t control(std::uint64_t payload, std::uint64_t kind) noexcept {
  const std::uint64_t v = (payload << 2) | kind;
  return v | static_cast<std::uint64_t>(__builtin_parityll(v));
}

/// The channel's handler, replicated on every core of the job. The channel
/// hands it each batch whole (deliver_run), so the core's state is looked
/// up once per batch rather than once per value.
struct apply_update {
  gups_table t;

  void operator()(const std::uint64_t& v) const { deliver_run(&v, 1); }

  void deliver_run(const std::uint64_t* values, std::uint32_t n) const {
    receive_state& me = receivers.local();
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint64_t v = values[k];
      if (hpcc_parity_ok(v)) [[likely]] {
        me.queue.push(t.local_index(v & t.mask()), v);
      } else {
        on_control(me, v);
      }
    }
  }

  static void on_control(receive_state& me, std::uint64_t v) {
    const std::uint64_t payload = v >> 2;
    if ((v & kind_ack) != 0) {
      me.window->slots[payload].complete();
      return;
    }
    me.queue.drain();  // everything the marker's sender sent before it
    const auto sender = static_cast<int>(payload / window_slots);
    me.channel.send(sender, control(payload % window_slots, kind_ack));
  }
};

/// The cores a chunk sent updates to, each once: a bit mask for the first
/// 64 cores (one OR per update), a list beyond.
class touched_cores {
 public:
  void add(int c) {
    if (c < 64) {
      low_ |= std::uint64_t{1} << c;
    } else if (std::find(high_.begin(), high_.end(), c) == high_.end()) {
      high_.push_back(c);
    }
  }
  /// Calls f(c) for each core added since the last drain, and forgets them.
  template <class F>
  void drain(const F& f) {
    for (; low_ != 0; low_ &= low_ - 1) f(std::countr_zero(low_));
    for (const int c : high_) f(c);
    high_.clear();
  }

 private:
  std::uint64_t low_ = 0;
  std::vector<int> high_;
};

/// Applies updates [first, last) from the calling core, chunk by chunk, with
/// at most window_slots chunks not known applied (until_applied). Task.
void send_windowed(shoal::channel<std::uint64_t> ch, const gups_table& t, std::int64_t first,
                   std::int64_t last) {
  send_window w;
  receive_state& mine = receivers.local();
  mine.window = &w;
  const auto me = static_cast<std::uint64_t>(shoal::mycore());
  touched_cores touched;
  update_stream updates(t, first, last, chunk_for(outstanding_rule::until_applied));
  for (std::size_t slot = 0; !updates.done(); slot = (slot + 1) % window_slots) {
    shoal::completion_event& done = w.slots[slot];
    // The chunk that used this slot before has been applied (the 1024
    // rule). Waiting runs the handlers of what has arrived here meanwhile.
    done.wait();
    updates.next_chunk(
        [&](int h, std::uint64_t, std::uint64_t r) {
          ch.send(h, r);
          touched.add(h);
        },
        [&](std::uint64_t at, std::uint64_t r) { mine.queue.push(at, r); });
    touched.drain([&](int c) {
      done.enroll();
      ch.send(c, control(me * window_slots + slot, kind_marker));
    });
    shoal::flush();      // the chunk leaves now
    mine.queue.drain();  // its own-word updates are applied before the next
    shoal::yield();      // other tasks' turn; arrivals run when this task waits
  }
  for (shoal::completion_event& e : w.slots) e.wait();
  mine.window = nullptr;
}

/// Applies updates [first, last) from the calling core, a chunk of 1024
/// flushed at a time (until_sent), then ends the channel's phase with the
/// other cores. SPMD task, one per core.
void send_flushed(shoal::channel<std::uint64_t> ch, const gups_table& t, std::int64_t first,
                  std::int64_t last) {
  receive_state& mine = receivers.local();
  update_stream updates(t, first, last, chunk_for(outstanding_rule::until_sent));
  while (!updates.done()) {
    updates.next_chunk([&](int h, std::uint64_t, std::uint64_t r) { ch.send(h, r); },
                       [&](std::uint64_t at, std::uint64_t r) { mine.queue.push(at, r); });
    shoal::flush();      // the chunk leaves now: at most 1024 held back
    mine.queue.drain();  // its own-word updates are applied before the next
    shoal::yield();      // other tasks' turn (and, now and then, a poll)
  }
  ch.end_phase();      // every update has been handed to its home's queue
  mine.queue.drain();  // and the last of them, here, are applied
}

class channel_updater final : public updater {
 public:
  channel_updater(const gups_table& t, const gups_problem& p, outstanding_rule rule)
      : t_(t),
        updates_(p.updates),
        rule_(rule),
        ch_(shoal::make_channel<std::uint64_t>(apply_update{t})) {
    const shoal::channel<std::uint64_t> ch = ch_;
    shoal::on_all_cores([ch] {
      receive_state& r = receivers.local();
      r.channel = ch;
      r.queue.set_part(local_part.local());
    });
  }
  channel_updater(const channel_updater&) = delete;
  channel_updater& operator=(const channel_updater&) = delete;
  ~channel_updater() override { ch_.close(); }

  void apply_all() override {
    const shoal::channel<std::uint64_t> ch = ch_;
    const gups_table t = t_;
    const std::int64_t updates = updates_;
    const outstanding_rule rule = rule_;
    shoal::on_all_cores([ch, rule, t, updates] {
      const int c = shoal::mycore();
      const std::int64_t first = share_begin(updates, c, shoal::cores());
      const std::int64_t last = share_begin(updates, c + 1, shoal::cores());
      if (rule == outstanding_rule::until_applied) {
        send_windowed(ch, t, first, last);
      } else {
        send_flushed(ch, t, first, last);
      }
    });
  }

 private:
  gups_table t_;
  std::int64_t updates_;
  outstanding_rule rule_;
  shoal::channel<std::uint64_t> ch_;
};

}  // namespace

std::unique_ptr<updater> make_channel_updater(const gups_table& t, const gups_problem& p,
                                              outstanding_rule rule) {
  return std::make_unique<channel_updater>(t, p, rule);
}

}  // namespace shoal_apps::gups
