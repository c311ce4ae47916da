// shoal::queue<T>: UPC queues (Jose et al., PGAS 2011) on shoal's aggregated
// messages: one FIFO per core of the job; any core enqueues to any core's
// queue; only the owning core dequeues. The receiving side's mutual
// exclusion is the handler's (a core runs one handler or task at a time),
// so there is no lock and no per-sender buffer to poll.
//
//   auto q = shoal::queue<std::uint64_t>::create();          // one task
//   shoal::on_all_cores([q] {
//     q.enqueue(0, 42);                   // to core 0's queue
//     q.flush();                          // send what this core buffered
//     if (shoal::mycore() == 0)
//       while (auto v = q.dequeue(std::chrono::milliseconds(100))) { ... }
//   });
//   q.destroy();                          // one task, nothing in flight
//
// The paper's five operations:
//   create(options)  (upc_queue_create) from one task: opens the queue's
//       channel on every process (blocking like make_channel) and returns a
//       16-byte, trivially copyable handle to capture in closures.
//       create_collective(options): the same called by one task on every
//       core (SPMD); core 0 creates and every core gets its handle.
//       options.coalesce (default true) chooses the paper's coalescing:
//       on, an item waits in this core's bucket for the destination until
//       the bucket holds options.bucket_bytes (0: one aggregation buffer,
//       --aggregation-bytes) or flush() is called; off, every enqueue is
//       sent at once (one message per item).
//   enqueue(core, v) (upc_queue_enqueue) any task or handler, any core:
//       v is serialized (serialize.hpp: trivially copyable types, strings,
//       vectors, user types with a serializer) into one record of
//       4 + serialized bytes to core `core`, where the handler appends it
//       to that core's queue. To the calling core itself it is appended at
//       once, with no message. Returns at once (a task may suspend under
//       back-pressure, like channel::send).
//   dequeue(timeout) (blocking upc_queue_dequeue) a task on the owning core:
//       the oldest item of this core's queue; if the queue is empty, sends
//       what this core has staged (every stream: a reply it waits for may
//       depend on a request it staged), then yields, handling arriving
//       messages, until an item arrives (returned) or `timeout` has passed
//       (std::nullopt). Not from a handler (it would wait there).
//   try_dequeue() (non-blocking upc_queue_dequeue) a task or handler on the
//       owning core: the oldest item, or std::nullopt at once when empty.
//   flush() (upc_queue_flush) not collective: sends the items this core has
//       buffered for every destination of this queue now; they are in the
//       destinations' queues once handled there (the message is on its way,
//       not yet delivered, when flush() returns). Needed only with
//       coalescing; shoal also sends buffered items when the core goes idle
//       or the oldest is --flush-us old, so an item is never stuck, but only
//       flush() sends it at a time of the caller's choosing.
//   destroy() (upc_queue_destroy) from one task, once no enqueue is in
//       flight or to come: waits for what is in flight, closes the channel
//       and frees every core's queue (items never dequeued are dropped).
// Local: local_size() is the number of items waiting in this core's queue.
//
// Order: items from one core to one core are dequeued in the order they
// were enqueued (one stream per channel and pair of cores; an enqueue to
// oneself is appended at once, in call order). Items of different senders
// interleave in arrival order; there is no order between them.
//
// Completion: an item is in its destination's queue once shoal::barrier()
// (SPMD) or shoal::drain_messages() (one task) returns after its enqueue.
// A dequeue that times out proves nothing about items still in flight.
//
// Errors (each ends the job naming "shoal::queue #<id>"): a handle used
// after destroy() or in a later job, or default-constructed; an enqueue to a
// core outside the job; an item larger than an aggregation buffer (named
// with both sizes, object_channel.hpp); a blocking dequeue from a handler;
// an exhausted heap while appending an item (the core and its queue's
// length); options.bucket_bytes larger than an aggregation buffer.
//
// Costs: per remote item 4 bytes of length prefix + the serialized item in
// a batch to the destination (with coalescing, one message per bucket;
// without, one per item); one deque append on the receiver; dequeue is a
// deque pop. Memory: one staged buffer per destination this core sends to
// (the aggregator's, shared with every other channel), the queue itself.
#pragma once

#include "shoal/collective.hpp"
#include "shoal/containers/detail/keyed.hpp"
#include "shoal/containers/detail/registry.hpp"
#include "shoal/message.hpp"
#include "shoal/object_channel.hpp"
#include "shoal/serialize.hpp"
#include "shoal/task.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <new>
#include <optional>
#include <utility>

namespace shoal {

/// Options of queue<T>::create.
struct queue_options {
  /// Buffer items per destination until the bucket is full or flush()
  /// (true, the default); false sends every enqueue at once.
  bool coalesce = true;
  /// The bucket's size in bytes when coalescing (a batch leaves once it
  /// holds this many); 0: one aggregation buffer (--aggregation-bytes).
  std::uint32_t bucket_bytes = 0;
};

template <class T>
class queue {
  static_assert(serializable<T>,
                "shoal::queue<T>: T is not serializable (specialise shoal::serializer<T>, see "
                "shoal/serialize.hpp)");

