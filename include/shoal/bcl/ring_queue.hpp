// The handle that BCL's queues (fast_queue, circular_queue,
// checksum_queue) share: a ring of `Elem` on one host core, its counters in
// the 64 bytes before the ring, and the methods that do the same in each
// queue (make's checks and allocation, the delegate path's short runs,
// size, resize, migrate, describe, destroy and the checks that name the
// queue in errors). Each queue derives from it (CRTP) and re-declares the
// public methods it takes from here with their contracts and costs, so its
// header still states every one of them.
//
// Q provides: `kind` (its name in messages, "fast_queue"), push_owned and
// pop_owned (a short run on the host, bcl/queue_path.hpp), and the counter
// indices `size_top` and `size_bottom` (size() = counter top - counter
// bottom). Counter i is the i-th u64 of the 64 bytes before the ring.
#pragma once

#include "shoal/bcl/path.hpp"
#include "shoal/bcl/queue_path.hpp"
#include "shoal/bcl/ring.hpp"
#include "shoal/delegate.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace shoal::bcl::queue_detail {

/// The shared part of queue Q of T, whose ring holds Elem (T, or a slot
/// around it). Members are Q's handle: copy it to every core that uses it.
template <class Q, class T, class Elem = T>
class ring_queue {
 public:
  bool valid() const noexcept { return static_cast<bool>(data_); }
  int host() const noexcept { return host_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  bcl::path path() const noexcept { return path_; }

  std::uint64_t size() {
    check("size");
    if (path_ == bcl::path::delegate)
      return delegate::call(
          host_, [c = counter(0)] { return c.local()[Q::size_top] - c.local()[Q::size_bottom]; });
    return rget(counter(Q::size_top)) - rget(counter(Q::size_bottom));
  }

  void resize(std::uint64_t capacity) {
    check("resize");
    if (capacity == 0) shoal::detail::fatal_user(fmt::format("{}: resize to 0 elements", name()));
    shoal::detail::bcl_rebuild<Q, T>(derived(), "resize", host_, capacity);
  }
  void migrate(int host) {
    check("migrate");
    shoal::detail::bcl_rebuild<Q, T>(derived(), "migrate", host, capacity_);
  }
  std::string describe() const { return name(); }

  void destroy() {
    check("destroy");
    global_free(base_);
    derived() = Q();
  }

 protected:
  // A queue being made: the handle and what make() needs to finish it.
  struct made {
    Q q;
    shoal::detail::bcl_hosted_memory mem;
    path_mode mode;
  };
  // make()'s checks, then the allocation: 64 bytes of counters (left for
  // Q to clear) and `capacity` Elem on `host`.
  static made allocate(int host, std::uint64_t capacity) {
    SHOAL_CHECK_ON_CORE(make_api());
    const int n = cores();
    if (host < 0 || host >= n)
      shoal::detail::fatal_user(
          fmt::format("{}::make: host core {} is outside the job ({} cores)", Q::kind, host, n));
    if (capacity == 0)
      shoal::detail::fatal_user(fmt::format("{}::make: a capacity of 0 elements", Q::kind));
    made m;
    ring_queue& r = m.q;
    r.host_ = host;
    r.capacity_ = capacity;
    m.mode = path_setting();
    m.mem = shoal::detail::bcl_host_alloc(host, 8 + (capacity * sizeof(Elem) + 7) / 8, m.mode);
    r.base_ = m.mem.base;
    r.data_ = (m.mem.words + 8).template reinterpret<Elem>();
    return m;
  }
  // make()'s last step: the queue's path (bcl/path.hpp), comparing the
  // one-sided cost `onesided(op_costs)` of `what` against `delegates` D.
  template <class OneSided>
  void choose_path(const made& m, std::string_view what, std::string_view formula, int delegates,
                   const OneSided& onesided) {
    path_ = choose_container_path(m.mode, m.mem.probe, name(), what, formula, delegates, onesided);
  }

  // The delegate path's short runs (bcl/queue_path.hpp): whether a run of
  // n goes as one delegate, and that delegate for a push and for a pop.
  bool short_run(std::uint64_t n) const noexcept {
    if constexpr (shoal::detail::bcl_batch < T >> 0)
      return path_ == bcl::path::delegate && n <= shoal::detail::bcl_batch<T>;
    return false;
  }
  bool short_push(std::span<const T> vals) const {
    return shoal::detail::bcl_short_run<T>(derived(), vals, {}, [](const Q& q, const auto& b) {
             return q.push_owned(b.values(), b.n);
           }) == shoal::detail::bcl_owned::done;
  }
  bool short_pop(std::span<T> out) const {
    return shoal::detail::bcl_short_run<T>(derived(), {}, out, [](const Q& q, const auto& b) {
             auto r = b;
             r.status = q.pop_owned(r.values(), r.n);
             return r;
           }) == shoal::detail::bcl_owned::done;
  }

  global_ptr<std::uint64_t> counter(int i) const {
    return data_.template reinterpret<std::uint64_t>() - 8 + i;
  }

  std::string name() const {
    return fmt::format("{}(host core {}, capacity {})", Q::kind, host_, capacity_);
  }
  // The checks run on every push and pop: their failures out of line, so
  // that the checks inline into every caller.
  void check(const char* op) const {
    SHOAL_CHECK_ON_CORE(api());
    if (!valid()) [[unlikely]]
      destroyed(op);
  }
  void check_count(const char* op, std::uint64_t n) const {
    if (n > capacity_) [[unlikely]]
      over_capacity(op, n);
  }
  // check(op), and that the caller runs on the host's process.
  void check_local(const char* op) const {
    check(op);
    if (rank_of(host_) != myrank())
      shoal::detail::fatal_user(
          fmt::format("{}: {} called on rank {}, but the queue lives on rank {}; use pop()", name(),
                      op, myrank(), rank_of(host_)));
  }

 private:
  // The handle's fields: Q reads and writes them as its own (friend Q).
  friend Q;
  global_ptr<Elem> data_;           // 2D: the host's capacity_ elements (counters 64 bytes before)
  global_ptr<std::uint64_t> base_;  // the allocation behind them
  std::uint64_t capacity_ = 0;
  int host_ = -1;
  bcl::path path_ = bcl::path::onesided;

  [[noreturn, gnu::cold, gnu::noinline]] static void destroyed(const char* op) {
    shoal::detail::fatal_user(fmt::format(
        "{}::{} on a queue that was destroyed or never made (default-constructed)", Q::kind, op));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void over_capacity(const char* op, std::uint64_t n) const {
    shoal::detail::fatal_user(
        fmt::format("{}: {} of {} elements, more than the capacity", name(), op, n));
  }
  Q& derived() noexcept { return static_cast<Q&>(*this); }
  const Q& derived() const noexcept { return static_cast<const Q&>(*this); }
  // "shoal::bcl::<kind>" and "shoal::bcl::<kind>::make" for
  // SHOAL_CHECK_ON_CORE, which reads them only when it fails.
  static const char* api() {
    static const std::string s = fmt::format("shoal::bcl::{}", Q::kind);
    return s.c_str();
  }
  static const char* make_api() {
    static const std::string s = fmt::format("shoal::bcl::{}::make", Q::kind);
    return s.c_str();
  }
};

}  // namespace shoal::bcl::queue_detail
