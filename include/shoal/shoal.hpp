// shoal: the whole public API in one include.
#pragma once

#include "shoal/channel.hpp"
#include "shoal/completion_event.hpp"
#include "shoal/config.hpp"
#include "shoal/delegate.hpp"
#include "shoal/forall.hpp"
#include "shoal/full_empty.hpp"
#include "shoal/future.hpp"
#include "shoal/global_completion_event.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/global_ptr.hpp"
#include "shoal/message.hpp"
#include "shoal/mutex.hpp"
#include "shoal/parallel.hpp"
#include "shoal/runtime.hpp"
#include "shoal/stats.hpp"
#include "shoal/task.hpp"
