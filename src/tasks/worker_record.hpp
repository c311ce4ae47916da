// The scheduler's whole record of a worker: the public part (worker.hpp: its
// task and wait-list link) plus its fiber and what the watchdog reports. The
// record lives at the top of the worker's own stack; below the stack sits a
// guard region, so an overflow faults instead of corrupting a neighbour (see
// stack_pool). Workers never migrate between cores.
#pragma once

#include "shoal/detail/worker.hpp"

#include <cstddef>
#include <cstdint>

#include "tasks/fiber.hpp"

namespace shoal::detail {

struct worker_record : worker {
  fiber context;                  // saved context while not running
  char* stack_lo = nullptr;       // lowest usable stack byte (guard lies below)
  std::size_t stack_bytes = 0;    // usable stack size
  const char* waiting_on = "";    // what a suspended worker waits for (watchdog, debugging)
  std::int64_t waiting_tag = -1;  // which one of them (a sequence number, an id), or -1
  int core = 0;                   // local core index that owns it
  bool suspended = false;         // suspended and not in the ready queue
};

/// The record of a worker handed out through the public interface: every
/// worker is made by stack_pool as a worker_record.
inline worker_record* record_of(worker* w) noexcept { return static_cast<worker_record*>(w); }

}  // namespace shoal::detail
