// fiber_sanitizer: what AddressSanitizer and ThreadSanitizer must be told
// about worker stacks. Every function here is empty unless the translation
// unit is built with -fsanitize=address or -fsanitize=thread, so the switch
// path costs nothing in other builds.
//
// Contract with fiber.hpp and the scheduler (the only callers):
// - fiber_created(m, lo, n) once per worker, when its stack [lo, lo + n) is
//   handed out (make_fiber); fiber_destroyed(m) when the worker's stack is
//   released, never while the worker runs.
// - mark_thread_stack(m) once on each core thread before its first switch:
//   the thread's own stack is the scheduler's context.
// - fiber_leave(from, to) right before every jump and fiber_arrived(self)
//   right after it returns, on the resumed side (switch_fiber);
//   fiber_arrived(m) is also the first call of a new worker (its fake stack
//   is still null: a fresh fiber).
//   Workers never end (a finished task parks its worker for reuse), so no
//   switch leaves a fiber for good: the null fake-stack save that destroys a
//   dying fiber's fake stack is never needed.
// - fiber_stack_unused(lo, hi) for stack memory that holds no live frame
//   (a slab just mapped or about to be unmapped, the part of a parked worker's
//   stack below its saved context): poison left there by frames ASan never
//   saw end would otherwise trip a later frame or worker record placed there.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define SHOAL_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHOAL_ASAN_FIBERS 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define SHOAL_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHOAL_TSAN_FIBERS 1
#endif
#endif

#ifdef SHOAL_ASAN_FIBERS
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#endif
#ifdef SHOAL_TSAN_FIBERS
#include <sanitizer/tsan_interface.h>
#endif

namespace shoal::detail {

/// What the sanitizers need to know of one execution context (a worker, or
/// a core thread's own stack). An empty struct in other builds.
struct fiber_marks {
#ifdef SHOAL_ASAN_FIBERS
  void* fake_stack = nullptr;         // ASan's fake stack while switched out
  const void* stack_lo = nullptr;     // lowest byte of the stack
  std::size_t stack_bytes = 0;
#endif
#ifdef SHOAL_TSAN_FIBERS
  void* tsan_fiber = nullptr;
#endif
};

/// Drops any poison in [lo, hi): memory that holds no live frame.
inline void fiber_stack_unused([[maybe_unused]] const void* lo,
                               [[maybe_unused]] const void* hi) noexcept {
#ifdef SHOAL_ASAN_FIBERS
  ASAN_UNPOISON_MEMORY_REGION(lo, static_cast<const char*>(hi) - static_cast<const char*>(lo));
#endif
}

/// A new worker whose stack is [lo, lo + bytes).
inline void fiber_created([[maybe_unused]] fiber_marks& m, [[maybe_unused]] const void* lo,
                          [[maybe_unused]] std::size_t bytes) noexcept {
#ifdef SHOAL_ASAN_FIBERS
  m.stack_lo = lo;
  m.stack_bytes = bytes;
#endif
#ifdef SHOAL_TSAN_FIBERS
  m.tsan_fiber = __tsan_create_fiber(0);
#endif
}

/// A worker whose stack is being released; it is not running.
inline void fiber_destroyed([[maybe_unused]] fiber_marks& m) noexcept {
#ifdef SHOAL_TSAN_FIBERS
  __tsan_destroy_fiber(m.tsan_fiber);
  m.tsan_fiber = nullptr;
#endif
}

/// Records the calling thread's own stack in `m`, the scheduler context's marks.
inline void mark_thread_stack([[maybe_unused]] fiber_marks& m) noexcept {
#ifdef SHOAL_ASAN_FIBERS
  pthread_attr_t attr;
  void* lo = nullptr;
  std::size_t bytes = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &lo, &bytes);
    pthread_attr_destroy(&attr);
  }
  m.stack_lo = lo;
  m.stack_bytes = bytes;
#endif
#ifdef SHOAL_TSAN_FIBERS
  m.tsan_fiber = __tsan_get_current_fiber();
#endif
}

/// Right before switching from the context `from` to the context `to`.
inline void fiber_leave([[maybe_unused]] fiber_marks& from,
                        [[maybe_unused]] const fiber_marks& to) noexcept {
#ifdef SHOAL_ASAN_FIBERS
  __sanitizer_start_switch_fiber(&from.fake_stack, to.stack_lo, to.stack_bytes);
#endif
#ifdef SHOAL_TSAN_FIBERS
  __tsan_switch_to_fiber(to.tsan_fiber, 0);  // synchronising: one core, one at a time
#endif
}

/// First thing on the resumed side of a switch (and in a new worker).
inline void fiber_arrived([[maybe_unused]] const fiber_marks& self) noexcept {
#ifdef SHOAL_ASAN_FIBERS
  __sanitizer_finish_switch_fiber(self.fake_stack, nullptr, nullptr);
#endif
}

}  // namespace shoal::detail
