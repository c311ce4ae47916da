// Typed channels (Active Pebbles' typed active messages): a channel binds a
// payload type T to a handler. Buffers of a channel hold bare T values, one
// header per batch, and the receiving core applies the handler to each value
// in a tight, inlined loop: the fast path for fine-grained traffic.
//
//   auto ch = shoal::make_channel<std::uint64_t>([](std::uint64_t v) { ... });
//   ch.send(core, 42);   // handler(42) runs on `core`, batched with others
//
// Delivery, ordering, flushing and back-pressure are those of send()
// (message.hpp). The handler runs in handler context: no suspension.
//
// Runs. A sender that holds several values for one core calls
// ch.send_run(core, std::span<const T>(values)): exactly n sends' meaning,
// at one reserve and one memcpy per batch the run touches instead of one
// per value (see send_run).
//
// Floods from a computing core. A task may send on a channel in a loop
// without a window of its own: the sending core keeps receiving. Once it
// has handed on a few batches (aggregator.hpp's poll_after_batches, 8)
// since it last polled, the send that starts its next batch yields once
// through the scheduler, which handles what has arrived (at most 16
// batches a poll, again at the next switch when more wait) and drives the
// network; the task then goes on. So a flood between computing cores stays
// in step, the receivers' handlers run while the senders send, and what
// bounds a sender beyond that is the buffer pool's back-pressure (or
// max_in_flight below, when the program needs a bound per destination).
//
// Phases (bale's convey_advance). SPMD programs end a phase with
// ch.end_phase() on one task per core: it returns on every core once every
// core has called it and every value sent on ch before the last call, and
// every value that handlers sent on ch in response (cascades on the same
// channel), has been handled. Phases repeat (a BFS level loop); values sent
// after a core's end_phase returns belong to the next phase, and their
// handlers may run on cores still waiting in this one. Global-view programs
// call ch.drain() from any one task: it returns once every value sent on ch
// before the call (by tasks that finished or sent before it), and its
// cascades on ch, has been handled.
//
// Fences (per sender, local view; not collective). f = ch.fence() sends what
// this core has staged on ch and returns a channel_fence (channel_fence.hpp):
// f.wait() suspends the task, f.ready() tests, until every value this core
// sent on ch before the call, to any core, has been handled (its handler
// returned on its home core). A handler that defers its work (a prefetching
// queue) finishes it by the end of its batch for "handled" to mean done.
// Several fences may be outstanding; they complete in the order made. Unlike
// end_phase and drain, a fence does not cover cascades: values that
// handlers send in response are not waited for. Cost, per core this core
// sent to on ch since its previous fence: a marker, which is the batch
// staged there (the fence's number rides in its header) or an empty batch
// when none is staged, and one control message back once it is handled;
// nothing per value (a destination is noted when a batch to it starts). A fence
// with no value sent since the previous one sends nothing and completes
// with it (at once when none is outstanding). Own core and cores of this
// process are fenced the same way, without the network. From a task only.
//
// What a phase covers: the channel's own stream only. Values a handler of
// channel A sends on channel B are sent (flushed) by the time A's phase
// ends, but not necessarily handled: end B's phase after A's (or call
// barrier(), which covers every stream) to wait for them too; a cascade that
// comes back to A through B is not covered by A's phase. Tasks (spawned by
// handlers or not) are never waited for.
//
// Flow control. make_channel(handler, {.max_in_flight = n}) bounds the
// values one core has in flight to one destination core on the channel: a
// task sending its n+1-th unacknowledged value to a core flushes and
// suspends until the receiver acknowledges a batch (one control message per
// handled batch, only on such channels). Handlers are never held back (they
// cannot suspend); their values count and may exceed the bound.
//
// Coalescing (Active Pebbles 3.3). make_channel(handler, {.coalesce_values =
// k}) makes the channel's batches leave once they hold k values (chosen at
// run time; at most what one aggregation buffer holds, the default): small
// k trades message rate for latency on one channel without touching the
// others. ch.flush() sends what this core has staged on the channel now,
// without waiting for it to be handled (end_phase and drain flush by
// themselves).
#pragma once

