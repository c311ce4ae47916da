// Collectives for SPMD code: every core of the job runs exactly one task that
// calls the same collectives in the same order (typically the body given to
// on_all_cores). Each call suspends the calling task until the data it needs
// is there; the watchdog names the wait ("allgather #3": the collective and
// the call's sequence number on that core).
//
//   shoal::on_all_cores([] {
//     const double total = shoal::allreduce_sum(local_part);
//     const auto [before, all] = shoal::exclusive_scan_sum(my_count);
//     shoal::allreduce_sum(std::span<std::int64_t>(bucket_sizes));   // element-wise
//     shoal::broadcast(std::span<double>(params), /*root=*/0);
//     const shoal::gathered<int> g = shoal::allgatherv(std::span<const int>(mine));
//   });
//
// How (detail/collective_engine.hpp has the protocol). Two levels: the cores
// of a process meet in shared memory (each posts a pointer to its span; the
// process's leader, local core 0, reads them in place: no copy, no message);
// leaders exchange along a binomial tree over ranks (depth ceil(log2
// ranks)), moving buffers as 224-byte closure messages that the runtime
// aggregates. Values and spans may be of any size.
//
// Cost per call, with P processes of C cores and B payload bytes: no message
// inside a process; between processes, per tree edge ceil(B_edge/224)
// messages. allreduce/reduce/broadcast: B_edge = the span's bytes, 2 log P
// hops deep (reduce and broadcast: log P, plus one hop when the root is not
// on rank 0 for reduce). gather/allgather: a subtree's share on the way up,
// all of it on the way down (allgather); depth 2 log P. The leader holds its
// subtree's data while it combines; each core then copies the result out in
// parallel. A call returns on a core only after every core of its process
// has called (inputs are read in place); allreduce, allgather and the scan
// also wait for every core of the job; broadcast, reduce and gather wait for
// the data on its way to the core.
//
// Determinism: reductions combine within a process left to right in core
// order; across processes rank v's value is its own, then op(value, subtree
// of v+1), op(., subtree of v+2), op(., subtree of v+4), ... (the binomial
// tree rooted at rank 0, children in ascending order), so a floating-point
// result is the same on every core and from run to run whatever the arrival
// order, and on one process it is exactly the left fold in core order. op
// must be associative; it need not be commutative. reduce gives the same bits
// as allreduce.
//
// Contract: T is trivially copyable and default-constructible, alignof(T) at
// most that of std::max_align_t. op is a callable T(const T&, const T&); the
// leaders apply their own copy, so it must be the same on every core (it
// need not be trivially copyable). A core that calls a collective the others
// do not call, or in another order, with another root (checked between the
// cores of a process), or (where lengths must agree) with a span of another
// length is a fatal error naming the collective, the cores and both values;
// a core that never calls leaves the others waiting, which the watchdog
// reports. Call from tasks only.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/collective_engine.hpp"
#include "shoal/runtime.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

namespace shoal {

template <class T>
concept collective_value_like = std::is_trivially_copyable_v<T> &&
                                std::is_default_constructible_v<T> &&
                                alignof(T) <= alignof(std::max_align_t);

/// What exclusive_scan_sum returns: the sum over the cores before the caller
/// (global core order; T{} on core 0) and the sum over every core.
template <class T>
struct scan_result {
  T before{};
  T total{};
};

/// What gatherv and allgatherv return: every core's part, concatenated in
/// core order.
template <class T>
struct gathered {
  std::vector<T> values;
  /// cores() + 1 entries: core c's part is values[offsets[c], offsets[c+1]).
  std::vector<std::int64_t> offsets;

