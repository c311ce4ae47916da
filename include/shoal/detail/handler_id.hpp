// Position-independent handler identity. A handler travels as the distance in
// bytes between its invoker and an anchor function of the same program, not
// as a raw pointer: every process of a job runs the same binary, so the
// distance is the same everywhere even when address-space layout
// randomisation loads the program at different addresses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace shoal::detail {

/// The anchor. Inline so that it lands in the same executable as the
/// handlers instantiated from user code.
[[gnu::noinline, gnu::used]] inline void handler_anchor() noexcept { asm volatile(""); }

/// Runs the closures stored back to back in [first, first + bytes). One
/// indirect call per run rather than per message: the loop over a run is
/// inlined with the closure's body, as a channel's is.
using closure_invoker = void (*)(char* first, std::uint32_t bytes);

/// Bytes a closure of type F takes in a buffer: padded to 8 so that the
/// next one stays aligned.
template <class F>
inline constexpr std::uint32_t padded_closure_bytes =
    static_cast<std::uint32_t>((sizeof(F) + 7) & ~std::size_t{7});

/// The invoker of closures of type F (trivially copied into the buffer).
template <class F>
void invoke_closures(char* first, std::uint32_t bytes) {
  for (char* const end = first + bytes; first < end; first += padded_closure_bytes<F>)
    (*std::launder(reinterpret_cast<F*>(first)))();
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
