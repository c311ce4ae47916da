// Error tiers (STYLE 10): SHOAL_CHECK is always on and ends the whole job with
// rank, core, file:line and cause; SHOAL_ASSERT is the same in debug builds only.
#pragma once

#include "shoal/detail/process_info.hpp"

#include <string>

#include <fmt/core.h>

namespace shoal::detail {

/// Prints "shoal: fatal on rank R core C: <what> (file:line)" to stderr and
/// ends the whole job with exit status 1. Never returns. Callable from any
/// thread, inside or outside a worker.
[[noreturn]] void fatal(const std::string& what, const char* file, int line);

/// Like fatal() without a source location: for errors that are the user's to
/// fix (bad flag, exhausted heap), where file:line would only be noise.
[[noreturn]] void fatal_user(const std::string& what);

/// Ends the job with "<api> called outside shoal::run() (no shoal core on
/// this thread)". Out of line: the check that calls it stays one branch.
[[noreturn, gnu::cold]] void fatal_outside_run(const char* api);

}  // namespace shoal::detail

#define SHOAL_CHECK(cond, ...)                                                                   \
  do {                                                                                           \
    if (__builtin_expect(!(cond), 0))                                                            \
      ::shoal::detail::fatal("check failed: " #cond ": " + ::fmt::format(__VA_ARGS__), __FILE__, \
                             __LINE__);                                                          \
  } while (0)

/// Misuse check of every build type for calls that need a shoal core (send,
/// spawn, delegates, waits...): one thread-local load and a branch. `api`
/// names the call in the message, e.g. "shoal::send".
#define SHOAL_CHECK_ON_CORE(api)                            \
  do {                                                      \
    if (__builtin_expect(::shoal::detail::tls_core < 0, 0)) \
      ::shoal::detail::fatal_outside_run(api);              \
  } while (0)

#ifdef NDEBUG
#define SHOAL_ASSERT(cond, ...) \
  do {                          \
  } while (0)
#else
#define SHOAL_ASSERT(cond, ...) SHOAL_CHECK(cond, __VA_ARGS__)
#endif
