// What a closure given to spawn, send, the delegates or forall may be.
// Closures travel by value, as bytes, in fixed slots (a task slot, a
// message, a channel's handler table), so each call has a byte limit and
// requires bytes-copyable captures, checked at compile time by the concept
// that constrains the call: a bad capture is an error at the call, naming
// the failed requirement, never a crash on another rank. The README's
// "Closure sizes" table lists the same figures.
//
// The limits of on_all_cores and forall are derived: the user's closure rides
// inside a task of the runtime's own, beside what that task needs.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>

namespace shoal {

/// A task closure: spawn(), and every task the runtime starts for you.
/// A task slot is one 64-byte cache line of payload (inline_task).
inline constexpr std::size_t max_task_bytes = 64;

/// A closure message: send(), delegate::call/async_call/post. Larger than a
/// task because messages are staged in aggregation buffers, not in slots.
inline constexpr std::size_t max_message_bytes = 256;

/// A channel's handler: replicated to every core when the channel is made.
inline constexpr std::size_t max_channel_handler_bytes = 64;

/// on_all_cores(f): f travels in a task with the caller's event pointer (8
/// bytes) and core (4, padded to 8).
inline constexpr std::size_t max_on_all_cores_bytes = max_task_bytes - 16;

/// forall's loop body: it travels in a task with the range (base and count,
/// 16 bytes), the caller's event pointer (8) and the grain and core (4 + 4).
inline constexpr std::size_t max_loop_body_bytes = max_task_bytes - 32;

/// Every closure slot is 8-byte aligned; no closure may need more.
inline constexpr std::size_t max_closure_align = 8;

/// Copied as bytes (between queues, cores and processes): capture plain
/// values, pointers and global pointers, not std::string, std::vector, smart
/// pointers or other objects with copy logic, and nothing over-aligned.
template <class F>
concept copyable_as_bytes = std::is_trivially_copyable_v<F> && alignof(F) <= max_closure_align;

/// Fits a task slot: capture a pointer to a struct holding large data
/// rather than the data itself.
template <class F>
concept fits_task_slot = sizeof(F) <= max_task_bytes;

/// Fits a message.
template <class F>
concept fits_message = sizeof(F) <= max_message_bytes;

/// Fits forall's task beside the range.
template <class F>
concept fits_loop_body = sizeof(F) <= max_loop_body_bytes;

/// Fits on_all_cores' task beside the caller's event.
template <class F>
concept fits_on_all_cores = sizeof(F) <= max_on_all_cores_bytes;

/// What spawn() accepts: a task closure, callable with no arguments.
template <class F>
concept task_like = std::invocable<F&> && copyable_as_bytes<F> && fits_task_slot<F>;

/// What send() and the delegate calls accept: a closure message, callable
/// with no arguments. A captured reference or local pointer is meaningful
/// only on the sender's own process, and only while the pointee lives.
template <class F>
concept message_handler_like = std::invocable<F&> && copyable_as_bytes<F> && fits_message<F>;

/// What forall accepts as its body (called with an index, and an element
/// for the global_ptr form).
template <class F>
concept loop_body_like = copyable_as_bytes<F> && fits_loop_body<F>;

}  // namespace shoal
