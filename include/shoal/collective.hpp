// Collectives for SPMD code: every core of the job runs exactly one task that
// calls the same collectives in the same order (typically the body given to
// on_all_cores). Each call suspends the calling task until every core has
// contributed, then returns the combined result on every core.
//
//   shoal::on_all_cores([] {
//     const double local = ...;                       // this core's part
//     const double total = shoal::allreduce_sum(local);
//     const auto [before, all] = shoal::exclusive_scan_sum(my_count);
//     shoal::allreduce_sum(std::span<std::int64_t>(bucket_sizes));  // element-wise
//   });
//
// Contributions are combined on core 0 in core order (core 0's first), so a
// floating-point result is the same on every core and from run to run
// whatever the order in which messages arrive. Cost: one message per core to
// core 0 and one back (the span form: one per 128-byte chunk each way);
// core 0 keeps every core's contribution until all have arrived.
//
// Contract: T is trivially copyable and default-constructible, at most
// 8-byte aligned, at most 192 bytes (exclusive_scan_sum: 120, its result
// carries two; the span form: at most 128); Op is a trivially copyable callable
// T(T, T) of at most 32 bytes, associative (it is applied left to right in
// core order). A core that calls a collective the others do not call, or with
// a span of another length, is a fatal error or a hang that --watchdog-s
// reports.
#pragma once

#include "shoal/completion_event.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/message.hpp"
#include "shoal/parallel.hpp"
#include "shoal/per_core.hpp"
#include "shoal/runtime.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

