// forall: localized parallel loops over global arrays (Grappa's
// forall_localized, GMT's parFor over partitions). Each iteration runs on the
// core that owns its element, so the body touches the element directly.
#pragma once

#include <algorithm>
#include <cstdint>

#include "shoal/completion_event.hpp"
#include "shoal/global_ptr.hpp"
#include "shoal/message.hpp"
#include "shoal/parallel.hpp"
#include "shoal/runtime.hpp"
#include "shoal/task.hpp"

namespace shoal {

namespace detail {

/// Calls visit(first, last) for each maximal run [first, last) of indices in
/// [0, n) whose elements of `base` live in the same block on core `core`.
template <class T, class V>
void for_each_local_run(global_ptr<T> base, std::int64_t n, int core, const V& visit) {
  const auto bb = static_cast<std::int64_t>(g_info.block_bytes);
  const auto ncores = static_cast<std::int64_t>(g_info.total_cores);
  const auto size = static_cast<std::int64_t>(sizeof(T));
  const auto a0 = static_cast<std::int64_t>(base.linear_address());
  const std::int64_t per_block = bb / size;
  // Index of the first element in the block holding element 0's block + k.
  const std::int64_t block0 = a0 / bb;
  const std::int64_t first_offset = (a0 % bb) / size;  // elements before base in its block
  std::int64_t k = ((core - block0) % ncores + ncores) % ncores;
  for (;; k += ncores) {
    const std::int64_t first = std::max<std::int64_t>(0, k * per_block - first_offset);
    if (first >= n) break;
    const std::int64_t last = std::min<std::int64_t>(n, (k + 1) * per_block - first_offset);
    if (last > first) visit(first, last);
  }
}

}  // namespace detail

/// Calls f(i, element) for every i in [0, n), each on the core owning
/// base + i (a linear pointer from global_alloc). Blocking: returns when every
/// iteration has run. On each core the iterations are split into local tasks
/// of about `grain` elements, so iterations that suspend (blocking delegates)
/// overlap. f must be message_handler_like and at most 32 bytes.
template <class T, class F>
void forall(global_ptr<T> base, std::int64_t n, const F& f, std::int64_t grain = 1024) {
  detail::check_loop_body<F>();
  static_assert(sizeof(F) <= 32, "shoal::forall: capture at most 32 bytes in the loop body");
  SHOAL_CHECK(base.is_linear() || n == 0, "forall needs a linear global_ptr from global_alloc");
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  completion_event done(cores());
  completion_event* d = &done;
  for (int c = 0; c < cores(); ++c) {
    send(c, [base, n, f, d, grain] {
      spawn([base, n, f, d, grain] {
        completion_event local_done(0);
        completion_event* ld = &local_done;
        std::int64_t pending_first = -1, pending_last = -1;
        auto launch = [&](std::int64_t lo, std::int64_t hi) {
          ld->enroll();
          spawn([base, f, ld, lo, hi] {
            for (std::int64_t i = lo; i < hi; ++i) f(i, *(base + i).local());
            ld->complete();
          });
        };
        detail::for_each_local_run(base, n, mycore(), [&](std::int64_t lo, std::int64_t hi) {
          // Merge runs into tasks of about `grain` elements.
          if (pending_first < 0) pending_first = lo;
          pending_last = hi;
          if (pending_last - pending_first >= grain) {
            launch(pending_first, pending_last);
            pending_first = -1;
          }
        });
        if (pending_first >= 0) launch(pending_first, pending_last);
        local_done.wait();
        d->complete();
      });
    });
  }
  done.wait();
}

/// Calls f(i) for every i in [begin, end) spread over every core of the job
/// in contiguous chunks (core c gets the c-th share), each chunk further
/// split by parallel_for on that core. Blocking. f must be
/// message_handler_like and at most 32 bytes.
template <class F>
void forall(std::int64_t begin, std::int64_t end, const F& f, std::int64_t grain = 1024) {
  detail::check_loop_body<F>();
  static_assert(sizeof(F) <= 32, "shoal::forall: capture at most 32 bytes in the loop body");
  if (end <= begin) return;
  const std::int64_t n = end - begin;
  completion_event done(cores());
  completion_event* d = &done;
  for (int c = 0; c < cores(); ++c) {
    const std::int64_t lo = begin + n * c / cores();
    const std::int64_t hi = begin + n * (c + 1) / cores();
    send(c, [lo, hi, f, d, grain] {
      spawn([lo, hi, f, d, grain] {
        parallel_for(lo, hi, grain, f);
        d->complete();
      });
    });
  }
  done.wait();
}

}  // namespace shoal