#include "shoal/channel_fence.hpp"
#include "shoal/closure.hpp"
#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/phase_barrier.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>

namespace shoal {

namespace detail {
/// Names why channel::send on handle `id` cannot go: no shoal core on this
/// thread, or a default-constructed or closed handle.
[[noreturn, gnu::cold, gnu::noinline]] inline void fatal_channel_send(
    std::uint32_t id, const char* what = "shoal::channel::send") {
  if (tls_core < 0) fatal_outside_run(what);
  fatal_user(fmt::format("{} on a default-constructed or closed channel handle (id {})", what, id));
}
}  // namespace detail

/// A payload type a channel can carry: trivially copyable, at most 8-byte
/// aligned.
template <class T>
concept channel_value_like = std::is_trivially_copyable_v<T> && alignof(T) <= 8;

/// A channel handler for values of T: callable as h(const T&), trivially
/// copyable as bytes (it is replicated to every core and process), at most
/// max_channel_handler_bytes (64). A handler that also has
/// `void deliver_run(const T* values, std::uint32_t n) const` is handed
/// each batch whole through it instead (same handler context; it must
/// handle the n values in order), so that per-batch work is done once.
template <class H, class T>
concept channel_handler_like = std::invocable<const H&, const T&> && copyable_as_bytes<H> &&
                               sizeof(H) <= max_channel_handler_bytes;

/// Options of make_channel.
struct channel_options {
  /// Values one core may have unacknowledged to one destination core, below
  /// 2^24; 0 (the default): no bound beyond the aggregation buffers'
  /// back-pressure.
  std::uint32_t max_in_flight = 0;
  /// Values per batch (the coalescing size): a batch of the channel leaves
  /// once it holds this many. 0 (the default): as many as one aggregation
  /// buffer (--aggregation-bytes) holds; more than that is an error.
  std::uint32_t coalesce_values = 0;
};
inline constexpr std::uint32_t max_channel_bound = (1U << 24) - 1;

template <channel_value_like T>
class channel;

namespace detail {
/// Hands this core's staged batches of stream `id` on: to this process's
/// cores' queues, and those for other processes to the transport at once
/// (as shoal::flush does for every stream: message.hpp's push_staged), so
/// that a core that computes after flush() does not hold them until its
/// next poll (src/comm/channel_registry.cpp).
void push_stream(std::uint32_t id);

/// make_channel with message reductions' per-core caches of `cache_slots`
/// slots (0: none; reduction.hpp).
template <class T, class H>
channel<T> open_typed_channel(const H& handler, const channel_options& options,
                              std::uint32_t cache_slots);
}  // namespace detail

template <channel_value_like T>
class channel {
 public:
  channel() = default;

  /// Sends `value` to global core `core`; the handler runs there. Returns
  /// at once (may suspend a task under back-pressure, and yields it once
  /// per few batches sent so the core polls: see Floods above). Any core, inside
  /// run(); a send on a default-constructed or closed handle ends the job.
  void send(int core, const T& value) const {
    // A thread that is no shoal core has no aggregator (set with tls_core).
    detail::aggregator* agg = detail::tls_aggregator;
    if (__builtin_expect((id() == 0) | (agg == nullptr), 0)) detail::fatal_channel_send(id());
    if (bits_ >= id_span) [[unlikely]] {
      agg->flow_reserve(id(), core, max_in_flight());  // may suspend: read agg again
      agg = detail::tls_aggregator;
    }
    char* p = agg->reserve(id(), core, static_cast<std::uint32_t>(sizeof(T)));
    std::memcpy(p, &value, sizeof(T));
  }