namespace shoal {

template <class T>
concept collective_value_like = std::is_trivially_copyable_v<T> &&
                                std::is_default_constructible_v<T> && alignof(T) <= 8 &&
                                sizeof(T) <= 192;

/// What exclusive_scan_sum returns: the sum over the cores before the caller
/// (global core order; T{} on core 0) and the sum over every core.
template <class T>
struct scan_result {
  T before{};
  T total{};
};

namespace detail {

/// Where a core's waiting task and its result meet, one slot per (T, R).
template <class T, class R>
struct collective_slot {
  std::vector<T> parts;  ///< core 0: each core's contribution, by core
  int arrivals = 0;      ///< core 0: contributions of the current call
  R result{};
  completion_event* waiter = nullptr;
};

template <class T, class R>
inline per_core<collective_slot<T, R>> g_collective;

/// Gathers every core's `x` on core 0, where combine(parts, out) fills one
/// result per core, and returns the caller's result. Blocking; SPMD.
template <class T, class R, class Combine>
R gather_combine_scatter(const T& x, Combine combine) {
  static_assert(std::is_trivially_copyable_v<Combine> && sizeof(Combine) <= 32,
                "shoal collective: the combining operation must be trivially copyable, <= 32 bytes");
  SHOAL_CHECK_ON_CORE("shoal collective (allreduce/exclusive_scan)");
  collective_slot<T, R>& mine = g_collective<T, R>.local();
  completion_event done(1);
  mine.waiter = &done;
  const int me = mycore();
  // No core starts the next call of the same (T, R) before this call's result
  // reaches it, and it sets its waiter before contributing: one slot suffices.
  send(0, [x, me, combine] {
    collective_slot<T, R>& root = g_collective<T, R>.local();
    const auto n = static_cast<std::size_t>(cores());
    if (root.parts.size() != n) root.parts.resize(n);
    root.parts[static_cast<std::size_t>(me)] = x;
    if (++root.arrivals < cores()) return;
    root.arrivals = 0;
    std::vector<R> out(n);
    combine(root.parts, out);
    for (int c = 0; c < cores(); ++c)
      send(c, [r = out[static_cast<std::size_t>(c)]] {
        collective_slot<T, R>& s = g_collective<T, R>.local();
        s.result = r;
        completion_event* w = s.waiter;
        s.waiter = nullptr;
        w->complete();
      });
    flush();  // a handler's sends otherwise wait for the age flush
  });
  flush();
  done.wait();
  return mine.result;
}

/// Per-core state of the span form of allreduce_sum for element type T.
template <class T>
struct span_reduce_slot {
  std::vector<std::vector<T>> parts;  ///< core 0: each core's vector
  std::int64_t chunks_in = 0;         ///< core 0: chunks received this call
  std::int64_t length = -1;           ///< core 0: the call's span length
  T* dest = nullptr;                  ///< the caller's span (its own process)
  std::int64_t chunks_left = 0;       ///< result chunks still to arrive here
  completion_event* waiter = nullptr;
};

template <class T>
inline per_core<span_reduce_slot<T>> g_span_reduce;

template <class T>
inline constexpr std::size_t span_chunk = sizeof(T) >= 128 ? 1 : 128 / sizeof(T);

template <class T>
struct span_chunk_msg {
  std::int64_t length;
  std::int64_t offset;
  int core;
  int count;
  std::array<T, span_chunk<T>> values;
};

}  // namespace detail

/// op applied over every core's `x`, in core order. Blocking; SPMD.
template <collective_value_like T, class Op>
T allreduce(const T& x, Op op) {
  return detail::gather_combine_scatter<T, T>(
      x, [op](const std::vector<T>& parts, std::vector<T>& out) {
        T acc = parts[0];
        for (std::size_t c = 1; c < parts.size(); ++c) acc = op(acc, parts[c]);
        std::fill(out.begin(), out.end(), acc);
      });
}

/// Sum of `x` over every core. Blocking; SPMD.
template <collective_value_like T>
T allreduce_sum(const T& x) {
  return allreduce(x, std::plus<T>{});
}

/// Largest `x` over every core. Blocking; SPMD.
template <collective_value_like T>
T allreduce_max(const T& x) {
  return allreduce(x, [](const T& a, const T& b) { return a < b ? b : a; });
}

/// Smallest `x` over every core. Blocking; SPMD.
template <collective_value_like T>
T allreduce_min(const T& x) {
  return allreduce(x, [](const T& a, const T& b) { return b < a ? b : a; });
}

/// The sum of `x` over the cores before the caller, and over all cores.
/// Blocking; SPMD.
template <collective_value_like T>
scan_result<T> exclusive_scan_sum(const T& x) {
  static_assert(sizeof(T) <= 120, "shoal::exclusive_scan_sum: at most 120-byte values");
  return detail::gather_combine_scatter<T, scan_result<T>>(
      x, [](const std::vector<T>& parts, std::vector<scan_result<T>>& out) {
        T running{};
        for (std::size_t c = 0; c < parts.size(); ++c) {
          out[c].before = running;
          running = running + parts[c];
        }
        for (scan_result<T>& r : out) r.total = running;
      });
}

/// Element-wise sum over every core's `values` (the same length everywhere),
/// written back into `values` on every core. Blocking; SPMD. Core 0 holds
/// cores() copies of the vector while it combines them.
template <class T>
requires std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> &&
         (alignof(T) <= 8) && (sizeof(T) <= 128)
void allreduce_sum(std::span<T> values) {
  SHOAL_CHECK_ON_CORE("shoal::allreduce_sum");
  if (values.empty()) {
    barrier();  // nothing to combine, but still a collective
    return;
  }
  using msg = detail::span_chunk_msg<T>;
  static constexpr auto chunk = static_cast<std::int64_t>(detail::span_chunk<T>);
  const auto length = static_cast<std::int64_t>(values.size());
  const std::int64_t chunks = (length + chunk - 1) / chunk;
  detail::span_reduce_slot<T>& mine = detail::g_span_reduce<T>.local();
  completion_event done(1);
  mine.dest = values.data();
  mine.chunks_left = chunks;
  mine.waiter = &done;
  // Sends the chunks of `data` (length elements) to `core`, each handled by deliver.
  auto send_chunks = [chunks](int core, int from, const T* data, std::int64_t len, auto deliver) {
    for (std::int64_t k = 0; k < chunks; ++k) {
      msg m{};
      m.length = len;
      m.offset = k * chunk;
      m.core = from;
      m.count = static_cast<int>(std::min(chunk, len - m.offset));
      std::copy_n(data + m.offset, m.count, m.values.begin());
      send(core, [m, deliver] { deliver(m); });
    }
  };
  send_chunks(0, mycore(), values.data(), length, [send_chunks](const msg& m) {
    detail::span_reduce_slot<T>& root = detail::g_span_reduce<T>.local();
    const auto n = static_cast<std::size_t>(cores());
    if (root.chunks_in == 0) {
      root.length = m.length;
      root.parts.resize(n);
      for (std::vector<T>& p : root.parts) p.assign(static_cast<std::size_t>(m.length), T{});
    }
    SHOAL_CHECK(m.length == root.length,
                "shoal::allreduce_sum(span): cores passed spans of different lengths");
    std::copy_n(m.values.begin(), m.count,
                root.parts[static_cast<std::size_t>(m.core)].begin() + m.offset);
    const std::int64_t per_core = (m.length + chunk - 1) / chunk;
    if (++root.chunks_in < per_core * cores()) return;
    root.chunks_in = 0;
    std::vector<T>& sum = root.parts[0];
    for (std::size_t c = 1; c < n; ++c)
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + root.parts[c][i];
    for (int c = 0; c < cores(); ++c)
      send_chunks(c, 0, sum.data(), m.length, [](const msg& r) {
        detail::span_reduce_slot<T>& s = detail::g_span_reduce<T>.local();
        std::copy_n(r.values.begin(), r.count, s.dest + r.offset);
        if (--s.chunks_left > 0) return;
        completion_event* w = s.waiter;
        s.waiter = nullptr;
        w->complete();
      });
    flush();
  });
  flush();
  done.wait();
}

}  // namespace shoal
