// Object channels: typed channels for values with copy logic (std::string,
// std::vector, pairs, tuples, user types with a serializer; serialize.hpp).
//
//   auto ch = shoal::make_object_channel<std::string>(
//       [](const std::string& word) { ... });        // runs on the receiving core
//   ch.send(core, std::string("hello"));
//
// Each value travels as one length-prefixed record, [u32 n][n bytes written
// by serializer<T>::write], packed back to back in the channel's
// aggregation buffers (no padding); the receiving core rebuilds each value
// with serializer<T>::read and calls the handler with it. Cost over a typed
// channel (channel.hpp): 4 bytes per value, one size() and write() on the
// sender, one read() (and whatever it allocates) on the receiver. The typed
// channel's fast path is untouched: it is a different channel kind (the
// channel table marks these with value_bytes == 0, "variable-length
// records").
//
// Delivery, ordering, batching, back-pressure, phases (end_phase, drain)
// and close are those of channel.hpp: one stream per channel, messages from
// one core to one core in send order, handlers in handler context (no
// suspension). Completion: ch.end_phase() (SPMD), ch.drain() (one task), or
// shoal::barrier() / shoal::drain_messages(), which cover every stream.
//
// Flow control. make_object_channel<T>(handler, {.max_in_flight = n})
// bounds the records one core has unacknowledged to one destination core:
// a task sending its n+1-th record to a core flushes, then suspends (its
// core keeps handling what arrives) until the receiver acknowledges a
// handled batch (one control message per batch, only on bounded channels).
// The bound is in records, not bytes: since a record fits one aggregation
// buffer, a destination's backlog from one core is at most n records of at
// most a buffer each, whatever the values' lengths, so a flood of long
// strings into a slow receiver cannot exhaust its memory. Handlers cannot
// wait: their records count and may exceed the bound (as channel.hpp).
// Cost: one counter check per send on a bounded channel; none otherwise.
//
// Size limit: a record (4 + serialized bytes) must fit one aggregation
// buffer (--aggregation-bytes, see aggregator::capacity()); larger values are
// refused, not split: send() ends the job with a message naming the channel,
// the record's size and the buffer's. Split large values yourself (e.g.
// send a vector in pieces) or raise --aggregation-bytes.
#pragma once

#include "shoal/channel.hpp"
#include "shoal/closure.hpp"
#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/phase_barrier.hpp"
#include "shoal/serialize.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace shoal {

namespace detail {

/// Bytes of a record's length prefix.
inline constexpr std::uint32_t record_prefix_bytes = 4;

/// Why a record cannot be sent on stream `id`: no core, closed handle, too big.
[[noreturn, gnu::cold, gnu::noinline]] inline void fatal_record_send(const char* what,
                                                                     std::uint32_t id,
                                                                     std::size_t bytes) {
  if (tls_core < 0) fatal_outside_run(what);
  if (id == 0) fatal_user(fmt::format("{} on a default-constructed or closed handle", what));
  fatal_user(fmt::format(
      "{} (channel {}): a record of {} bytes (4-byte length and {} bytes of value) does "
      "not fit an aggregation buffer of {} bytes; values larger than a buffer are refused, "
      "not split (send smaller pieces or raise --aggregation-bytes)",
      what, id, bytes + record_prefix_bytes, bytes, tls_aggregator->capacity()));
}

/// Reserves one record of `bytes` value bytes to `core` on stream `id`,
/// writes its length prefix and returns where the value goes. `what` names
/// the caller in errors.
inline char* reserve_record(const char* what, std::uint32_t id, int core, std::size_t bytes) {
  if (__builtin_expect((id == 0) | (tls_core < 0), 0)) fatal_record_send(what, id, bytes);
  if (bytes + record_prefix_bytes > tls_aggregator->capacity()) [[unlikely]]
    fatal_record_send(what, id, bytes);
  const auto n = static_cast<std::uint32_t>(bytes);
  char* p = tls_aggregator->reserve(id, core, n + record_prefix_bytes);
  std::memcpy(p, &n, record_prefix_bytes);
  return p + record_prefix_bytes;
}

/// Writes v as one record to `core` on stream `id`, checking that the
/// serializer wrote what its size() promised. `bound` != 0: the channel's
/// max_in_flight (flow control, counted before the record is staged).
template <serializable T>
void send_record(const char* what, std::uint32_t id, int core, const T& v,
                 std::uint32_t bound = 0) {
  const std::size_t n = serializer<T>::size(v);
  if (bound != 0) [[unlikely]] {
    if (__builtin_expect((id == 0) | (tls_core < 0), 0)) fatal_record_send(what, id, n);
    tls_aggregator->flow_reserve(id, core, bound);
  }
  char* p = reserve_record(what, id, core, n);
  byte_writer w(p);
  serializer<T>::write(w, v);
  SHOAL_CHECK(w.position() == p + n,
              "{}: serializer wrote {} bytes, but its size() said {} (they must agree)", what,
              w.position() - p, n);
}

/// The receive loop of a variable-length-record channel: calls
/// h(byte_reader&) once per record, each reader bounded by its record.
/// Records must stay inside the buffer (capacity bytes from data).
template <class H>
void deliver_records(const H& h, const char* data, std::uint32_t count) {
  const char* const limit = data + tls_aggregator->capacity();
  const char* p = data;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t n;
    SHOAL_CHECK(limit - p >= static_cast<std::ptrdiff_t>(record_prefix_bytes),
                "a variable-length record batch overruns its buffer at record {} of {}", i, count);
    std::memcpy(&n, p, record_prefix_bytes);
    p += record_prefix_bytes;
    SHOAL_CHECK(static_cast<std::uint64_t>(limit - p) >= n,
                "a variable-length record of {} bytes overruns its buffer (record {} of {})", n, i,
                count);
    byte_reader r(p, p + n);
    h(r);
    p += n;
  }
}

