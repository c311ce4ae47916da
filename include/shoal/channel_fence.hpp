// The handle of a per-sender channel fence (channel.hpp's ch.fence()): it
// completes once every value its core sent on the channel before the fence
// was made has been handled. The runtime is src/comm/channel_fence.cpp.
#pragma once

#include <cstdint>

namespace shoal {

class channel_fence;

namespace detail {
/// channel::fence on channel `id` (channel_fence.cpp).
channel_fence make_channel_fence(std::uint32_t id);
/// Whether fence `number` of channel `id`, made on global core `core`, is
/// complete; ends the job when called on another core.
bool channel_fence_ready(std::uint32_t id, int core, std::uint64_t number);
/// Suspends the calling task until it is; ends the job outside a task or
/// on another core.
void wait_channel_fence(std::uint32_t id, int core, std::uint64_t number);
}  // namespace detail

/// A fence made by channel::fence(). Small and copyable; every copy refers
/// to the same fence. Used on the core that made it (a task or a handler
/// there may test it; only a task may wait).
class channel_fence {
 public:
  /// A complete fence (nothing to wait for).
  channel_fence() = default;

  /// Whether every value the fence covers has been handled. Never
  /// suspends; on the core that made the fence, else the job ends with a
  /// message naming both cores.
  bool ready() const { return number_ == 0 || detail::channel_fence_ready(id_, core_, number_); }

  /// Suspends the calling task until ready() (the core runs its other tasks
  /// and handlers meanwhile; watchdog: "channel <id> fence" #number). From
  /// a handler, or on another core than the one that made the fence, the
  /// job ends with a message.
  void wait() const {
    if (number_ != 0) detail::wait_channel_fence(id_, core_, number_);
  }

 private:
  friend channel_fence detail::make_channel_fence(std::uint32_t id);
  channel_fence(std::uint32_t id, int core, std::uint64_t number)
      : id_(id), core_(core), number_(number) {}
  std::uint32_t id_ = 0;
  std::int32_t core_ = -1;
  std::uint64_t number_ = 0;  // 0: complete from the start
};

}  // namespace shoal
