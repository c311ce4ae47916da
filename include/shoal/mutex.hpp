// Worker-level mutex and condition variable. Blocking suspends the worker,
// never the OS thread. Both belong to the core that created them: use them
// from that core's tasks (reach them from elsewhere with delegate::call or a
// spawned task). Since workers of one core never run simultaneously, these
// need no atomics; they order tasks that suspend inside a critical section.
#pragma once

#include "shoal/detail/core_state.hpp"
#include "shoal/detail/intrusive_list.hpp"
#include "shoal/runtime.hpp"

namespace shoal {

class mutex {
 public:
  mutex() : home_(mycore()) {}
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  /// Suspends until the mutex is free, then takes it. FIFO hand-off.
  void lock() {
    SHOAL_CHECK_ON_CORE("shoal::mutex::lock");
    SHOAL_ASSERT(mycore() == home_, "shoal::mutex used off its home core");
    if (!locked_) {
      locked_ = true;
      return;
    }
    waiters_.push(detail::current_worker());
    detail::suspend("mutex", detail::address_tag(this));  // unlock() handed the lock to us
  }

  bool try_lock() noexcept {
    if (locked_) return false;
    locked_ = true;
    return true;
  }

  /// Releases the mutex, handing it directly to the oldest waiter.
  void unlock() {
    SHOAL_ASSERT(locked_, "shoal::mutex unlocked while not locked");
    if (detail::worker* w = waiters_.pop()) {
      detail::wake(w);  // stays locked: ownership passes to w
    } else {
      locked_ = false;
    }
  }

  bool locked() const noexcept { return locked_; }

 private:
  bool locked_ = false;
  int home_;
  detail::worker_list waiters_;
};

class condition_variable {
 public:
  condition_variable() = default;
  condition_variable(const condition_variable&) = delete;
  condition_variable& operator=(const condition_variable&) = delete;

  /// Releases `m`, suspends until notified, re-takes `m`.
  void wait(mutex& m) {
    SHOAL_CHECK_ON_CORE("shoal::condition_variable::wait");
    waiters_.push(detail::current_worker());
    m.unlock();
    detail::suspend("condition_variable", detail::address_tag(this));
    m.lock();
  }

  template <class Pred>
  void wait(mutex& m, Pred pred) {
    while (!pred()) wait(m);
  }

  void notify_one() {
    if (detail::worker* w = waiters_.pop()) detail::wake(w);
  }

  void notify_all() {
    while (detail::worker* w = waiters_.pop()) detail::wake(w);
  }

 private:
  detail::worker_list waiters_;
};

}  // namespace shoal
