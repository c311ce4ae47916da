// A task: a callable of at most max_task_bytes (64) stored inline with its invoker.
// No std::function, no heap allocation: queues copy tasks by value.
#pragma once

#include "shoal/closure.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

namespace shoal {

namespace detail {

struct inline_task {
  void (*run)(inline_task&) = nullptr;
  alignas(8) unsigned char storage[max_task_bytes];
  /// The finish scope the task belongs to (0: none); the scope's event is
  /// completed when the task ends (see finish.hpp).
  std::uint32_t scope = 0;

  template <task_like F>
  static inline_task make(const F& f) noexcept {
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
