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
// any thread) and destroyed by reset() or at exit. Each init() starts a new
// job with fresh slots (its core count may differ): a value set before
// finalize() is not seen after the next init(). Each slot sits on its own
// cache lines, so cores never share a line through it.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

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
    current_.store(nullptr, std::memory_order_release);  // publish "none" before freeing
    blocks_.clear();
  }

 private:
  struct alignas(64) padded {
    T value{};
  };

  /// One job's slots: made on first use after an init(), for that job's core count.
  struct block {
    std::uint64_t epoch = 0;
    std::unique_ptr<padded[]> slots;
  };

  T& slot(int i) {
    SHOAL_ASSERT(i >= 0 && i < detail::g_info.local_cores,
                 "per_core: local core {} out of range (run inside a shoal core)", i);
    // Acquire: pairs with the release in create(), so the slots' construction is visible.
    block* b = current_.load(std::memory_order_acquire);
    if (b == nullptr || b->epoch != detail::g_init_epoch) b = create();
    return b->slots[static_cast<std::size_t>(i)].value;
  }

  /// The slots of the current job, made by the first caller. The block it
  /// replaces is kept until the next job's: a core of this job may still hold
  /// its pointer while it checks the epoch (blocks older than that were
  /// replaced before the previous job's cores were joined).
  block* create() {
    std::lock_guard<std::mutex> lock(mutex_);
    block* b = current_.load(std::memory_order_relaxed);  // the mutex orders creators
    if (b != nullptr && b->epoch == detail::g_init_epoch) return b;
    const int n = detail::g_info.local_cores;
    SHOAL_CHECK(n > 0, "per_core used before shoal::init");
    auto fresh = std::make_unique<block>();
    fresh->epoch = detail::g_init_epoch;
    fresh->slots = std::make_unique<padded[]>(static_cast<std::size_t>(n));
    b = fresh.get();
    std::erase_if(blocks_, [old = current_.load(std::memory_order_relaxed)](const auto& k) {
      return k.get() != old;
    });
    blocks_.push_back(std::move(fresh));
    current_.store(b, std::memory_order_release);  // publish constructed slots
    return b;
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<block>> blocks_;  ///< this job's, and the one it replaced
  std::atomic<block*> current_{nullptr};
};

}  // namespace shoal
