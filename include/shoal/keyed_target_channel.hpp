// Keyed target channels: target channels (target_channel.hpp) whose target
// is a function of the value, so that records travel without a header.
//
//   struct word_of { std::uint64_t mask;
//     std::uint64_t operator()(const std::uint64_t& r) const { return r & mask; } };
//   auto ch = shoal::make_keyed_target_channel<std::uint64_t>(
//       dist, word_of{words - 1}, [](std::uint64_t local, const std::uint64_t& r) {
//         table[local] ^= r; }, {}, shoal::hypercube_routing{});
//   ch.send(r);   // handler(dist.locate(r & mask).local, r) on its owner
//
// A target_channel record carries its owner and local index (8 bytes) next
// to the value, so that routing hops need not ask the distribution. When
// the application's target is a function of the value (RandomAccess: the
// word an update goes to is the update's low bits), the channel can carry
// the value alone: the sender and every hop compute key(value), locate it
// in the distribution and pick the next hop from the owner. A record of an
// 8-byte value then costs 8 bytes per hop instead of 16: half the bytes
// on the network under every routing, at the price of one key and one
// locate per value per hop (a few instructions for the built-in
// distributions). Across hosts whose links are the bound (hypercube
// routing at P = 16 over 1 Gbit links), that is half the time on the wire
// (bench/results/pebbles.md).
//
// Everything else is target_channel's: batching, flush(), end_phase(),
// end_phase_depth() (each hop counts as one more level), drain(), flow
// control (max_in_flight), coalescing size, local targets short-circuited
// (handler run before send() returns, nested at most
// max_short_circuit_depth deep) and routing (routing.hpp), with the
// forwarded-value counts of local_route_stats().
//
// Not supported: reductions and combine-until-flush. A reduction folds two
// values into one, whose key need not be either target: the record would
// change target on the way. Use target_channel for those.
//
// Contract: key is pure (the same value gives the same target on every
// core and process: it travels as bytes, like the distribution and the
// handler), and the distribution maps every key the senders produce into
// the job. A key outside the distribution's range or mapped outside the
// job ends the job at the sender, naming the target and the distribution;
// hops do not check again.
#pragma once

