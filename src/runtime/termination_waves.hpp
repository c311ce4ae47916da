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

/// Ends the main thread's long pause between waves, if it is in one: the
/// run may be about to end. Any thread; one load when it is not napping.
void wake_waves(runtime_state& rt) noexcept;

}  // namespace shoal::detail
