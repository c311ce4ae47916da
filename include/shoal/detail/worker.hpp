// A worker as code outside the scheduler sees it: the task it runs (whose
// finish scope current_scope() reads) and the link that puts a suspended
// worker on a wait list (worker_list). The rest of a worker (its fiber, its
// stack, what it waits for) belongs to the scheduler and lives in src/tasks/
// (worker_record.hpp), so user code never sees Boost.Context.
#pragma once

#include "shoal/detail/inline_task.hpp"

namespace shoal::detail {

struct worker {
  inline_task task;        // the task this worker runs next / is running
  worker* next = nullptr;  // intrusive link for wait lists and the idle list
};

}  // namespace shoal::detail
