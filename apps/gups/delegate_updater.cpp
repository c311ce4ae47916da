// GUPS the Grappa way: each remote update is an asynchronous delegate, a
// small closure that runs at the word's home core, to completion, so the
// XOR is atomic there without hardware atomics. Each is enrolled in the
// global_completion_event of its window slot; the event's wait() returns
// once every delegate of that chunk has run, wherever it ran (completions
// on another process come back by message), which is how the sender knows
// a chunk is no longer outstanding (updater.hpp).
#include <array>

#include "gups/plain/hpcc_stream.hpp"
#include "gups/update_stream.hpp"
#include "gups/updater.hpp"

namespace shoal_apps::gups {

namespace {

/// Applies updates [first, last) from the calling core. Task.
void delegate_share(const gups_table& t, outstanding_rule rule, std::int64_t first,
                    std::int64_t last) {
  std::array<shoal::global_completion_event, window_slots> slots;
  update_stream updates(t, first, last, chunk_for(rule));
  for (std::size_t slot = 0; !updates.done(); slot = (slot + 1) % window_slots) {
    shoal::global_completion_event& done = slots[slot];
    // until_applied: the chunk that used this slot before has been applied.
    if (rule == outstanding_rule::until_applied) done.wait();
    updates.next_chunk([&done, &t](int h, std::uint64_t i, std::uint64_t r) {
      // What *(t.base + i).local() would reach at h, without its divisions.
      const std::uint64_t at = t.local_index(i);
      shoal::delegate::post(
          h, [at, r] { local_part.local()[at] ^= r; }, done);
    });
    shoal::flush();  // the chunk leaves now, while this core applies its own words
    updates.apply_own();
    shoal::yield();  // other tasks' turn; arrivals run when this task waits
  }
  for (shoal::global_completion_event& e : slots) e.wait();
}

class delegate_updater final : public updater {
 public:
  delegate_updater(const gups_table& t, const gups_problem& p, outstanding_rule rule)
      : t_(t), updates_(p.updates), rule_(rule) {}

  void apply_all() override {
    const gups_table t = t_;
    const std::int64_t updates = updates_;
    const outstanding_rule rule = rule_;
    shoal::on_all_cores([t, updates, rule] {
      const int c = shoal::mycore();
      delegate_share(t, rule, share_begin(updates, c, shoal::cores()),
                     share_begin(updates, c + 1, shoal::cores()));
    });
  }

 private:
  gups_table t_;
  std::int64_t updates_;
  outstanding_rule rule_;
};

/// The verification pass: applies updates [first, last) once more, each as a
/// delegate addressed through global_ptr's own arithmetic rather than
/// gups_table's home()/local_index() and local_part, so that a fault in
/// the timed path (an update lost, applied twice or at the wrong word) is
/// not undone by the same fault. Task.
void reapply_share(const gups_table& t, std::int64_t first, std::int64_t last) {
  shoal::global_completion_event done;
  std::uint64_t r = hpcc_starts(static_cast<std::uint64_t>(first));
  for (std::int64_t k = first; k < last; ++k) {
    r = hpcc_next(r);
    const shoal::global_ptr<std::uint64_t> w = t.base + static_cast<std::int64_t>(r & t.mask());
    shoal::delegate::post(
        w.core(), [w, r] { *w.local() ^= r; }, done);
    if ((k - first) % max_outstanding == max_outstanding - 1) shoal::yield();
  }
  done.wait();
}

class reapply_updater final : public updater {
 public:
  reapply_updater(const gups_table& t, const gups_problem& p) : t_(t), updates_(p.updates) {}

  void apply_all() override {
    const gups_table t = t_;
    const std::int64_t updates = updates_;
    shoal::on_all_cores([t, updates] {
      const int c = shoal::mycore();
      reapply_share(t, share_begin(updates, c, shoal::cores()),
                    share_begin(updates, c + 1, shoal::cores()));
    });
  }

 private:
  gups_table t_;
  std::int64_t updates_;
};

}  // namespace

std::unique_ptr<updater> make_reapply_updater(const gups_table& t, const gups_problem& p) {
  return std::make_unique<reapply_updater>(t, p);
}

std::unique_ptr<updater> make_delegate_updater(const gups_table& t, const gups_problem& p,
                                               outstanding_rule rule) {
  return std::make_unique<delegate_updater>(t, p, rule);
}

}  // namespace shoal_apps::gups