  std::int64_t count(int core) const {
    return offsets[static_cast<std::size_t>(core) + 1] - offsets[static_cast<std::size_t>(core)];
  }
  std::span<const T> part(int core) const {
    return std::span<const T>(values).subspan(
        static_cast<std::size_t>(offsets[static_cast<std::size_t>(core)]),
        static_cast<std::size_t>(count(core)));
  }
};

namespace detail {

inline void check_root(const char* what, int root) {
  SHOAL_CHECK(root >= 0 && root < cores(), "shoal::{}: root {} out of range [0, {})", what, root,
              cores());
}

/// Leader: folds the process's spans, then the children's along the rank
/// tree; returns the result where the call wants it (every process, or the
/// root's), elsewhere an empty buffer.
template <class T, class Op>
byte_buffer reduce_on_leader(const coll_call& c, std::int64_t n, const Op& op, bool to_all) {
  coll_check_local_counts(c, n);
  const auto bytes = n * static_cast<std::int64_t>(sizeof(T));
  byte_buffer acc = byte_buffer::make(bytes);
  T* a = reinterpret_cast<T*>(acc.begin());
  const std::vector<coll_post>& posts = c.slot->posts;
  if (n > 0) std::memcpy(static_cast<void*>(a), posts[0].data, static_cast<std::size_t>(bytes));
  for (std::size_t i = 1; i < posts.size(); ++i) {
    const T* p = static_cast<const T*>(posts[i].data);
    for (std::int64_t k = 0; k < n; ++k) a[k] = op(a[k], p[k]);
  }
  const rank_tree t = make_rank_tree(0);
  for (std::size_t i = 0; i < t.children.size(); ++i) {
    const int child = t.children[i];
    const byte_buffer b = tree_pull(t, i, c);
    SHOAL_CHECK(b.size == bytes, "shoal::{} #{}: core {} passed {} elements, core {} passed {}",
                coll_name(c.kind), c.seq, child * local_cores(),
                b.size / static_cast<std::int64_t>(sizeof(T)), mycore(), n);
    const T* p = reinterpret_cast<const T*>(b.begin());
    for (std::int64_t k = 0; k < n; ++k) a[k] = op(a[k], p[k]);
  }
  if (t.parent >= 0) tree_send_up(t, c, a, bytes);
  if (to_all) return broadcast_down(c, 0, std::move(acc));
  const int root_rank = rank_of(c.root);
  if (myrank() == 0 && root_rank != 0) tree_send(root_rank, c, 1, a, bytes);
  if (myrank() == root_rank) return root_rank == 0 ? std::move(acc) : tree_recv(0, c, 1);
  return byte_buffer{};
}

/// Every core: the engine's call around `leader_work` (which returns the
/// result on the leader) and `use(result)`, which reads the published result.
template <class Lead, class Use>
void run_collective(coll_kind kind, const void* data, std::int64_t count, int root,
                    const Lead& leader_work, const Use& use) {
  SHOAL_CHECK_ON_CORE("a shoal collective (allreduce, broadcast, gather, ...)");
  const coll_call c = coll_enter(kind, data, count, root);
  if (c.leader) {
    coll_publish(c, leader_work(c));
  } else {
    coll_wait_result(c);
  }
  use(c.slot->result);
  coll_leave(c);
}

/// Copies the result's values into `out` (which has the right length).
template <class T>
void copy_out(const byte_buffer& r, std::span<T> out) {
  if (!out.empty()) std::memcpy(static_cast<void*>(out.data()), r.begin(), out.size_bytes());
}

/// A gathered<T> from the engine's [offsets][values] buffer.
template <class T>
gathered<T> unpack_gathered(const byte_buffer& r) {
  gathered<T> g;
  if (r.size == 0) return g;
  const auto nc = static_cast<std::size_t>(cores());
  g.offsets.resize(nc + 1);
  std::memcpy(g.offsets.data(), r.begin(), (nc + 1) * sizeof(std::int64_t));
  g.values.resize(static_cast<std::size_t>(g.offsets[nc]));
  if (!g.values.empty())
    std::memcpy(static_cast<void*>(g.values.data()), r.begin() + (nc + 1) * sizeof(std::int64_t),
                g.values.size() * sizeof(T));
  return g;
}

/// Gather machinery shared by the public forms.
template <class T>
gathered<T> gather_impl(coll_kind kind, std::span<const T> mine, int root, bool to_all,
                        bool same_counts) {
  gathered<T> out;
  const bool wants = to_all || mycore() == root;
  run_collective(
      kind, mine.data(), static_cast<std::int64_t>(mine.size()), root,
      [&](const coll_call& c) {
        if (same_counts) coll_check_local_counts(c, static_cast<std::int64_t>(mine.size()));
        return gather_to(c, sizeof(T), to_all, same_counts);
      },
      [&](const byte_buffer& r) {
        if (wants) out = unpack_gathered<T>(r);
      });
  return out;
}

}  // namespace detail

// ---- reductions ----

/// Element-wise op over every core's `values` (the same length everywhere),
/// written back into `values` on every core. Blocking; SPMD.
template <collective_value_like T, class Op>
void allreduce(std::span<T> values, Op op) {
  const auto n = static_cast<std::int64_t>(values.size());
  detail::run_collective(
      detail::coll_kind::allreduce, values.data(), n, 0,
      [&](const detail::coll_call& c) { return detail::reduce_on_leader<T>(c, n, op, true); },
      [&](const detail::byte_buffer& r) { detail::copy_out(r, values); });
}

/// op applied over every core's `x`. Blocking; SPMD.
template <collective_value_like T, class Op>
T allreduce(const T& x, Op op) {
  T v = x;
  allreduce(std::span<T>(&v, 1), op);
  return v;
}

/// Element-wise op over every core's `values` (the same length everywhere),
/// written into `values` on core `root` only (other cores' spans are left
/// as they were). Same bits as allreduce. Blocking; SPMD.
template <collective_value_like T, class Op>
void reduce(std::span<T> values, Op op, int root) {
  detail::check_root("reduce", root);
  const auto n = static_cast<std::int64_t>(values.size());
  const bool mine = mycore() == root;
  detail::run_collective(
      detail::coll_kind::reduce, values.data(), n, root,
      [&](const detail::coll_call& c) { return detail::reduce_on_leader<T>(c, n, op, false); },
      [&](const detail::byte_buffer& r) {
        if (mine) detail::copy_out(r, values);
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

/// Element-wise sum over every core's `values` (the same length everywhere),
/// written back into `values` on every core. Blocking; SPMD.
template <collective_value_like T>
void allreduce_sum(std::span<T> values) {
  allreduce(values, std::plus<T>{});
}

/// The sum of `x` over the cores before the caller, and over all cores, each
/// a left fold in core order. Blocking; SPMD. Costs an allgather of one T
/// per core, and cores() additions on every core.
template <collective_value_like T>
scan_result<T> exclusive_scan_sum(const T& x) {
  const gathered<T> all =
      detail::gather_impl<T>(detail::coll_kind::scan, std::span<const T>(&x, 1), 0, true, true);
  scan_result<T> r;
  const int me = mycore();
  for (int c = 0; c < cores(); ++c) {
    if (c == me) r.before = r.total;
    r.total = r.total + all.values[static_cast<std::size_t>(c)];
  }
  return r;
}

// ---- broadcast ----

/// Copies core `root`'s `values` into every core's `values` (the same
/// length everywhere). Blocking; SPMD.
template <collective_value_like T>
void broadcast(std::span<T> values, int root) {
  detail::check_root("broadcast", root);
  const auto n = static_cast<std::int64_t>(values.size());
  const auto bytes = n * static_cast<std::int64_t>(sizeof(T));
  detail::run_collective(
      detail::coll_kind::broadcast, values.data(), n, root,
      [&](const detail::coll_call& c) {
        detail::coll_check_local_counts(c, n);
        const int root_rank = rank_of(root);
        detail::byte_buffer payload;
        if (myrank() == root_rank) {
          payload = detail::byte_buffer::make(bytes);
          const void* src = c.slot->posts[static_cast<std::size_t>(root % local_cores())].data;
          if (bytes > 0) std::memcpy(payload.begin(), src, static_cast<std::size_t>(bytes));
        }
        payload = detail::broadcast_down(c, root_rank, std::move(payload));
        SHOAL_CHECK(payload.size == bytes,
                    "shoal::broadcast #{}: core {} (root) passed {} elements, core {} passed {}",
                    c.seq, root, payload.size / static_cast<std::int64_t>(sizeof(T)), mycore(), n);
        return payload;
      },
      [&](const detail::byte_buffer& r) {
        if (mycore() != root) detail::copy_out(r, values);
      });
}

/// Core `root`'s `x`, on every core. Blocking; SPMD.
template <collective_value_like T>
T broadcast(const T& x, int root) {
  T v = x;
  broadcast(std::span<T>(&v, 1), root);
  return v;
}

// ---- gather and allgather ----
// The span forms take std::span<T> or std::span<const T> and return values
// of T without const.

/// Every core's `mine` (any length per core), concatenated in core order,
/// on core `root`; other cores get an empty result. Blocking; SPMD.
template <class T, class U = std::remove_const_t<T>>
requires collective_value_like<U> gathered<U> gatherv(std::span<T> mine, int root) {
  detail::check_root("gather", root);
  return detail::gather_impl<U>(detail::coll_kind::gather, std::span<const U>(mine), root, false,
                                false);
}

/// Every core's `mine` (any length per core), concatenated in core order,
/// on every core. Blocking; SPMD.
template <class T, class U = std::remove_const_t<T>>
requires collective_value_like<U> gathered<U> allgatherv(std::span<T> mine) {
  return detail::gather_impl<U>(detail::coll_kind::allgather, std::span<const U>(mine), 0, true,
                                false);
}

/// Every core's `mine` (the same length everywhere), concatenated in core
/// order (cores() * mine.size() values), on core `root`; other cores get an
/// empty vector. Blocking; SPMD.
template <class T, class U = std::remove_const_t<T>>
requires collective_value_like<U> std::vector<U> gather(std::span<T> mine, int root) {
  detail::check_root("gather", root);
  return detail::gather_impl<U>(detail::coll_kind::gather, std::span<const U>(mine), root, false,
                                true)
      .values;
}

/// Every core's `mine` (the same length everywhere), concatenated in core
/// order, on every core. Blocking; SPMD.
template <class T, class U = std::remove_const_t<T>>
requires collective_value_like<U> std::vector<U> allgather(std::span<T> mine) {
  return detail::gather_impl<U>(detail::coll_kind::allgather, std::span<const U>(mine), 0, true,
                                true)
      .values;
}

/// Every core's `x`, indexed by core, on every core. Blocking; SPMD.
template <collective_value_like T>
std::vector<T> allgather(const T& x) {
  return allgather(std::span<const T>(&x, 1));
}

}  // namespace shoal
