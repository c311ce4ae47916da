// Message reductions (Active Pebbles 3.5): values sent to the same target
// are combined at the source before they travel, so a handler sees one value
// where the program sent several.
//
//   auto ch = shoal::make_target_channel<std::int64_t>(dist, on_distance,
//                                                      {.cache_slots = 4096},
//                                                      shoal::reduction::min{});
//
// A reduction is a function object r(T& staged, const T& incoming) that folds
// `incoming` into the value already staged for the same target:
//   reduction::drop_duplicates  keeps the first value, drops the later ones (for
//                            handlers where a repeat is a no-op: a visited
//                            mark, a set insert)
//   reduction::min, reduction::max keeps the least / greatest (operator<)
//   reduction::sum              adds (operator+=)
//   reduction::with(f)          staged = f(staged, incoming), a user operation
// Values for one target combine in the order the source core sent them, and
// which of them meet in the cache depends on timing (flushes, evictions), so
// the operation must be associative and commutative: the handler then sees a
// result that some grouping of the sent values gives. A user operation that
// declares `static constexpr bool associative = false;` is refused at
// compile time.
//
// Where and when. Each core keeps a direct-mapped cache per reducing channel
// (target_channel_options::cache_slots slots, rounded up to a power of two)
// of where its last value to each target sits in a batch not yet sent
// (detail/reduction_cache.hpp). A value whose target hits a staged value is
// folded into it and sends nothing; a miss (first value, a slot taken by
// another target, or a batch that already left) stages the value as usual.
// So reductions never delay a value: a batch leaves when it would have left
// without them, and end_phase / drain cover every value. Values to targets
// of the sending core are short-circuited (target_channel.hpp) and never
// reduced. Cost per send: one cache probe, one check of the staged batch.
//
// Statistics: target_channel::reduction_stats() (this process's cores):
// lookups (values that went through the cache) and hits (values folded
// into another, i.e. messages removed); hit_rate() = hits / lookups.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace shoal {

namespace reduction {

/// No reduction (the default of target_channel).
struct none {};

/// Keeps the first value staged for a target; drops the later ones.
struct drop_duplicates {
  template <class T>
  void operator()(T&, const T&) const noexcept {}
};

/// Keeps the least value.
struct min {
  template <class T>
  void operator()(T& staged, const T& incoming) const noexcept {
    if (incoming < staged) staged = incoming;
  }
  /// The value min leaves unchanged (arithmetic T).
  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr T identity() noexcept {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
};

/// Keeps the greatest value.
struct max {
  template <class T>
  void operator()(T& staged, const T& incoming) const noexcept {
    if (staged < incoming) staged = incoming;
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr T identity() noexcept {
    if constexpr (std::numeric_limits<T>::has_infinity) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
};

/// Adds the values.
struct sum {
  template <class T>
  void operator()(T& staged, const T& incoming) const noexcept {
    staged += incoming;
  }
  template <class T>
  requires std::is_arithmetic_v<T>
  static constexpr T identity() noexcept { return T{}; }
};

namespace detail {
/// False when R declares `associative = false`, else true.
template <class R>
constexpr bool declared_associative() {
  if constexpr (requires { R::associative; }) {
    return static_cast<bool>(R::associative);
  } else {
    return true;
  }
}
}  // namespace detail

/// A user operation f(staged, incoming) -> combined, which must be
/// associative and commutative.
template <class F>
struct with_op {
  F f;
  static constexpr bool associative = detail::declared_associative<F>();
  template <class T>
  void operator()(T& staged, const T& incoming) const {
    staged = f(staged, incoming);
  }
};
template <class F>
with_op<F> with(F f) {
  return with_op<F>{f};
}

}  // namespace reduction

/// A reduction of values of T: trivially copyable, callable as
/// r(T& staged, const T& incoming). reduction::none is not one (it means none).
template <class R, class T>
concept reduction_like = std::is_trivially_copyable_v<R> &&
    std::invocable<const R&, T&, const T&> && !std::same_as<R, reduction::none>;

/// Whether R has an identity for T: R::identity<T>(), the value that
/// r(staged, identity) leaves unchanged (sum, min and max for arithmetic T;
/// a user reduction may declare one). target_channel_options::drop_identity
/// needs one.
template <class R, class T>
concept reduction_with_identity = requires {
  { R::template identity<T>() } -> std::convertible_to<T>;
};

/// Whether R declares itself non-associative (refused by target_channel).
template <class R>
inline constexpr bool declared_non_associative = !reduction::detail::declared_associative<R>();

/// Counts of one reducing channel on this process's cores.
struct reduction_stats {
  std::uint64_t lookups = 0;  ///< values that went through the source cache
  std::uint64_t hits = 0;     ///< values folded into a staged one: messages removed
  double hit_rate() const noexcept {
    return lookups == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(lookups);
  }
};

}  // namespace shoal