 public:
  static constexpr const char* kind = "shoal::queue";

  queue() = default;

  /// From one task: the queue on every core of the job (see the header).
  static queue create(const queue_options& options = {}) {
    SHOAL_CHECK_ON_CORE("shoal::queue::create");
    std::uint32_t bucket = 0;
    if (options.coalesce) {
      SHOAL_CHECK(options.bucket_bytes <= detail::tls_aggregator->capacity(),
                  "shoal::queue::create: bucket_bytes {} is larger than an aggregation buffer "
                  "({} bytes); lower it or raise --aggregation-bytes",
                  options.bucket_bytes, detail::tls_aggregator->capacity());
      bucket = options.bucket_bytes;
    }
    queue q;
    q.id_ = containers_detail::registry::new_id();
    q.channel_ = detail::open_record_channel(receiver{q.id_}, bucket);
    q.coalesce_ = options.coalesce ? 1U : 0U;
    return q;
  }

  /// Collective (one task per core, SPMD): core 0 creates the queue and
  /// every core returns the same handle.
  static queue create_collective(const queue_options& options = {}) {
    SHOAL_CHECK_ON_CORE("shoal::queue::create_collective");
    queue q;
    if (shoal::mycore() == 0) q = create(options);
    return shoal::broadcast(q, 0);
  }

  /// Appends `value` to core `core`'s queue (see the header).
  void enqueue(int core, const T& value) const {
    part_type& p = my_part();
    if (core < 0 || core >= shoal::cores()) [[unlikely]]
      containers_detail::fatal_container(
          kind, id_,
          fmt::format("enqueue: core {} is not a core of the job (0 .. {})", core,
                      shoal::cores() - 1));
    if (core == shoal::mycore()) {
      append(p, T(value));
      return;
    }
    detail::send_record("shoal::queue::enqueue", channel_, core, value);
    if (coalesce_ == 0) detail::tls_aggregator->flush_stream(channel_);
  }

  /// The oldest item of this core's queue, or std::nullopt if it is empty.
  std::optional<T> try_dequeue() const {
    part_type& p = my_part();
    if (p.items.empty()) return std::nullopt;
    std::optional<T> v(std::move(p.items.front()));
    p.items.pop_front();
    return v;
  }

  /// The oldest item of this core's queue, waiting up to `timeout` for one;
  /// std::nullopt if none came. A task only (see the header).
  std::optional<T> dequeue(std::chrono::nanoseconds timeout) const {
    if (auto v = try_dequeue()) return v;
    if (!detail::in_worker()) [[unlikely]]
      containers_detail::fatal_container(
          kind, id_, "dequeue(timeout) would wait in a message handler; use try_dequeue()");
    detail::tls_aggregator->flush_all();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      shoal::yield();
      if (auto v = try_dequeue()) return v;
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    }
  }

  /// Sends the items this core has buffered on this queue, to every core.
  void flush() const {
    (void)my_part();  // a destroyed or default handle is named here
    detail::tls_aggregator->flush_stream(channel_);
  }

  /// Items waiting in this core's queue.
  std::size_t local_size() const { return my_part().items.size(); }

  /// Whether enqueue coalesces (queue_options::coalesce at creation).
  bool coalescing() const noexcept { return coalesce_ != 0; }

  /// From one task, once nothing is in flight (see the header).
  void destroy() {
    SHOAL_CHECK_ON_CORE("shoal::queue::destroy");
    (void)my_part();  // a second destroy() is named here
    containers_detail::retire_container(id_, channel_);
    id_ = 0;
    channel_ = 0;
  }

  std::uint64_t id() const noexcept { return id_; }
  explicit operator bool() const noexcept { return id_ != 0; }

 private:
  struct part_type {
    std::deque<T> items;
  };
  using storage_type = containers_detail::per_core_storage<part_type>;

  static part_type& part_of(std::uint64_t id) {
    return containers_detail::registry::instance().get<storage_type>(id, kind).local();
  }

  part_type& my_part() const {
    if (detail::tls_core < 0) [[unlikely]]
      detail::fatal_outside_run(kind);
    return part_of(id_);
  }

  static void append_to(std::uint64_t id, part_type& p, T&& v) {
    try {
      p.items.push_back(std::move(v));
    } catch (const std::bad_alloc&) {
      containers_detail::fatal_container(
          kind, id,
          fmt::format("out of memory on core {} while appending to its queue of {} items",
                      detail::tls_core, p.items.size()));
    }
  }
  void append(part_type& p, T&& v) const { append_to(id_, p, std::move(v)); }

  /// The channel's handler: rebuilds the item and appends it.
  struct receiver {
    std::uint64_t id;
    void operator()(byte_reader& r) const {
      T v = serializer<T>::read(r);
      if (r.left() != 0) [[unlikely]]
        containers_detail::fatal_container(
            kind, id,
            fmt::format("an item's record had {} bytes left unread (a serializer's write() "
                        "and read() disagree)",
                        r.left()));
      append_to(id, part_of(id), std::move(v));
    }
  };

  std::uint64_t id_ = 0;
  std::uint32_t channel_ = 0;
  std::uint32_t coalesce_ = 0;
};

}  // namespace shoal
