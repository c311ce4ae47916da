// full_empty<T>: a word with a full/empty bit (Tera MTA, Grappa). write_ef()
// waits until empty, writes, marks full; read_fe() waits until full, reads,
// marks empty; read_ff() waits until full and leaves it full. Waiting
// suspends the worker. Belongs to the core that created it: use it from that
// core's tasks.
//
// Wake-ups. Each state change wakes only the waiters that can use it: on
// empty, the oldest waiting writer; on full, every read_ff() waiter (they
// leave it full) and the oldest read_fe() waiter. A woken waiter re-checks
// the state when it runs: if another task took the turn meanwhile, it parks
// again at the back, and the change that task made wakes the next waiter in
// turn, so no waiter sleeps through a state it could use. A pipeline of n
// items costs O(n) wake-ups and switches however many tasks wait.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/intrusive_list.hpp"
#include "shoal/runtime.hpp"

#include <utility>

namespace shoal {

template <class T>
class full_empty {
 public:
  full_empty() = default;
  explicit full_empty(T v) : value_(std::move(v)), full_(true) {}
  full_empty(const full_empty&) = delete;
  full_empty& operator=(const full_empty&) = delete;

  /// Waits until empty, stores `v`, marks full. Home core's tasks; may
  /// suspend.
  void write_ef(T v) {
    while (full_) park(writers_, "full_empty::write_ef");
    value_ = std::move(v);
    full_ = true;
    became_full();
  }

  /// Waits until full, takes the value, marks empty. Home core's tasks;
  /// may suspend.
  T read_fe() {
    while (!full_) park(takers_, "full_empty::read_fe");
    full_ = false;
    T v = std::move(value_);
    wake_one(writers_);
    return v;
  }

  /// Waits until full, returns a copy; stays full. Home core's tasks; may
  /// suspend.
  T read_ff() {
    while (!full_) park(peekers_, "full_empty::read_ff");
    return value_;
  }

  /// Marks empty without waiting (discarding any value). Home core.
  void clear() {
    if (!full_) return;
    full_ = false;
    wake_one(writers_);
  }

  bool full() const noexcept { return full_; }

 private:
  void park(detail::worker_list& l, const char* why) {
    SHOAL_CHECK_ON_CORE(why);
    SHOAL_CHECK(detail::in_worker(), "{} would wait in a message handler; call it from a task",
                why);
    l.push(detail::current_worker());
    detail::suspend(why, detail::address_tag(this));
  }
  void became_full() {
    if (peekers_.empty() && takers_.empty()) return;
    while (detail::worker* w = peekers_.pop()) detail::wake(w);
    if (detail::worker* w = takers_.pop()) detail::wake(w);
  }
  static void wake_one(detail::worker_list& l) {
    if (detail::worker* w = l.pop()) detail::wake(w);
  }

  T value_{};
  bool full_ = false;
  detail::worker_list takers_;   // read_fe
  detail::worker_list peekers_;  // read_ff
  detail::worker_list writers_;
};

}  // namespace shoal
