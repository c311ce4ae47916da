// A task: a callable of at most 64 bytes stored inline with its invoker.
// No std::function, no heap allocation: queues copy tasks by value.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

namespace shoal {

/// Largest closure a task or message may carry inline.
inline constexpr std::size_t max_closure_bytes = 64;

/// A closure that can be stored in a task slot: callable with no arguments,
/// trivially copyable (tasks move between queues and cores as bytes), at most
/// 64 bytes and at most 8-byte aligned. Capture pointers to large data rather
/// than the data itself.
template <class F>
concept task_like = std::invocable<F&> && std::is_trivially_copyable_v<F> &&
                        sizeof(F) <= max_closure_bytes
                    && alignof(F) <= 8;

namespace detail {

/// Gives a readable diagnostic for the first requirement F violates.
template <class F>
constexpr void check_task_closure() {
  static_assert(std::invocable<F&>, "shoal: a task must be callable with no arguments");
  static_assert(
      std::is_trivially_copyable_v<F>,
      "shoal: a task closure must be trivially copyable: capture pointers or plain "
      "values, not std::string/std::vector/smart pointers (they cannot be copied as bytes)");
  static_assert(sizeof(F) <= max_closure_bytes,
                "shoal: a task closure is limited to 64 bytes: capture a pointer to a struct "
                "holding the data instead");
  static_assert(alignof(F) <= 8, "shoal: a task closure may not be over-aligned");
}

struct inline_task {
  void (*run)(inline_task&) = nullptr;
  alignas(8) unsigned char storage[max_closure_bytes];
  /// The finish scope the task belongs to (0: none); the scope's event is
  /// completed when the task ends (see finish.hpp).
  std::uint32_t scope = 0;

  template <class F>
  static inline_task make(const F& f) noexcept {
    check_task_closure<F>();
    inline_task t;
    std::memcpy(t.storage, static_cast<const void*>(&f), sizeof(F));
    t.run = [](inline_task& self) { (*std::launder(reinterpret_cast<F*>(self.storage)))(); };
    return t;
  }

  void operator()() { run(*this); }
  explicit operator bool() const { return run != nullptr; }
};

static_assert(sizeof(inline_task) == 80);
static_assert(std::is_trivially_copyable_v<inline_task>);

}  // namespace detail
}  // namespace shoal
