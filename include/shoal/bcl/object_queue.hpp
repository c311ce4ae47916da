// A BCL queue of T that is not trivially copyable (std::string,
// std::vector<U>, a type with a shoal::serializer): BCL's object containers
// (thesis section 3.3) on any of the queues. fast_queue.hpp,
// circular_queue.hpp and checksum_queue.hpp each specialise their queue for
// serialised T on object_queue; use shoal::bcl::fast_queue<std::string>,
// circular_queue<std::vector<float>>, checksum_queue<my_record> as any queue.
//
//   auto q = shoal::bcl::circular_queue<std::string>::make(/*host=*/3, /*capacity=*/1024,
//                                                          /*arena_bytes_per_core=*/8 << 20);
//   q.push("a line of any length");     // any core: the bytes into ITS arena part, then
//                                       // a serial_ptr pushed as circular_queue<serial_ptr>
//   std::string s; if (q.pop(s)) ...    // a serial_ptr popped, then its bytes read
//
// The ring is the same queue of serial_ptrs (bcl/object.hpp: a 2D pointer to
// the bytes and their length), with its rules (fast_queue's phases,
// circular_queue's promises, passed through), its path (bcl/path.hpp) and
// its full and empty; the bytes live in an arena allocated with the queue,
// arena_bytes_per_core on every core, bump-allocated by the pushing core in
// its own part and complete before the pointer is pushed (the push orders
// them), so a pop reads whole values.
//
// Space: the arena is never reclaimed before destroy(): every push takes
// its value's serialised bytes (rounded up to 8) of the pushing core's part
// for the queue's lifetime (a push refused as full gives them back, unless
// another task of the same core pushed meanwhile). A queue therefore
// carries at most arena_bytes_per_core bytes per pushing core in all;
// arena_bytes_left() says what the calling core has left.
// resize and migrate move the pointers only (the bytes stay where they are).
// Not offered for serialised T: fast_queue's local_nonatomic_pop of a span
// and local_nonatomic_drain (they hand out or copy elements in place).
//
// Costs: those of the queue (its header) plus, per value of n serialised
// bytes, s(n) for a push (+ W(n) + F under rma) and R(n) + s(n) for a pop
// (local_nonatomic_pop: its R(n) is a one-sided read too); make also sends a
// delegate to every core (each zeroes its arena part's counter). The ring's
// elements are 16 bytes: 8 travel in one delegate on the delegate path.
//
// Errors: the queue's, and a value that does not fit the pushing core's
// arena part: the job ends (status 2) naming the queue and
// arena_bytes_per_core, before the ring is touched.
#pragma once

#include "shoal/bcl/object.hpp"
#include "shoal/delegate.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace shoal::bcl {

/// The shared part of Q<T> for serialised T: `Ring` is Q<serial_ptr>.
/// Q derives from it (CRTP: make() returns a Q).
template <class Q, class Ring, serial_object T>
class object_queue {
 public:
  /// A queue of `capacity` values hosted on core `host`, and an arena of
  /// `arena_bytes_per_core` on every core for their bytes.
  static Q make(int host, std::uint64_t capacity,
                std::uint64_t arena_bytes_per_core = default_arena_bytes_per_core) {
    Q q;
    object_queue& o = q;
    o.ring_ = Ring::make(host, capacity);
    o.arena_ = object_arena::make(arena_bytes_per_core, o.ring_.describe());
    for (int c = 0; c < cores(); ++c)
      delegate::call(
          c, [a = o.arena_, c, arena_bytes_per_core] { a.reset_part(c, arena_bytes_per_core); });
    return q;
  }

  bool valid() const noexcept { return ring_.valid(); }
  int host() const noexcept { return ring_.host(); }
  std::uint64_t capacity() const noexcept { return ring_.capacity(); }
  std::string describe() const { return ring_.describe(); }
  /// The ring's path (bcl/path.hpp).
  bcl::path path() const noexcept { return ring_.path(); }

  /// Appends v; false when full (v's bytes are given back unless another
  /// push of this core came in between). `promise`: the ring's, if it has any.
  template <class... Promise>
  bool push(const T& v, Promise... promise) {
    check("push");
    const serial_ptr s = arena_.put(v, describe());
    if (ring_.push(s, promise...)) return true;
    arena_.unput(s);
    return false;
  }
  /// Appends every value in order, contiguously; false (nothing pushed)
  /// when they do not fit.
  template <class... Promise>
  bool push(std::span<const T> vals, Promise... promise) {
    check("push");
    std::vector<serial_ptr> s;
    s.reserve(vals.size());
    for (const T& v : vals) s.push_back(arena_.put(v, describe()));
    if (ring_.push(std::span<const serial_ptr>(s), promise...)) return true;
    for (std::size_t i = s.size(); i-- > 0;)
      if (!arena_.unput(s[i])) break;
    return false;
  }

  /// Takes the oldest value into v; false when empty.
  template <class... Promise>
  bool pop(T& v, Promise... promise) {
    serial_ptr s;
    if (!ring_.pop(s, promise...)) return false;
    v = object_arena::get<T>(s, describe());
    return true;
  }
  /// Takes the out.size() oldest values, in order; false (nothing popped)
  /// when fewer are there.
  template <class... Promise>
  bool pop(std::span<T> out, Promise... promise) {
    std::vector<serial_ptr> s(out.size());
    if (!ring_.pop(std::span<serial_ptr>(s), promise...)) return false;
    for (std::size_t i = 0; i < s.size(); ++i) out[i] = object_arena::get<T>(s[i], describe());
    return true;
  }
  /// The ring's local_nonatomic_pop (where it has one), then the value's
  /// bytes are read.
  bool local_nonatomic_pop(T& v) requires requires(Ring r, serial_ptr s) {
    r.local_nonatomic_pop(s);
  }
  {
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

  /// Collective, as the ring's: the pointers move, the bytes stay.
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
          "{}::{} on a queue that was destroyed or never made (default-constructed)", Q::kind, op));
  }

  Ring ring_;
  object_arena arena_;
};

}  // namespace shoal::bcl