/// Opens a variable-length-record channel whose handler state is `h`
/// (copied as bytes to every core and process), called as h(byte_reader&)
/// for each record. Returns the stream id. Blocking like make_channel.
/// `coalesce_bytes` (at most one aggregation buffer; 0: a whole buffer) is
/// the batch size: a batch leaves once it holds that many bytes.
/// `max_in_flight` (0: none) enables flow control: the receiver
/// acknowledges each handled batch (send_record counts against it).
template <class H>
std::uint32_t open_record_channel(const H& h, std::uint32_t coalesce_bytes = 0,
                                  std::uint32_t max_in_flight = 0) {
  static_assert(copyable_as_bytes<H> && sizeof(H) <= max_channel_handler_bytes,
                "a record channel's handler must be copyable as bytes and at most 64 bytes");
  SHOAL_CHECK_ON_CORE("shoal::make_object_channel");
  channel_entry e;
  std::memcpy(e.state, static_cast<const void*>(&h), sizeof(H));
  e.value_bytes = 0;  // variable-length records (aggregator.cpp skips the size check)
  SHOAL_CHECK(max_in_flight <= max_channel_bound,
              "shoal::make_object_channel: max_in_flight {} is above the largest bound, {}",
              max_in_flight, max_channel_bound);
  e.max_in_flight = max_in_flight;
  e.coalesce_bytes = coalesce_bytes;
  e.deliver = [](const void* state, const char* data, std::uint32_t count) {
    deliver_records(*static_cast<const H*>(state), data, count);
  };
  return open_channel(e);
}

/// The handler an object channel registers: reads one T, checks that the
/// record held exactly that, and calls the user's handler.
template <class T, class H>
struct object_record_handler {
  H user;
  void operator()(byte_reader& r) const {
    T v = serializer<T>::read(r);
    SHOAL_CHECK(r.left() == 0,
                "shoal::object_channel: serializer read left {} bytes of its record unread "
                "(write() and read() disagree)",
                r.left());
    user(static_cast<const T&>(v));
  }
};

}  // namespace detail

/// A handler of an object channel for T: callable as h(const T&), copyable
/// as bytes (replicated to every core and process), at most 64 bytes.
template <class H, class T>
concept object_channel_handler_like = std::invocable<const H&, const T&> && copyable_as_bytes<H> &&
                                      sizeof(H) <= max_channel_handler_bytes;

/// Options of make_object_channel.
struct object_channel_options {
  /// Records one core may have unacknowledged to one destination core,
  /// below 2^24; 0 (the default): no bound beyond the aggregation buffers'
  /// back-pressure.
  std::uint32_t max_in_flight = 0;
};

template <serializable T>
class object_channel {
 public:
  object_channel() = default;

  /// Serializes `value` into a record to global core `core`, whose handler
  /// runs there with the rebuilt value. Returns at once (may suspend a task
  /// under back-pressure, like channel::send). A record larger than an
  /// aggregation buffer, a closed or default handle, or a call off a shoal
  /// core ends the job with a message.
  void send(int core, const T& value) const {
    detail::send_record("shoal::object_channel::send", id_, core, value, bound_);
  }

  /// As channel::close: once, from a task, when nothing is in flight.
  void close() {
    if (id_ != 0) detail::close_channel(id_);
    id_ = 0;
    bound_ = 0;
  }
  /// As channel::end_phase (collective, SPMD).
  void end_phase() const { detail::end_channel_phase(id_); }
  /// As channel::drain (global view, one task).
  void drain() const { detail::drain_channel(id_); }

  std::uint32_t id() const noexcept { return id_; }
  /// The flow-control bound (object_channel_options::max_in_flight).
  std::uint32_t max_in_flight() const noexcept { return bound_; }
  explicit operator bool() const noexcept { return id_ != 0; }

 private:
  template <serializable U, class H>
  requires object_channel_handler_like<H, U>
  friend object_channel<U> make_object_channel(const H& handler,
                                               const object_channel_options& options);
  object_channel(std::uint32_t id, std::uint32_t bound) : id_(id), bound_(bound) {}
  std::uint32_t id_ = 0;
  std::uint32_t bound_ = 0;
};

/// Opens an object channel for values of T handled by `handler` on every
/// core of the job. Same rules as make_channel (call from a task; blocks
/// until every process has it). A bound above 2^24 - 1 ends the job naming
/// it.
template <serializable T, class H>
requires object_channel_handler_like<H, T> object_channel<T> make_object_channel(
    const H& handler, const object_channel_options& options = {}) {
  return object_channel<T>(detail::open_record_channel(detail::object_record_handler<T, H>{handler},
                                                       0, options.max_in_flight),
                           options.max_in_flight);
}

}  // namespace shoal
