// Position-independent handler identity. A handler travels as the distance in
// bytes between its invoker and an anchor function of the same program, not
// as a raw pointer: every process of a job runs the same binary, so the
// distance is the same everywhere even when address-space layout
// randomisation loads the program at different addresses.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>

namespace shoal::detail {

/// The anchor. Inline so that it lands in the same executable as the
/// handlers instantiated from user code.
[[gnu::noinline, gnu::used]] inline void handler_anchor() noexcept { asm volatile(""); }

using closure_invoker = void (*)(void* payload);

/// Runs a closure of type F stored (trivially copied) at `payload`.
template <class F>
void invoke_closure(void* payload) {
  (*std::launder(reinterpret_cast<F*>(payload)))();
}

inline std::int32_t to_handler_id(closure_invoker fn) noexcept {
  return static_cast<std::int32_t>(reinterpret_cast<std::intptr_t>(fn) -
                                   reinterpret_cast<std::intptr_t>(&handler_anchor));
}

inline closure_invoker from_handler_id(std::int32_t id) noexcept {
  return reinterpret_cast<closure_invoker>(reinterpret_cast<std::intptr_t>(&handler_anchor) + id);
}

/// Any function of the program as a distance from the anchor (for function
/// pointers that travel to other processes, e.g. a channel's receive loop).
template <class Fn>
std::int64_t to_code_offset(Fn* fn) noexcept {
  return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(fn) -
                                   reinterpret_cast<std::intptr_t>(&handler_anchor));
}

template <class Fn>
Fn* from_code_offset(std::int64_t offset) noexcept {
  return reinterpret_cast<Fn*>(reinterpret_cast<std::intptr_t>(&handler_anchor) +
                               static_cast<std::intptr_t>(offset));
}

}  // namespace shoal::detail
