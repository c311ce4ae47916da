// Work stealing between processes (Grappa 3.2, GMT IV.C): an idle core of a
// job of several processes sends a steal request by message to a random core
// of another rank (of a rank one bit away, a hypercube neighbour, under
// shoal::route_control_over_hypercube); the victim sends back half of its movable tasks
// (spawn<anywhere>), each as a message that queues it on the thief, then a
// reply that closes the request.
//
// Contract.
// - One request outstanding per core; requests only from an idle core, with
//   a growing pause after each empty reply (50 us doubling to 5 ms), so an
//   idle job sends a few hundred small messages per second per core at most.
// - Disabled by set_remote_stealing(false): the termination waves turn it
//   off once the job looks finished, so that idle cores stop producing
//   messages and two quiet waves can agree (runtime.cpp).
// - Steal traffic does not count as progress for the watchdog.
// - Requests and empty replies travel on the control stream, so message
//   waves (barrier, channel phases, drains) do not count them: idle cores
//   asking for work cannot keep a drain from agreeing. Tasks handed over,
//   and the reply that follows them, are application messages (stream 0,
//   in order). Termination waves count network batches of every stream,
//   so they still see every request in flight.
#pragma once

#include <cstdint>

namespace shoal::detail {

class scheduler;

/// Per-core state of remote stealing; its poll hook sends requests.
class remote_stealer {
 public:
  explicit remote_stealer(scheduler& s) : sched_(s) {}
  /// Poll hook: when idle and due, sends one steal request. True when it did.
  static bool poll_hook(void* self);

  void on_reply(std::uint32_t tasks);

 private:
  scheduler& sched_;
  bool outstanding_ = false;
  int failures_ = 0;
  std::uint64_t next_ns_ = 0;
  std::uint64_t rng_ = 0;
};

/// Turns remote stealing on or off for this process (any thread).
void set_remote_stealing(bool on) noexcept;

/// The stealer of local core `local_core` (jobs of several processes).
remote_stealer& stealer_of(int local_core) noexcept;

}  // namespace shoal::detail
