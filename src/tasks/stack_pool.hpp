// Worker stacks for one core, carved out of large mappings ("slabs") so that a
// hundred thousand workers do not need a hundred thousand kernel mappings.
// Each stack has a guard region below it: on kernels with MADV_GUARD_INSTALL
// (Linux 6.13+) guards cost no extra mapping; elsewhere the guard is an
// mprotect(PROT_NONE) range, which splits the mapping and is subject to
// vm.max_map_count (creation then fails with a message saying so).
#pragma once

#include "shoal/detail/thread_safety.hpp"

#include <cstddef>
#include <vector>

#include "tasks/worker_record.hpp"

namespace shoal::detail {

class stack_pool {
 public:
  stack_pool(int core, std::size_t stack_bytes);
  ~stack_pool();
  stack_pool(const stack_pool&) = delete;
  stack_pool& operator=(const stack_pool&) = delete;

  /// A new worker record at the top of a fresh stack; the caller makes its
  /// fiber (stack_lo .. the record, stack_bytes long).
  worker_record* create() SHOAL_EXCLUDES(workers_mu_);

  /// Calls f(worker) for every worker created so far.
  /// Any thread (the watchdog); the fields it reads are a racy snapshot.
  template <class F>
  void for_each_worker(F f) const SHOAL_EXCLUDES(workers_mu_) {
    lock_guard lock(workers_mu_);
    for (const worker_record* w : workers_) f(*w);
  }

  static constexpr std::size_t guard_bytes = 4 * 1024;

 private:
  struct slab {
    char* base;
    std::size_t bytes;
  };
  void add_slab();

  const int core_;
  const std::size_t stack_bytes_;  // usable bytes, page multiple
  const std::size_t slot_bytes_;   // guard + stack
  std::size_t slots_per_slab_;
  std::vector<slab> slabs_;
  std::size_t next_slot_ = 0;  // in the newest slab
  std::size_t created_ = 0;
  mutable annotated_mutex workers_mu_;  // creation is rare: a lock costs nothing there
  // Every worker created, for diagnostics.
  std::vector<worker_record*> workers_ SHOAL_GUARDED_BY(workers_mu_);
};

/// One stack of `bytes` (a multiple of the page size) with a guard page
/// below it, mapped on its own for a fiber that is not a worker (a core's
/// service stack, scheduler::run_off_worker_stack). Returns its lowest
/// usable byte; ends the job naming `core` when the mapping fails.
char* map_lone_stack(std::size_t bytes, int core);
/// Releases what map_lone_stack returned; its fiber must not be running.
void unmap_lone_stack(char* lo, std::size_t bytes);

/// Installs the SIGSEGV handler that turns a guard hit into the message
/// "worker stack overflow on core N (stack K KiB; raise --stack-kb)".
/// Idempotent; each core thread must also call install_alt_stack().
void install_overflow_handler(std::size_t stack_bytes);
void install_alt_stack();
void remove_alt_stack();

}  // namespace shoal::detail
