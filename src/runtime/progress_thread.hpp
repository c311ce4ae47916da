#pragma once

#include <atomic>
#include <thread>

#include "comm/network.hpp"

namespace shoal::detail {

// --progress-thread: a thread that drives the network continuously while
// the job runs, instead of the cores as they poll and the main thread between
// termination waves. Started and stopped by run() (RAII).
class progress_thread {
 public:
  explicit progress_thread(network& net)
      : thread_([this, &net] {
          // Acquire: pairs with the destructor's release store of stop_.
          while (!stop_.load(std::memory_order_acquire))
            if (!net.progress()) std::this_thread::yield();
        }) {}
  ~progress_thread() {
    // Release: pairs with the loop's acquire; what run() did before the stop
    // is visible to the thread's last pass, and join() waits for that pass.
    stop_.store(true, std::memory_order_release);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace shoal::detail
