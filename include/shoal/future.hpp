// future<T> / promise<T>: a value that arrives later, e.g. the result of an
// asynchronous delegate.
//
// The shared state lives on the core that created it (from a per-core pool:
// no allocation in steady state). A future is used on that core: get()
// suspends the calling worker until the value is there. A promise is a small
// trivially copyable handle that may travel in messages; set_value() on
// another core forwards the value to the home core by one message. Set a
// promise exactly once: a second set_value() ends the job with a message
// (checked in every build: the state keeps a serial number the promise
// carries, and its `ready` flag, which outlive the state in the core's pool).
#pragma once

#include "shoal/detail/core_state.hpp"
#include "shoal/detail/intrusive_list.hpp"
#include "shoal/detail/small_pool.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"
#include "shoal/task.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace shoal {

namespace detail {
struct unit {};
template <class T>
using stored_t = std::conditional_t<std::is_void_v<T>, unit, T>;

/// Serial number of the last future state made on this core.
inline thread_local std::uint32_t tls_future_serial = 0;

[[noreturn, gnu::cold]] inline void fatal_promise_set_twice(std::uint32_t serial) {
  fatal_user(
      fmt::format("shoal::promise::set_value called twice on the promise of future #{} "
                  "(set a promise exactly once)",
                  serial));
}

template <class T>
struct future_state {
  // The pool links a released block through its first word (in `value`);
  // `ready` and `serial` stay readable after release, for the set-twice check.
  alignas(stored_t<T>) unsigned char value[sizeof(stored_t<T>)];
  worker_list waiters;
  small_pool* pool = nullptr;  // the home core's pool, where the block returns
  std::uint8_t refs = 2;       // the future and the promise
  bool ready = false;
  std::uint32_t serial = ++tls_future_serial;  // also held by the promise

  static future_state* create() {
    static_assert(sizeof(future_state) <= small_pool::block_bytes,
                  "shoal::future: value type too large (at most 160 bytes)");
    small_pool& pool = this_core().pool;
    auto* s = new (pool.get()) future_state;
    s->pool = &pool;
    return s;
  }
  void release() noexcept {
    if (--refs == 0) {
      small_pool* home = pool;
      this->~future_state();
      home->put(this);
    }
  }
  /// Home core. `promised` is the serial the promise carries: a mismatch
  /// means the state was released and reused, so this is a second set.
  void fulfil(const stored_t<T>& v, std::uint32_t promised) {
    if (__builtin_expect(ready || serial != promised, 0)) fatal_promise_set_twice(promised);
    std::memcpy(value, &v, sizeof v);
    ready = true;
    while (worker* w = waiters.pop()) wake(w);
    release();
  }
  stored_t<T> get() const {
    stored_t<T> v;
    std::memcpy(&v, value, sizeof v);
    return v;
  }
};
}  // namespace detail

template <class T>
class promise;
template <class T>
class future;
template <class T>
std::pair<promise<T>, future<T>> make_promise_pair();

template <class T>
class future {
 public:
  future() = default;
  future(future&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  future& operator=(future&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~future() { reset(); }

  /// Whether the value has arrived. Home core only.
  bool ready() const noexcept { return s_ != nullptr && s_->ready; }

  /// Suspends the calling worker until the value has arrived. Home core,
  /// in a task. The watchdog names the wait "future #n" (the n-th future
  /// made on that core).
  void wait() const {
    SHOAL_CHECK_ON_CORE("shoal::future::wait");
    SHOAL_CHECK(s_ != nullptr, "wait() on an empty future");
    if (s_->ready) return;
    s_->waiters.push(detail::current_worker());
    detail::suspend("future", s_->serial);
  }

  /// The value; suspends until it has arrived. May be called repeatedly.
  T get() const {
    wait();
    if constexpr (!std::is_void_v<T>) return s_->get();
  }

  /// Runs `f(value)` in a new task on this core once the value is there and
  /// returns a future of f's result. Consumes this future.
  template <class F>
  auto then(F f) && {
    using U = typename std::conditional_t<std::is_void_v<T>, std::invoke_result<F>,
                                          std::invoke_result<F, detail::stored_t<T>>>::type;
    auto pair = make_promise_pair<U>();
    const promise<U> p = pair.first;
    detail::future_state<T>* s = std::exchange(s_, nullptr);
    spawn([s, p, f] {
      future<T> self(s);
      if constexpr (std::is_void_v<T>) {
        self.wait();
        if constexpr (std::is_void_v<U>) {
          f();
          p.set_value();
        } else {
          p.set_value(f());
        }
      } else {
        if constexpr (std::is_void_v<U>) {
          f(self.get());
          p.set_value();
        } else {
          p.set_value(f(self.get()));
        }
      }
    });
    return std::move(pair.second);
  }

 private:
  template <class U>
  friend class promise;
  template <class U>
  friend std::pair<promise<U>, future<U>> make_promise_pair();
  explicit future(detail::future_state<T>* s) : s_(s) {}
  void reset() noexcept {
    if (s_ != nullptr) s_->release();
    s_ = nullptr;
  }

  detail::future_state<T>* s_ = nullptr;
};

template <class T>
class promise {
 public:
  promise() = default;

  /// Delivers the value; wakes waiters. Any core of the process, inside
  /// run(); off the home core this costs one message. Call exactly once: a
  /// second call ends the job (named at the home core).
  template <class V = detail::stored_t<T>>
  void set_value(const V& v = V{}) const {
    SHOAL_CHECK_ON_CORE("shoal::promise::set_value");
    SHOAL_CHECK(s_ != nullptr, "set_value on an empty (default-constructed) promise");
    detail::future_state<T>* s = s_;
    const detail::stored_t<T> value = v;
    const std::uint32_t serial = serial_;
    if (mycore() == core_) {
      s->fulfil(value, serial);
    } else {
      send(core_, [s, value, serial] { s->fulfil(value, serial); });
    }
  }

  int home() const noexcept { return core_; }

 private:
  template <class U>
  friend std::pair<promise<U>, future<U>> make_promise_pair();
  promise(detail::future_state<T>* s, int core) : s_(s), core_(core), serial_(s->serial) {}

  detail::future_state<T>* s_ = nullptr;
  int core_ = -1;
  std::uint32_t serial_ = 0;
};

/// A connected promise and future whose state lives on the calling core.
template <class T>
std::pair<promise<T>, future<T>> make_promise_pair() {
  auto* s = detail::future_state<T>::create();
  return {promise<T>(s, mycore()), future<T>(s)};
}

/// A future that is already ready.
template <class T>
future<T> make_ready_future(const detail::stored_t<T>& v) {
  auto pair = make_promise_pair<T>();
  pair.first.set_value(v);
  return std::move(pair.second);
}

}  // namespace shoal
