// forall: localized parallel loops over global arrays (Grappa's
// forall_localized, GMT's parFor over partitions). Each iteration runs on the
// core that owns its element, so the body touches the element directly.
#pragma once

#include "shoal/completion_event.hpp"
#include "shoal/global_ptr.hpp"
#include "shoal/message.hpp"
#include "shoal/parallel.hpp"
#include "shoal/runtime.hpp"
#include "shoal/task.hpp"

#include <algorithm>
#include <cstdint>

namespace shoal {

namespace detail {

/// The blocks of a linear array that one core owns, for a forall over
/// [0, n). Block j (relative to the array's first block) covers indices
/// [j*per_block - skew, (j+1)*per_block - skew) and lives on core
/// (first_block + j) mod cores; this core owns j = first_j + t*cores.
template <class T>
struct local_blocks {
  std::int64_t per_block;  // elements per block
  std::int64_t skew;       // elements of the first block that precede base
  std::int64_t first_j;    // first owned block
  std::int64_t count;      // owned blocks that intersect [0, n)

  local_blocks(global_ptr<T> base, std::int64_t n, int core) {
    const auto bb = static_cast<std::int64_t>(g_info.block_bytes);
    const auto nc = static_cast<std::int64_t>(g_info.total_cores);
    const auto a0 = static_cast<std::int64_t>(base.linear_address());
    per_block = bb / static_cast<std::int64_t>(sizeof(T));
    skew = (a0 % bb) / static_cast<std::int64_t>(sizeof(T));
    first_j = ((core - a0 / bb) % nc + nc) % nc;
    const std::int64_t blocks = (n + skew + per_block - 1) / per_block;  // blocks touching [0, n)
    count = first_j < blocks ? (blocks - first_j + nc - 1) / nc : 0;
  }

  /// Calls visit(first, last) for owned blocks t in [t0, t1), clipped to [0, n).
  template <class V>
  void visit(std::int64_t t0, std::int64_t t1, std::int64_t n, const V& v) const {
    const auto nc = static_cast<std::int64_t>(g_info.total_cores);
    for (std::int64_t t = t0; t < t1; ++t) {
      const std::int64_t j = first_j + t * nc;
      const std::int64_t lo = std::max<std::int64_t>(0, j * per_block - skew);
      const std::int64_t hi = std::min<std::int64_t>(n, (j + 1) * per_block - skew);
      if (lo < hi) v(lo, hi);
    }
  }
};

/// One core's share of a forall: its blocks split into local tasks of about
/// `grain` elements. Lives on the stack of the core's coordinating task.
template <class T, class F>
struct forall_share {
  global_ptr<T> base;
  std::int64_t n;
  F f;
  local_blocks<T> blocks;
  completion_event done;

  void run_blocks(std::int64_t t0, std::int64_t t1) const {
    blocks.visit(t0, t1, n, [this](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) f(i, *(base + i).local());
    });
  }
};

}  // namespace detail

/// Calls f(i, element) for every i in [0, n), each on the core owning
/// base + i (a linear pointer from global_alloc). Blocking: returns when every
/// iteration has run. On each core the iterations are split into local tasks
/// of about `grain` elements, so iterations that suspend (blocking delegates)
/// overlap. f must be loop_body_like: copyable as bytes, at most
/// max_loop_body_bytes (32).
template <class T, loop_body_like F>
void forall(global_ptr<T> base, std::int64_t n, const F& f, std::int64_t grain = 1024) {
  SHOAL_CHECK(base.is_linear() || n == 0, "forall needs a linear global_ptr from global_alloc");
  if (n <= 0) return;
  // 32 bits are plenty for a grain and keep the task closure at 64 bytes.
  const auto grain32 = static_cast<std::int32_t>(std::clamp<std::int64_t>(grain, 1, 1 << 30));
  completion_event done(cores());
  completion_event* d = &done;
  const std::int32_t home = mycore();
  for (int c = 0; c < cores(); ++c) {
    send(c, [base, n, f, d, grain32, home] {
      spawn([base, n, f, d, grain32, home] {
        const std::int64_t grain = grain32;
        using share_t = detail::forall_share<T, F>;
        share_t share{base, n, f, detail::local_blocks<T>(base, n, mycore()), completion_event(0)};
        share_t* sp = &share;
        const std::int64_t step = std::max<std::int64_t>(1, grain / share.blocks.per_block);
        for (std::int64_t t = 0; t < share.blocks.count; t += step) {
          const std::int64_t t1 = std::min(share.blocks.count, t + step);
          share.done.enroll();
          spawn([sp, t, t1] {
            sp->run_blocks(t, t1);
            sp->done.complete();
          });
        }
        share.done.wait();
        completion_event::complete_at(home, d);
      });
    });
  }
  done.wait();
}

/// Calls f(i) for every i in [begin, end) spread over every core of the job
/// in contiguous chunks (core c gets the c-th share), each chunk further
/// split by parallel_for on that core. Blocking. f must be loop_body_like:
/// copyable as bytes, at most max_loop_body_bytes (32).
template <loop_body_like F>
void forall(std::int64_t begin, std::int64_t end, const F& f, std::int64_t grain = 1024) {
  if (end <= begin) return;
  const std::int64_t n = end - begin;
  const auto grain32 = static_cast<std::int32_t>(std::clamp<std::int64_t>(grain, 1, 1 << 30));
  completion_event done(cores());
  completion_event* d = &done;
  const std::int32_t home = mycore();
  for (int c = 0; c < cores(); ++c) {
    // floor(n * k / cores) without forming n * k, which could overflow.
    const auto share = [n](std::int64_t k) {
      const std::int64_t nc = cores();
      return n / nc * k + n % nc * k / nc;
    };
    const std::int64_t lo = begin + share(c);
    const std::int64_t hi = begin + share(c + 1);
    send(c, [lo, hi, f, d, grain32, home] {
      spawn([lo, hi, f, d, grain32, home] {
        parallel_for(lo, hi, grain32, f);
        completion_event::complete_at(home, d);
      });
    });
  }
  done.wait();
}

}  // namespace shoal
