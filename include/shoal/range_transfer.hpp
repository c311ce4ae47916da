// Bulk transfer of a range of a global array: read n consecutive elements
// starting at a global_ptr into local memory, or write them from local
// memory, whatever blocks and cores the range spans.
//
//   std::vector<double> row(n);
//   shoal::read_range(a + first, std::span<double>(row));        // blocking
//   shoal::future<void> f = shoal::async_write_range(b + k, std::span<const double>(row));
//   ... f.get();                                                  // row must live until then
//
// How. A range of a linear (block-cyclic) array touches at most cores()
// cores, and the elements one core owns in it are contiguous in that core's
// memory (its blocks of the range are consecutive local blocks): a "run".
// A range of a 2D pointer is one run on its core. Runs on the calling core
// are copied directly. Reads send one request per other core; that core
// streams its run back in closure messages of 216 bytes each (aggregated by
// the runtime), which the caller scatters into place. Writes stream the run
// to its core in such messages, each copied in place there (in handler
// context, so atomic with respect to delegates on that core); the last one
// of a run returns one acknowledgement. Cost: ceil(run bytes / 216) messages
// per remote core, plus one request (read) or one acknowledgement (write).
// Each call allocates its small state once (not per message).
//
// Completion: the future is ready when every element has been copied into
// `dst` (reads) or stored at its home (writes). Until then the local span
// must stay alive and unchanged (writes) or untouched (reads). Ordering with
// other operations on the same elements: none beyond that (a delegate to an
// element while a transfer covering it is in flight sees the old or the new
// value).
//
// Contract: T is trivially copyable; a linear pointer comes from
// global_alloc (its T divides --block-bytes) and the range lies inside one
// allocation; a 2D pointer's range lies in that core's memory. Call from a
// task (the blocking forms suspend the calling worker; the async forms
// return at once and their futures are used on the calling core).
#pragma once

#include "shoal/future.hpp"
#include "shoal/global_ptr.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace shoal {

namespace detail {
/// Starts a transfer of `bytes` between the global range at `global_bits`
/// (a global_ptr's bits) and `local`; read: global to local.
future<void> async_range_read(std::uint64_t global_bits, std::byte* local, std::int64_t bytes);
future<void> async_range_write(std::uint64_t global_bits, const std::byte* local,
                               std::int64_t bytes);
}  // namespace detail

/// Starts copying the dst.size() elements at src, src + 1, ... into `dst`;
/// returns at once with a future of its completion (calling core only).
template <class T>
requires std::is_trivially_copyable_v<T> future<void> async_read_range(global_ptr<T> src,
                                                                       std::span<T> dst) {
  return detail::async_range_read(src.bits(), reinterpret_cast<std::byte*>(dst.data()),
                                  static_cast<std::int64_t>(dst.size_bytes()));
}

/// Starts storing `src` at dst, dst + 1, ...; returns at once with a future
/// of its completion (calling core only). `src` must stay alive and
/// unchanged until then.
template <class T>
requires std::is_trivially_copyable_v<T> future<void> async_write_range(global_ptr<T> dst,
                                                                        std::span<const T> src) {
  return detail::async_range_write(dst.bits(), reinterpret_cast<const std::byte*>(src.data()),
                                   static_cast<std::int64_t>(src.size_bytes()));
}

/// Copies the dst.size() elements at src, src + 1, ... into `dst`.
/// Blocking: suspends the calling worker until all have arrived.
template <class T>
requires std::is_trivially_copyable_v<T>
void read_range(global_ptr<T> src, std::span<T> dst) { async_read_range(src, dst).get(); }

/// Stores `src` at dst, dst + 1, .... Blocking: suspends the calling worker
/// until every element is stored at its home.
template <class T>
requires std::is_trivially_copyable_v<T>
void write_range(global_ptr<T> dst, std::span<const T> src) { async_write_range(dst, src).get(); }

/// write_range from a span of non-const elements.
template <class T>
requires(std::is_trivially_copyable_v<T> &&
         !std::is_const_v<T>) void write_range(global_ptr<T> dst, std::span<T> src) {
  write_range(dst, std::span<const T>(src));
}

/// async_write_range from a span of non-const elements.
template <class T>
requires(std::is_trivially_copyable_v<T> &&
         !std::is_const_v<T>) future<void> async_write_range(global_ptr<T> dst, std::span<T> src) {
  return async_write_range(dst, std::span<const T>(src));
}

}  // namespace shoal
