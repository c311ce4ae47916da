// Pacing for long send loops on shoal (the apps' shared helper).
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>

namespace shoal_apps {

/// Lets a long sending loop yield now and then, so that its core handles
/// what other cores sent it (and returns their buffers) instead of making
/// them wait on back-pressure until the loop ends. A yield with no other
/// worker ready returns at once and only every 64th one polls, so yielding
/// every 64 messages polls about every 4096 (measured: polling every 64 or
/// every 1024 messages is slower on 1 and 2 processes alike).
class yield_every {
 public:
  /// Counts `work` units (messages sent); yields once per `period` of them.
  void tick(std::int64_t work = 1) {
    left_ -= work;
    if (left_ > 0) return;
    left_ = period;
    shoal::yield();
  }

 private:
  static constexpr std::int64_t period = 64;
  std::int64_t left_ = period;
};

}  // namespace shoal_apps
