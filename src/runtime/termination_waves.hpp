// The end of a run in a job of several processes: termination waves
// (Active Pebbles 3.6) run by every rank's main thread, which also drives the
// network while the cores do not. See wait_terminated in
// termination_waves.cpp for the protocol.
#pragma once

#include "runtime/runtime_state.hpp"

namespace shoal::detail {

/// Returns once a wave has found the whole job finished and a second wave
/// has confirmed it. Every rank's run() main thread; collective.
void wait_terminated(runtime_state& rt);

}  // namespace shoal::detail
