// The delegate path of BCL's queues (fast_queue, circular_queue,
// checksum_queue; bcl/path.hpp chooses it per queue at make()): a method
// runs on the queue's host core as delegates, and the host moves its
// counters with CPU instructions. Handlers of one core run one at a time,
// to completion, so a method that fits one delegate is atomic with every
// other delegate on the queue without a remote atomic.
//
// Two shapes, behind the same call:
//   short run (n <= bcl_batch<T>: the elements fit one message beside the
//     handle): ONE delegate carries the values (push) or brings them back
//     (pop); the host checks room, copies, and moves the counters. Cost D.
//   long run (n > bcl_batch<T>, or T aligned to more than a closure slot):
//     one delegate reserves the run on the host (bcl_reserve_at_host), the
//     caller moves the elements one-sided as the one-sided path does (W(n)
//     or R(n)), and a queue that publishes in order (circular_queue) sends
//     one more delegate per try to publish (bcl_publish_at_host).
//     Cost 2D + W(n) + F or D + R(n) (+ D).
// A short run that meets a long one in flight (a run reserved and not yet
// published, or a checksum slot not yet written / read) is answered busy
// and retried after a yield; it never waits inside a handler (a handler
// cannot suspend, and the long run's next delegate must run on that core).
//
// The counters are touched only by the host core on this path (and by
// local_nonatomic_pop, whose promise excludes everything else), so plain
// loads and stores are enough. A queue never mixes the two paths: its path
// is chosen once, at make(), and every copy of the handle follows it.
#pragma once

#include "shoal/bcl/path.hpp"
#include "shoal/bcl/ring.hpp"
#include "shoal/closure.hpp"
#include "shoal/delegate.hpp"
#include "shoal/global_ptr.hpp"
#include "shoal/runtime.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace shoal::detail {

/// Bytes of elements one delegate carries beside a queue handle (at most
/// 64 bytes) and a count: 128 + 8 + 64 plus delegate::call's 16 stay under
/// max_message_bytes (256).
inline constexpr std::size_t bcl_batch_bytes = 128;

/// Elements of T that travel in one delegate (0: T is aligned beyond a
/// closure slot or larger than a batch; every run is then a long run).
template <class T>
inline constexpr std::uint64_t bcl_batch = alignof(T) <= max_closure_align
                                               ? bcl_batch_bytes / sizeof(T)
                                               : 0;

/// The outcome of a short run on the host.
enum class bcl_owned : std::uint8_t { done, refused, busy };

/// Up to M elements of T as bytes (T need not be default-constructible),
/// with their count and, in a pop's reply, the outcome.
template <class T, std::uint64_t M>
struct bcl_batch_of {
  bcl_owned status = bcl_owned::refused;
  std::uint64_t n = 0;
  alignas(T) std::byte bytes[M * sizeof(T)];

  static bcl_batch_of of(std::span<const T> vals) {
    bcl_batch_of b;
    b.n = vals.size();
    if (!vals.empty()) std::memcpy(b.bytes, vals.data(), vals.size() * sizeof(T));
    return b;
  }
  const T* values() const noexcept { return reinterpret_cast<const T*>(bytes); }
  T* values() noexcept { return reinterpret_cast<T*>(bytes); }
};

/// Sends a short run to the queue's host as one delegate: `run(q, batch)`
/// runs there, on the values of `in` (a push) or for out.size() values (a
/// pop; in is empty), and returns a bcl_owned (push) or a batch with its
/// outcome (pop, copied into `out` when done). One message carries one
/// element when the run is a single one, a whole batch otherwise. Retries,
/// yielding, while the host answers busy.
template <class T, class Q, class Run>
bcl_owned bcl_short_run(const Q& q, std::span<const T> in, std::span<T> out, const Run& run) {
  const std::uint64_t n = in.size() + out.size();
  const auto go = [&]<std::uint64_t M>() {
    bcl_batch_of<T, M> b = bcl_batch_of<T, M>::of(in);
    b.n = n;
    for (;;) {
      const auto r = delegate::call(q.host(), [q, b, run] { return run(q, b); });
      if constexpr (std::is_same_v<std::remove_const_t<decltype(r)>, bcl_owned>) {
        if (r != bcl_owned::busy) return r;
      } else {
        if (r.status == bcl_owned::done)
          std::memcpy(static_cast<void*>(out.data()), r.values(), out.size() * sizeof(T));
        if (r.status != bcl_owned::busy) return r.status;
      }
      yield();
    }
  };
  if (n == 1) return go.template operator()<1>();
  return go.template operator()<bcl_batch<T>>();
}

/// No room for a long run (bcl_reserve_at_host).
inline constexpr std::uint64_t bcl_no_room = ~std::uint64_t{0};

/// bcl_ring_reserve on the delegate path: the host moves `mine` from its
/// value to value + n if that stays within `other` + slack, and returns
/// where the run starts, or bcl_no_room (nothing reserved). One delegate.
inline std::uint64_t bcl_reserve_at_host(int host, global_ptr<std::uint64_t> mine,
                                         global_ptr<std::uint64_t> other, std::uint64_t slack,
                                         std::uint64_t n) {
  return delegate::call(host, [mine, other, slack, n] {
    std::uint64_t& m = *mine.local();
    if (m + n > *other.local() + slack) return bcl_no_room;
    const std::uint64_t at = m;
    m += n;
    return at;
  });
}

/// Reserves [at, at + n) of a ring for a run, moving `mine` within `other`
/// + slack: on the delegate path by one delegate to the host
/// (bcl_reserve_at_host), else one-sided with the caller's caches
/// (bcl_ring_reserve). false: no room, nothing reserved.
inline bool bcl_reserve_run(int host, bool delegated, global_ptr<std::uint64_t> mine,
                            std::uint64_t& mine_cache, global_ptr<std::uint64_t> other,
                            std::uint64_t& other_cache, std::uint64_t slack, std::uint64_t n,
                            std::uint64_t& at) {
  if (!delegated) return bcl_ring_reserve(mine, mine_cache, other, other_cache, slack, n, at);
  at = bcl_reserve_at_host(host, mine, other, slack, n);
  return at != bcl_no_room;
}

/// Moves the publishing counter `ready` over [at, at + n) once every run
/// before it is published (one delegate per try, yielding between tries).
inline void bcl_publish_at_host(int host, global_ptr<std::uint64_t> ready, std::uint64_t at,
                                std::uint64_t n) {
  while (!delegate::call(host, [ready, at, n] {
    std::uint64_t& r = *ready.local();
    if (r != at) return false;
    r = at + n;
    return true;
  }))
    yield();
}

/// Copies n elements between `vals` and the ring's counters at .. at + n - 1
/// on the host (CPU copies of at most two runs).
template <class T>
void bcl_ring_copy_in(global_ptr<T> data, std::uint64_t capacity, std::uint64_t at, const T* vals,
                      std::uint64_t n) {
  bcl_ring_runs(data, capacity, at, n, [&](global_ptr<T> p, std::uint64_t from, std::uint64_t c) {
    std::memcpy(static_cast<void*>(p.local()), vals + from, c * sizeof(T));
  });
}
template <class T>
void bcl_ring_copy_out(global_ptr<T> data, std::uint64_t capacity, std::uint64_t at, T* out,
                       std::uint64_t n) {
  bcl_ring_runs(data, capacity, at, n, [&](global_ptr<T> p, std::uint64_t from, std::uint64_t c) {
    std::memcpy(static_cast<void*>(out + from), p.local(), c * sizeof(T));
  });
}

}  // namespace shoal::detail