#include "shoal/channel.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/target_path.hpp"
#include "shoal/distribution.hpp"
#include "shoal/routing.hpp"
#include "shoal/runtime.hpp"
#include "shoal/target_channel.hpp"

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace shoal {

/// A target key: the target id of a value, computed from the value alone;
/// trivially copyable (it travels to every core and process).
template <class K, class T>
concept target_key_like = std::is_trivially_copyable_v<K> && requires(const K& k, const T& v) {
  { k(v) } -> std::convertible_to<std::uint64_t>;
};

/// Options of make_keyed_target_channel (as target_channel_options).
struct keyed_target_channel_options {
  std::uint32_t max_in_flight = 0;    ///< As channel_options::max_in_flight.
  std::uint32_t coalesce_values = 0;  ///< As channel_options::coalesce_values.
  bool short_circuit = true;          ///< Values to own targets run the handler in send().
};

namespace detail {
/// Only make_keyed_target_channel builds an open keyed_target_channel.
struct keyed_channel_key {
  explicit keyed_channel_key() = default;
};
}  // namespace detail

template <channel_value_like T, distribution_like D, target_key_like<T> K,
          routing_like Route = direct_routing>
class keyed_target_channel {
 public:
  keyed_target_channel() = default;
  /// Use make_keyed_target_channel.
  keyed_target_channel(detail::keyed_channel_key, channel<T> ch, const D& dist, const K& key,
                       const Route& route, bool short_circuit)
      : ch_(ch), short_circuit_(short_circuit), dist_(dist), key_(key), route_(route) {}

  /// Sends `value` to target key(value): the handler runs on its owner
  /// with the target's local index. Returns at once (may suspend a task
  /// under back-pressure, like channel::send); a local target's handler
  /// has run when it returns. Any core, inside run(). Stages sizeof(T)
  /// bytes for the next hop.
  void send(const T& value) const {
    const std::uint64_t target = static_cast<std::uint64_t>(key_(value));
    const target_location at =
        check_target(dist_, target, cores(), "shoal::keyed_target_channel::send");
    if (short_circuit_ && at.core == detail::tls_core &&
        detail::tls_short_circuit_depth < max_short_circuit_depth) {
      run_here(value);
      return;
    }
    const std::uint32_t id = ch_.id();
    if (__builtin_expect((id == 0) | (detail::tls_core < 0), 0))
      detail::fatal_channel_send(id, "shoal::keyed_target_channel::send");
    detail::stage_plain(id, ch_.max_in_flight(), detail::next_core(route_, at.core), value);
  }

  /// As target_channel's (channel.hpp's) flush, end_phase, end_phase_depth
  /// (a routing hop counts as one more level), drain and close.
  void flush() const { ch_.flush(); }
  void end_phase() const { ch_.end_phase(); }
  void end_phase_depth(int depth) const { ch_.end_phase_depth(depth); }
  void drain() const { ch_.drain(); }
  void close() { ch_.close(); }

  const D& distribution() const noexcept { return dist_; }
  const K& key() const noexcept { return key_; }
  const Route& routing() const noexcept { return route_; }
  const channel<T>& underlying() const noexcept { return ch_; }
  std::uint32_t id() const noexcept { return ch_.id(); }
  explicit operator bool() const noexcept { return static_cast<bool>(ch_); }

  /// Values this process's cores forwarded at intermediate routing hops
  /// (zero with direct routing). Any thread; exact once the phase has ended.
  route_stats local_route_stats() const { return detail::forwarded_on(ch_.id()); }

 private:
  /// Runs the handler of a value for this core's own target, through the
  /// channel's deliver loop (which locates it again), nested one level.
  void run_here(const T& value) const {
    alignas(64) unsigned char one[sizeof(T)];
    std::memcpy(one, &value, sizeof(T));
    detail::deliver_here(ch_.id(), one, 1, "shoal::keyed_target_channel::send");
  }

  channel<T> ch_;
  bool short_circuit_ = true;
  D dist_{};
  K key_{};
  [[no_unique_address]] Route route_{};
};

/// Opens a keyed target channel: values of T go to target key(value) of
/// distribution `dist`, where `handler` (h(local index, value)) runs on the
/// owner core, routed between processes by `route` (routing.hpp). Call from
/// a task; collective across processes as make_channel (blocking, one round
/// trip per process). Every process gets the same distribution, key,
/// handler and routing (they travel as bytes, together at most 64 bytes).
template <channel_value_like T, distribution_like D, class K, routing_like Route = direct_routing,
          class H>
keyed_target_channel<T, D, K, Route> make_keyed_target_channel(
    const D& dist, const K& key, const H& handler, const keyed_target_channel_options& options = {},
    const Route& route = {}) {
  static_assert(target_key_like<K, T>,
                "a target key is trivially copyable and callable as k(const T& value), returning "
                "the value's target id (std::uint64_t)");
  static_assert(target_handler_like<H, T>,
                "a target handler is callable as h(std::uint64_t local_index, const T& value), "
                "trivially copyable and at most 64 bytes");
  using receiver = detail::keyed_receiver<T, D, K, H, Route>;
  static_assert(sizeof(receiver) <= max_channel_handler_bytes,
                "the distribution, key, handler and routing together exceed the 64 bytes a "
                "channel replicates to every core: capture less");
  channel_options co;
  co.max_in_flight = options.max_in_flight;
  co.coalesce_values = options.coalesce_values;
  // Routed channels keep per-core counters (forwarded values) in a cache
  // of one slot.
  const std::uint32_t slots = std::same_as<Route, direct_routing> ? 0 : 1;
  return keyed_target_channel<T, D, K, Route>(
      detail::keyed_channel_key{},
      detail::open_typed_channel<T>(receiver{dist, key, handler, route}, co, slots), dist, key,
      route, options.short_circuit);
}

}  // namespace shoal