  /// Sends the values of `run`, in order, to global core `core`: the same as
  /// send(core, v) for each v of `run` in turn (the same ordering with the
  /// sends before and after it, phases, fences, flushes, back-pressure and
  /// yields once per few batches, max_in_flight bound), but each piece of
  /// the run that fits the batch staged for `core` is reserved and copied
  /// at once: one reserve and one memcpy per batch it touches (a batch of
  /// the channel's size, coalesce_values or --aggregation-bytes, holds
  /// capacity / sizeof(T) values), instead of one per value. On a bounded
  /// channel (max_in_flight) a piece is also at most the room the bound
  /// leaves; once none is left the task flushes and suspends as send does.
  /// The receiving side is unchanged: the handler sees the values one by
  /// one, or whole batches through deliver_run. An empty run sends nothing.
  /// Any core, inside run(), from a task or a handler; a default-constructed
  /// or closed handle ends the job naming send_run, even with an empty run.
  void send_run(int core, std::span<const T> run) const {
    detail::aggregator* agg = detail::tls_aggregator;
    if (__builtin_expect((id() == 0) | (agg == nullptr), 0))
      detail::fatal_channel_send(id(), "shoal::channel::send_run");
    const T* next = run.data();
    std::size_t left = run.size();
    while (left != 0) {
      auto want = static_cast<std::uint32_t>(std::min<std::size_t>(left, max_run_piece));
      if (bits_ >= id_span) [[unlikely]] {
        want = agg->flow_reserve_run(id(), core, max_in_flight(), want);  // may suspend
        agg = detail::tls_aggregator;
      }
      left -= want;
      while (want != 0) {
        const detail::aggregator::run_room room =
            agg->reserve_run(id(), core, static_cast<std::uint32_t>(sizeof(T)), want);
        agg = detail::tls_aggregator;  // reserve_run may suspend: read agg again
        std::memcpy(room.at, next, std::size_t{room.values} * sizeof(T));
        next += room.values;
        want -= room.values;
      }
    }
  }

  /// Removes the channel from every process and releases its id. Call
  /// once, from a task, when no message of it is in flight (after the work
  /// using it has been waited for). Blocking in a job of several processes.
  void close() {
    if (id() != 0) detail::close_channel(id());
    bits_ = 0;
  }

  /// Collective (one task per core, SPMD): this core is done sending on the
  /// channel for this phase; returns once every core is and every value of
  /// the phase, cascades on this channel included, has been handled (see
  /// the header comment). Suspends (watchdog: "channel <id> phase #n").
  /// Costs one barrier's control messages plus a wave per round of
  /// cascades still in flight. A closed or default channel ends the job
  /// with a message.
  void end_phase() const { detail::end_channel_phase(id()); }

  /// Depth-limited termination (Active Pebbles 3.6.1), collective like
  /// end_phase: for a phase whose values go at most `depth` deep (values sent
  /// by tasks are depth 1, values a handler of a depth-k value sends on this
  /// channel depth k + 1), returns once every value of the phase has been
  /// handled, in `depth` rounds of one marker per pair of cores and no
  /// counting. A handler sending at depth `depth` + 1 ends the job with a
  /// message naming the channel and the depth (found on the sending core).
  /// Other tasks must not send on the channel while one waits here.
  /// Suspends (watchdog: "channel <id> phase"). Costs depth x P markers per
  /// core (empty batches).
  void end_phase_depth(int depth) const { detail::end_channel_phase_depth(id(), depth); }

  /// Global view, any one task: returns once every value sent on the
  /// channel before the call, and its cascades on it, has been handled.
  /// Suspends (watchdog: "channel <id> drain"); at least two waves of
  /// P + P*C + P control messages. Not collective.
  void drain() const { detail::drain_channel(id()); }

  /// Per-sender fence (see Fences above): sends this core's staged values
  /// and returns a fence that completes once every value this core sent on
  /// the channel before the call has been handled (cascades excluded). From
  /// a task; returns at once (an empty marker may wait for a free buffer
  /// like a send). Costs one marker per core sent to since the previous
  /// fence (its staged batch, else an empty one) and one acknowledgement
  /// back from each. A closed or default channel, or a
  /// call from a handler, ends the job with a message.
  [[nodiscard]] channel_fence fence() const { return detail::make_channel_fence(id()); }

