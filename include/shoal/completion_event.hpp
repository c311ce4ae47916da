// completion_event: a counter of outstanding work owned by one core, with
// waiters. enroll() adds work, complete() retires it, wait() suspends the
// calling worker until the count is zero.
//
// The event belongs to the core that created it: enroll() and wait() run
// there. complete() may run on any core of this process: off the home core it
// forwards itself by message (one closure message per call). From another
// process, where the event's address means nothing, use
// completion_event::complete_at(home, e), which touches e only at home.
//
// Pitfall: do not count a tree of dynamic work with complete_at(home, e,
// 1 - k) (each node adding its k children and retiring itself): a child's
// completion can reach home before its parent's adjustment, the count
// touches zero early and wait() returns with the tree unfinished (rare, but
// seen). Use finish (finish.hpp), which enrolls each unit before it starts.
#pragma once

#include "shoal/detail/core_state.hpp"
#include "shoal/detail/intrusive_list.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"

#include <cstdint>

namespace shoal {

class completion_event {
 public:
  explicit completion_event(std::int64_t initial = 0) : count_(initial), home_(mycore()) {}
  completion_event(const completion_event&) = delete;
  completion_event& operator=(const completion_event&) = delete;

  /// Adds `n` units of outstanding work. Home core only.
  void enroll(std::int64_t n = 1) noexcept {
    SHOAL_ASSERT(mycore() == home_, "completion_event::enroll off its home core");
    count_ += n;
  }

  /// Retires `n` units; at zero, wakes every waiter. Any core of the process.
  void complete(std::int64_t n = 1) {
    if (mycore() != home_) {
      completion_event* self = this;
      send(home_, [self, n] { self->complete_at_home(n); });
      return;
    }
    complete_at_home(n);
  }

  /// Retires `n` units of the event `e` whose home core is `home`, from any
  /// core of the job: `e` is dereferenced only on its home core (one message
  /// when called elsewhere).
  static void complete_at(int home, completion_event* e, std::int64_t n = 1) {
    if (mycore() == home) {
      e->complete_at_home(n);
    } else {
      send(home, [e, n] { e->complete_at_home(n); });
    }
  }

  /// Suspends the calling worker until the count is zero. Home core only.
  void wait() {
    SHOAL_ASSERT(mycore() == home_, "completion_event::wait off its home core");
    if (count_ == 0) return;
    SHOAL_CHECK_ON_CORE("shoal::completion_event::wait");
    waiters_.push(detail::current_worker());
    detail::suspend("completion_event", detail::address_tag(this));
  }

  std::int64_t count() const noexcept { return count_; }
  int home() const noexcept { return home_; }

 private:
  void complete_at_home(std::int64_t n) {
    count_ -= n;
    SHOAL_ASSERT(count_ >= 0, "completion_event completed more often than enrolled");
    if (count_ == 0) {
      while (detail::worker* w = waiters_.pop()) detail::wake(w);
    }
  }

  std::int64_t count_;
  int home_;
  detail::worker_list waiters_;
};

}  // namespace shoal
