// Typed channels (Active Pebbles' typed active messages): a channel binds a
// payload type T to a handler. Buffers of a channel hold bare T values, one
// header per batch, and the receiving core applies the handler to each value
// in a tight, inlined loop: the fast path for fine-grained traffic.
//
//   auto ch = shoal::make_channel<std::uint64_t>([](std::uint64_t v) { ... });
//   ch.send(core, 42);   // handler(42) runs on `core`, batched with others
//
// Delivery, ordering, flushing and back-pressure are those of send()
// (message.hpp). The handler runs in handler context: no suspension.
#pragma once

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

namespace shoal {

namespace detail {
/// Names why channel::send on handle `id` cannot go: no shoal core on this
/// thread, or a default-constructed or closed handle.
[[noreturn, gnu::cold, gnu::noinline]] inline void fatal_channel_send(std::uint32_t id) {
  if (tls_core < 0) fatal_outside_run("shoal::channel::send");
  fatal_user(
      fmt::format("shoal::channel::send on a default-constructed or closed channel "
                  "handle (id {})",
                  id));
}
}  // namespace detail

/// A payload type a channel can carry: trivially copyable, at most 8-byte
/// aligned.
template <class T>
concept channel_value_like = std::is_trivially_copyable_v<T> && alignof(T) <= 8;

/// A channel handler for values of T: callable as h(const T&), trivially
/// copyable (it is replicated to every core and process), at most 64 bytes.
template <class H, class T>
concept channel_handler_like = std::invocable<const H&, const T&> &&
                                   std::is_trivially_copyable_v<H> && sizeof(H) <= 64 &&
                               alignof(H) <= 8;

template <channel_value_like T>
class channel {
 public:
  channel() = default;

  /// Sends `value` to global core `core`; the handler runs there. Returns
  /// at once (may suspend a task under back-pressure). Any core, inside
  /// run(); a send on a default-constructed or closed handle ends the job.
  void send(int core, const T& value) const {
    if (__builtin_expect((id_ == 0) | (detail::tls_core < 0), 0)) detail::fatal_channel_send(id_);
    char* p = detail::tls_aggregator->reserve(id_, core, static_cast<std::uint32_t>(sizeof(T)));
    std::memcpy(p, &value, sizeof(T));
  }

  /// Removes the channel from every process and releases its id. Call
  /// once, from a task, when no message of it is in flight (after the work
  /// using it has been waited for). Blocking in a job of several processes.
  void close() {
    if (id_ != 0) detail::close_channel(id_);
    id_ = 0;
  }

  std::uint32_t id() const noexcept { return id_; }
  explicit operator bool() const noexcept { return id_ != 0; }

 private:
  template <channel_value_like U, class H>
  requires channel_handler_like<H, U>
  friend channel<U> make_channel(const H& handler);

  explicit channel(std::uint32_t id) : id_(id) {}
  std::uint32_t id_ = 0;
};

/// Opens a channel for values of T handled by `handler` on every core of the
/// job. Call from a task; in a job of several processes it blocks until
/// every process has the channel (one round trip per process), so any core
/// may send on it as soon as it returns. The returned handle is small and
/// trivially copyable, so closures and other cores (and processes) may use it.
template <channel_value_like T, class H>
requires channel_handler_like<H, T> channel<T> make_channel(const H& handler) {
  SHOAL_CHECK_ON_CORE("shoal::make_channel");
  detail::channel_entry e;
  std::memcpy(e.state, static_cast<const void*>(&handler), sizeof(H));
  e.value_bytes = sizeof(T);
  e.deliver = [](const void* state, const char* data, std::uint32_t count) {
    const H& h = *static_cast<const H*>(state);
    // Values sit at multiples of sizeof(T) from a 64-byte aligned start,
    // so each is suitably aligned for T.
    const T* values = std::launder(reinterpret_cast<const T*>(data));
    for (std::uint32_t i = 0; i < count; ++i) h(values[i]);
  };
  return channel<T>(detail::open_channel(e));
}

}  // namespace shoal
