// Clang's thread-safety attributes behind SHOAL_ macros, and a mutex and
// lock guards they can reason about. Lock-protected state is declared
// SHOAL_GUARDED_BY its mutex and functions that expect a lock held are
// SHOAL_REQUIRES it, so `clang++ -Wthread-safety` proves the locking at
// compile time. Other compilers (g++) see empty macros and plain std::mutex.
#pragma once

#include <mutex>

#if defined(__clang__)
#define SHOAL_THREAD_ATTRIBUTE(x) __attribute__((x))
#else
#define SHOAL_THREAD_ATTRIBUTE(x)
#endif

#define SHOAL_CAPABILITY(x) SHOAL_THREAD_ATTRIBUTE(capability(x))
#define SHOAL_SCOPED_CAPABILITY SHOAL_THREAD_ATTRIBUTE(scoped_lockable)
#define SHOAL_GUARDED_BY(x) SHOAL_THREAD_ATTRIBUTE(guarded_by(x))
#define SHOAL_PT_GUARDED_BY(x) SHOAL_THREAD_ATTRIBUTE(pt_guarded_by(x))
#define SHOAL_REQUIRES(...) SHOAL_THREAD_ATTRIBUTE(requires_capability(__VA_ARGS__))
#define SHOAL_ACQUIRE(...) SHOAL_THREAD_ATTRIBUTE(acquire_capability(__VA_ARGS__))
#define SHOAL_RELEASE(...) SHOAL_THREAD_ATTRIBUTE(release_capability(__VA_ARGS__))
#define SHOAL_TRY_ACQUIRE(...) SHOAL_THREAD_ATTRIBUTE(try_acquire_capability(__VA_ARGS__))
#define SHOAL_EXCLUDES(...) SHOAL_THREAD_ATTRIBUTE(locks_excluded(__VA_ARGS__))
#define SHOAL_ASSERT_CAPABILITY(x) SHOAL_THREAD_ATTRIBUTE(assert_capability(x))
#define SHOAL_NO_THREAD_SAFETY_ANALYSIS SHOAL_THREAD_ATTRIBUTE(no_thread_safety_analysis)

namespace shoal::detail {

/// A std::mutex the analysis knows as a capability. Same cost and semantics.
class SHOAL_CAPABILITY("mutex") annotated_mutex {
 public:
  void lock() SHOAL_ACQUIRE() { mu_.lock(); }
  void unlock() SHOAL_RELEASE() { mu_.unlock(); }
  /// True when the lock was taken.
  bool try_lock() SHOAL_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  /// Tells the analysis the caller holds the lock where it cannot see it
  /// (a callback run under it); no run-time effect.
  void assert_held() const SHOAL_ASSERT_CAPABILITY(this) {}
  /// The wrapped mutex, for std::condition_variable (see unique_lock).
  std::mutex& native() noexcept { return mu_; }

 private:
  std::mutex mu_;
};

/// Tag: the guard takes over a lock the caller already holds.
struct adopt_lock_t {};
inline constexpr adopt_lock_t adopt_lock{};

/// Holds `m` for its scope (std::lock_guard for annotated_mutex).
class SHOAL_SCOPED_CAPABILITY lock_guard {
 public:
  explicit lock_guard(annotated_mutex& m) SHOAL_ACQUIRE(m) : m_(m) { m_.lock(); }
  /// Adopts a lock the caller holds (after a successful try_lock()).
  lock_guard(annotated_mutex& m, adopt_lock_t) SHOAL_REQUIRES(m) : m_(m) {}
  ~lock_guard() SHOAL_RELEASE() { m_.unlock(); }
  lock_guard(const lock_guard&) = delete;
  lock_guard& operator=(const lock_guard&) = delete;

 private:
  annotated_mutex& m_;
};

/// Holds `m` for its scope as a std::unique_lock, so that a
/// std::condition_variable can wait on it (native()).
class SHOAL_SCOPED_CAPABILITY unique_lock {
 public:
  explicit unique_lock(annotated_mutex& m) SHOAL_ACQUIRE(m) : lock_(m.native()) {}
  ~unique_lock() SHOAL_RELEASE() {}
  unique_lock(const unique_lock&) = delete;
  unique_lock& operator=(const unique_lock&) = delete;
  /// For condition_variable::wait*: it unlocks and relocks inside, and
  /// holds the lock again when it returns, as the analysis assumes.
  std::unique_lock<std::mutex>& native() noexcept { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace shoal::detail
