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
// sliding window of updater.hpp) is the channel's per-sender fence: after a
// chunk the sender makes a fence, which costs one marker to each core that
// got some of it and one acknowledgement back, nothing per update. A fence
// completes once the handlers of the values before it have returned, so in
// this mode the handler applies what it queued before it returns from each
// batch (until_sent keeps the queue across batches).
#include <array>

#include "gups/apply_queue.hpp"
#include "gups/update_stream.hpp"
#include "gups/updater.hpp"

namespace shoal_apps::gups {

namespace {

/// Per-core state the handler reaches by name on every process.
struct receive_state {
  apply_queue queue;
};
shoal::per_core<receive_state> receivers;

/// The channel's handler, replicated on every core of the job. The channel
/// hands it each batch whole (deliver_run), so the core's state is looked
/// up once per batch rather than once per value. `applied_by_return`
/// (until_applied): the batch's updates are applied before it returns, so
/// that a fence's completion means applied.
struct apply_update {
  gups_table t;
  bool applied_by_return = false;

  void operator()(const std::uint64_t& v) const { deliver_run(&v, 1); }

  void deliver_run(const std::uint64_t* values, std::uint32_t n) const {
    receive_state& me = receivers.local();
    for (std::uint32_t k = 0; k < n; ++k)
      me.queue.push(t.local_index(values[k] & t.mask()), values[k]);
    if (applied_by_return) me.queue.drain();
  }
};

/// Applies updates [first, last) from the calling core, chunk by chunk, with
/// at most window_slots chunks not known applied (until_applied). Task.
void send_windowed(shoal::channel<std::uint64_t> ch, const gups_table& t, std::int64_t first,
                   std::int64_t last) {
  std::array<shoal::channel_fence, window_slots> window;  // complete at first
  receive_state& mine = receivers.local();
  update_stream updates(t, first, last, chunk_for(outstanding_rule::until_applied));
  for (std::size_t slot = 0; !updates.done(); slot = (slot + 1) % window_slots) {
    // The chunk that used this slot before has been applied (the 1024
    // rule). Waiting runs the handlers of what has arrived here meanwhile.
    window[slot].wait();
    updates.next_chunk([&](int h, std::uint64_t, std::uint64_t r) { ch.send(h, r); },
                       [&](std::uint64_t at, std::uint64_t r) { mine.queue.push(at, r); });
    window[slot] = ch.fence();  // the chunk leaves now
    mine.queue.drain();         // its own-word updates are applied before the next
    shoal::yield();             // other tasks' turn; arrivals run when this task waits
  }
  for (const shoal::channel_fence& f : window) f.wait();
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
        ch_(shoal::make_channel<std::uint64_t>(
            apply_update{t, rule == outstanding_rule::until_applied})) {
    shoal::on_all_cores([] { receivers.local().queue.set_part(local_part.local()); });
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
