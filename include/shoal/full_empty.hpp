// full_empty<T>: a word with a full/empty bit (Tera MTA, Grappa). write_ef()
// waits until empty, writes, marks full; read_fe() waits until full, reads,
// marks empty; read_ff() waits until full and leaves it full. Waiting
// suspends the worker. Belongs to the core that created it.
#pragma once

#include "shoal/detail/intrusive_list.hpp"
#include "shoal/detail/scheduler.hpp"
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

  /// Waits until empty, stores `v`, marks full.
  void write_ef(T v) {
    while (full_) park(writers_, "full_empty::write_ef");
    value_ = std::move(v);
    full_ = true;
    wake_all(readers_);
  }

  /// Waits until full, takes the value, marks empty.
  T read_fe() {
    while (!full_) park(readers_, "full_empty::read_fe");
    full_ = false;
    T v = std::move(value_);
    wake_all(writers_);
    return v;
  }

  /// Waits until full, returns a copy; stays full.
  T read_ff() {
    while (!full_) park(readers_, "full_empty::read_ff");
    return value_;
  }

  /// Marks empty without waiting (discarding any value).
  void clear() {
    full_ = false;
    wake_all(writers_);
  }

  bool full() const noexcept { return full_; }

 private:
  static void park(detail::worker_list& l, const char* why) {
    detail::scheduler& s = detail::this_scheduler();
    l.push(s.current());
    s.suspend(why);
  }
  static void wake_all(detail::worker_list& l) {
    if (l.empty()) return;
    detail::scheduler& s = detail::this_scheduler();
    while (detail::worker* w = l.pop()) s.wake(w);
  }

  T value_{};
  bool full_ = false;
  detail::worker_list readers_;
  detail::worker_list writers_;
};

}  // namespace shoal
