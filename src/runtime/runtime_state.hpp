// Everything one process's runtime holds between init() and finalize(): the
// cores (schedulers), their aggregators and stealers, the global heap, the
// network of a job of several processes, and the root task's outcome.
// runtime.cpp makes and tears it down; the end-of-run detectors
// (quiescence.hpp, termination_waves.hpp) and the watchdog read it.
#pragma once

#include "shoal/config.hpp"
#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/thread_safety.hpp"
#include "shoal/global_completion_event.hpp"
#include "shoal/runtime.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <vector>

#include "comm/network.hpp"
#include "comm/remote_steal.hpp"
#include "memory/global_heap_impl.hpp"
#include "tasks/scheduler.hpp"

namespace shoal::detail {

struct runtime_state {
  config cfg;
  core_group group;
  std::vector<std::unique_ptr<scheduler>> schedulers;
  std::vector<std::unique_ptr<aggregator>> aggregators;
  std::unique_ptr<global_heap> heap;
  std::unique_ptr<network> net;                           // jobs of several processes only
  std::vector<std::unique_ptr<remote_stealer>> stealers;  // likewise
  std::unique_ptr<global_completion_event> default_gce;
  std::atomic<bool> root_done{false};
  annotated_mutex root_mu;  // with root_cv: wakes run()'s thread at once (no field)
  std::condition_variable root_cv;
  std::exception_ptr root_error;
  teardown_report last{};
};

}  // namespace shoal::detail