  /// Sends the values this core has staged on the channel now (every
  /// destination): on return they are in their cores' queues or handed to
  /// the transport. Returns at once; does not wait for them to be handled.
  /// Any core, from a task or a handler; costs one pass over the batches
  /// this core has staged.
  void flush() const {
    if (__builtin_expect((id() == 0) | (detail::tls_core < 0), 0))
      detail::fatal_channel_send(id(), "shoal::channel::flush");
    detail::push_stream(id());
  }

  /// The flow-control bound (0: none).
  std::uint32_t max_in_flight() const noexcept { return bits_ / id_span; }

  std::uint32_t id() const noexcept { return bits_ % id_span; }
  explicit operator bool() const noexcept { return id() != 0; }

 private:
  template <class U, class H>
  friend channel<U> detail::open_typed_channel(const H& handler, const channel_options& options,
                                               std::uint32_t cache_slots);

  // Values send_run takes per round (a batch's count is 32-bit).
  static constexpr std::size_t max_run_piece = std::size_t{1} << 30;

  // The handle stays 4 bytes (closures capture it): the id in the low 8
  // bits, the flow-control bound above.
  static constexpr std::uint32_t id_span = detail::max_streams;
  static_assert(detail::max_streams == 256);
  channel(std::uint32_t id, std::uint32_t bound) : bits_(id + bound * id_span) {}
  std::uint32_t bits_ = 0;
};

/// Opens a channel for values of T handled by `handler` on every core of the
/// job. Call from a task; in a job of several processes it blocks until
/// every process has the channel (one round trip per process), so any core
/// may send on it as soon as it returns. The returned handle is small and
/// trivially copyable, so closures and other cores (and processes) may use it.
/// `options.max_in_flight` bounds the values in flight per (source core,
/// destination core) pair (see Flow control above).
template <channel_value_like T, class H>
requires channel_handler_like<H, T> channel<T> make_channel(const H& handler,
                                                            const channel_options& options = {}) {
  return detail::open_typed_channel<T>(handler, options, 0);
}

namespace detail {
template <class T, class H>
channel<T> open_typed_channel(const H& handler, const channel_options& options,
                              std::uint32_t cache_slots) {
  SHOAL_CHECK_ON_CORE("shoal::make_channel");
  detail::channel_entry e;
  std::memcpy(e.state, static_cast<const void*>(&handler), sizeof(H));
  e.value_bytes = sizeof(T);
  SHOAL_CHECK(options.max_in_flight <= max_channel_bound,
              "make_channel: max_in_flight {} is above the largest bound, {}",
              options.max_in_flight, max_channel_bound);
  e.max_in_flight = options.max_in_flight;
  const std::uint64_t batch = std::uint64_t{options.coalesce_values} * sizeof(T);
  SHOAL_CHECK(batch <= detail::tls_aggregator->capacity(),
              "make_channel: coalesce_values {} ({} bytes of {}-byte values) does not fit an "
              "aggregation buffer of {} bytes; lower it or raise --aggregation-bytes",
              options.coalesce_values, batch, sizeof(T), detail::tls_aggregator->capacity());
  e.coalesce_bytes = static_cast<std::uint32_t>(batch);
  e.deliver = [](const void* state, const char* data, std::uint32_t count) {
    const H& h = *static_cast<const H*>(state);
    // Values sit at multiples of sizeof(T) from a 64-byte aligned start,
    // so each is suitably aligned for T.
    const T* values = std::launder(reinterpret_cast<const T*>(data));
    if constexpr (requires { h.deliver_run(values, count); }) {
      h.deliver_run(values, count);  // a receiver that takes the batch whole
    } else {
      for (std::uint32_t i = 0; i < count; ++i) h(values[i]);
    }
  };
  e.cache_slots = cache_slots;
  return channel<T>(open_channel(e), options.max_in_flight);
}
}  // namespace detail

}  // namespace shoal
