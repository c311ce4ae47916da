// per_core<T>: one T per core of this process, reachable by name from any
// core of any process.
//
// Messages and forall bodies may run on another process, where a pointer
// into the sender's memory means nothing. State that every core of the job
// needs (a core's slice of a graph, its frontier, its tree nodes) therefore
// lives in an object declared at namespace scope: each process has its own
// instance of the same variable, and code names it rather than pointing to it.
//
//   namespace { shoal::per_core<std::vector<int>> frontier; }
//   ... in a handler on any core of any process:  frontier.local().push_back(v);
//
// Storage for every local core is created on first use (after init(), from
// any thread) and destroyed by reset() or at exit. Each slot sits on its own
// cache lines, so cores never share a line through it.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <new>

namespace shoal {

template <class T>
class per_core {
 public:
  per_core() = default;
  per_core(const per_core&) = delete;
  per_core& operator=(const per_core&) = delete;

  /// The calling core's T. Any task or handler (a shoal core's thread; any
  /// other thread is a fatal error). No message, no lock after the first use
  /// in this process.
  T& local() {
    SHOAL_CHECK(detail::tls_core >= 0, "per_core::local() called outside a shoal core");
    return slot(detail::tls_core - detail::g_info.rank_base);
  }

  /// The T of local core `i` (0 <= i < local_cores()) of this process: for
  /// code that combines the cores' parts between runs or from one task.
  T& operator[](int i) { return slot(i); }

  /// Local cores of this process (the number of slots).
  int size() const noexcept { return detail::g_info.local_cores; }

  /// Destroys every slot; the next use creates fresh ones. Call only while no
  /// core uses the object (between runs, or from the root task after the
  /// work using it has been waited for, in every process that used it).
  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_.store(nullptr, std::memory_order_release);  // publish "none" before freeing
    storage_.reset();
  }

 private:
  struct alignas(64) padded {
    T value{};
  };

  T& slot(int i) {
    SHOAL_ASSERT(i >= 0 && i < detail::g_info.local_cores,
                 "per_core: local core {} out of range (run inside a shoal core)", i);
    // Acquire: pairs with the release in create(), so the slots' construction is visible.
    padded* s = slots_.load(std::memory_order_acquire);
    if (s == nullptr) s = create();
    return s[i].value;
  }

  padded* create() {
    std::lock_guard<std::mutex> lock(mutex_);
    padded* s = slots_.load(std::memory_order_relaxed);  // the mutex orders creators
    if (s != nullptr) return s;
    const int n = detail::g_info.local_cores;
    SHOAL_CHECK(n > 0, "per_core used before shoal::init");
    storage_ = std::make_unique<padded[]>(static_cast<std::size_t>(n));
    s = storage_.get();
    slots_.store(s, std::memory_order_release);  // publish constructed slots
    return s;
  }

  std::mutex mutex_;
  std::unique_ptr<padded[]> storage_;
  std::atomic<padded*> slots_{nullptr};
};

}  // namespace shoal
