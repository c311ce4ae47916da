// circular_queue<T> for a T that is not trivially copyable (std::string,
// std::vector<U>, a type with a shoal::serializer): BCL's object queue
// (thesis section 3.3) on circular_queue.hpp. Included by it; use
// shoal::bcl::circular_queue<std::string> as any circular_queue.
//
//   auto q = shoal::bcl::circular_queue<std::string>::make(/*host=*/3, /*capacity=*/1024,
//                                                          /*arena_bytes_per_core=*/8 << 20);
//   q.push("a line of any length");     // any core: the bytes into ITS arena part, then
//                                       // a serial_ptr pushed as circular_queue<serial_ptr>
//   std::string s; if (q.pop(s)) ...    // a serial_ptr popped, then its bytes read
//
// The ring holds serial_ptrs (bcl/object.hpp: a 2D pointer to the bytes and
// their length); the bytes live in an arena allocated with the queue,
// arena_bytes_per_core on every core, bump-allocated by the pushing core in
// its own part and complete before the pointer is pushed (the push's
// publish orders them), so a pop reads whole values.
//
// Space: the arena is never reclaimed before destroy(): every push takes
// its value's serialised bytes (rounded up to 8) of the pushing core's part
// for the queue's lifetime (a push refused as full gives them back, unless
// another task of the same core pushed meanwhile). A queue therefore
// carries at most arena_bytes_per_core bytes per pushing core in all;
// arena_bytes_left() says what the calling core has left.
// resize and migrate move the pointers only (the bytes stay where they are).
//
// Costs: those of circular_queue (header) plus, per value of n serialised
// bytes, s(n) for a push (+ W(n) + F under rma) and R(n) + s(n) for a pop
// (local_nonatomic_pop: its R(n) is a one-sided read too); make also sends a
// delegate to every core (each zeroes its arena part's counter).
//
// Errors: circular_queue's, and a value that does not fit the pushing
// core's arena part: the job ends (status 2) naming the queue and
// arena_bytes_per_core, before the ring is touched.
#pragma once

#include "shoal/bcl/circular_queue.hpp"
#include "shoal/bcl/object.hpp"
#include "shoal/delegate.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace shoal::bcl {

template <serial_object T>
class circular_queue<T> {
  using ring = circular_queue<serial_ptr>;

 public:
  circular_queue() = default;

  /// A queue of `capacity` values hosted on core `host`, and an arena of
  /// `arena_bytes_per_core` on every core for their bytes.
  static circular_queue make(int host, std::uint64_t capacity,
                             std::uint64_t arena_bytes_per_core = default_arena_bytes_per_core) {
    circular_queue q;
    q.ring_ = ring::make(host, capacity);
    q.arena_ = object_arena::make(arena_bytes_per_core, q.ring_.describe());
    for (int c = 0; c < cores(); ++c)
      delegate::call(
          c, [a = q.arena_, c, arena_bytes_per_core] { a.reset_part(c, arena_bytes_per_core); });
    return q;
  }

  bool valid() const noexcept { return ring_.valid(); }
  int host() const noexcept { return ring_.host(); }
  std::uint64_t capacity() const noexcept { return ring_.capacity(); }
  std::string describe() const { return ring_.describe(); }

  /// Appends v; false when full (v's bytes are given back unless another
  /// push of this core came in between).
  bool push(const T& v, queue_promise p = queue_promise::push_pop) {
    check("push");
    const serial_ptr s = arena_.put(v, describe());
    if (ring_.push(s, p)) return true;
    arena_.unput(s);
    return false;
  }
  /// Appends every value in order, contiguously; false (nothing pushed)
  /// when they do not fit.
  bool push(std::span<const T> vals, queue_promise p = queue_promise::push_pop) {
    check("push");
    std::vector<serial_ptr> s;
    s.reserve(vals.size());
    for (const T& v : vals) s.push_back(arena_.put(v, describe()));
    if (ring_.push(std::span<const serial_ptr>(s), p)) return true;
    for (std::size_t i = s.size(); i-- > 0;)
      if (!arena_.unput(s[i])) break;
    return false;
  }

  /// Takes the oldest value into v; false when empty.
  bool pop(T& v, queue_promise p = queue_promise::push_pop) {
    serial_ptr s;
    if (!ring_.pop(s, p)) return false;
    v = object_arena::get<T>(s, describe());
    return true;
  }
  /// Takes the out.size() oldest values, in order; false (nothing popped)
  /// when fewer are published.
  bool pop(std::span<T> out, queue_promise p = queue_promise::push_pop) {
    std::vector<serial_ptr> s(out.size());
    if (!ring_.pop(std::span<serial_ptr>(s), p)) return false;
    for (std::size_t i = 0; i < s.size(); ++i) out[i] = object_arena::get<T>(s[i], describe());
    return true;
  }
  /// circular_queue::local_nonatomic_pop, then the value's bytes are read.
  bool local_nonatomic_pop(T& v) {
    serial_ptr s;
    if (!ring_.local_nonatomic_pop(s)) return false;
    v = object_arena::get<T>(s, describe());
    return true;
  }

  std::uint64_t size() { return ring_.size(); }
  /// Bytes left for values in the calling core's arena part.
  std::uint64_t arena_bytes_left() const {
    check("arena_bytes_left");
    return arena_.left();
  }

  /// Collective, as circular_queue's: the pointers move, the bytes stay.
  void resize(std::uint64_t capacity) { ring_.resize(capacity); }
  void migrate(int host) { ring_.migrate(host); }

  /// Frees the ring and the arena. Once, when no core uses the queue.
  void destroy() {
    check("destroy");
    ring_.destroy();
    arena_.destroy();
  }

 private:
  // The ring's own check names a destroyed queue; the arena needs one first.
  void check(const char* op) const {
    if (!valid())
      shoal::detail::fatal_user(fmt::format(
          "circular_queue::{} on a queue that was destroyed or never made (default-constructed)",
          op));
  }

  ring ring_;
  object_arena arena_;
};

}  // namespace shoal::bcl
