// `shoal permutation --routing hypercube|node` and `--reduce dedup`: the
// distributed run on the library's target channels (Active Pebbles 3.2-3.5)
// instead of typed channels addressed to cores (distributed.cpp).
//
// The arrays are block-distributed as in distributed.cpp; a distribution
// over the same block_layout turns an index into its owner core and local
// index, so pebbles are addressed to elements, not cores:
//   --termination phases  two target channels: to_perm (target j = data[i],
//                         value i; its handler reads p = perm[j] and leaves
//                         {p, i} for the core's task to send on) and to_slot
//                         (target p, value i; its handler stores i). Each
//                         ends with end_phase, which counts values in transit
//                         at routing hops.
//   --termination depth   one target channel whose targets are 2j (a data
//                         pebble for perm[j]) and 2p + 1 (a slot pebble for
//                         data_perm[p]); the perm handler sends the slot
//                         pebble itself. Depth two without routing; every
//                         routing hop is one level more (routing.hpp), so the
//                         phase ends with end_phase_depth(2 * h), h the most
//                         hops any value takes under the routing at this
//                         process count (counted, not assumed).
// --reduce dedup puts reduction::drop_duplicates on the channels (a cache at
// the source and at every hop, keyed by target). A permutation sends
// exactly one pebble to each target, so the cache can remove nothing: the
// run measures that (messages removed, and duplicates counted by the app
// itself: arrivals at an element or slot already reached) and what the
// cache costs.
// --termination phases: the handlers queue a few pebbles and prefetch the
// element each needs (pebble_queue.hpp, as distributed.cpp), and the task
// hands out what the queues hold once each phase has ended. --termination
// depth: none (a queued pebble would be left over when the phase ends).
#include <shoal/shoal.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

#include "permutation/check_part.hpp"
#include "permutation/impls.hpp"
#include "permutation/pebble_queue.hpp"

namespace shoal_apps::permutation {

namespace {

/// Elements of the block layout as targets: j -> (owner, j - begin(owner)).
/// (No targets(): the handle must stay small enough for a closure; an index
/// past the end maps to a core past the job, which the channel refuses.)
struct element_targets {
  block_layout layout{1, 1};
  shoal::target_location locate(std::uint64_t j) const noexcept {
    const int c = layout.owner(j);
    return {c, j - layout.begin(c)};
  }
  const char* name() const noexcept { return "permutation elements (block)"; }
};

/// Both kinds of pebble of --termination depth as targets: 2j + kind, kind
/// 0 for perm[j] and 1 for data_perm[j]; local index 2 (j - begin) + kind.
struct pebble_targets {
  block_layout layout{1, 1};
  shoal::target_location locate(std::uint64_t t) const noexcept {
    const std::uint64_t j = t >> 1;
    const int c = layout.owner(j);
    return {c, ((j - layout.begin(c)) << 1) | (t & 1)};
  }
  const char* name() const noexcept { return "permutation pebbles (2j + kind, block)"; }
};

/// One core's blocks and what its handlers counted.
struct routed_part {
  permutation_keys keys{keyed_permutation(1, 0), keyed_permutation(1, 0)};
  block_layout layout{1, 1};
  std::uint64_t base = 0;
  std::vector<std::uint64_t> data, perm, data_perm;
  std::vector<std::uint8_t> perm_reached;  ///< perm[j] already applied (a pebble arrived)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> forward;  ///< {p, i} for the task
  pebble_queue perm_queue, slot_queue;  ///< --termination phases: {local index, i}
  std::int64_t writes = 0;
  std::int64_t arrivals = 0;    ///< pebbles handled (both kinds)
  std::int64_t duplicates = 0;  ///< of them, at an element or slot already reached
  std::int64_t sample_wrong = 0;
  bool inject_fault = false;
};

shoal::per_core<routed_part> g_routed;

template <class D, class R>
using chan = shoal::target_channel<std::uint64_t, D, R, shoal::named_routing>;

/// The data pebble of element `local` of this core arrived with i: apply
/// perm; returns {p, i} for the slot pebble.
std::pair<std::uint64_t, std::uint64_t> on_data(routed_part& c, std::uint64_t local,
                                                std::uint64_t i) {
  ++c.arrivals;
  if (c.perm_reached[local] != 0) ++c.duplicates;
  c.perm_reached[local] = 1;
  const std::uint64_t p = c.perm[local];
  return {p, c.inject_fault && i == 0 ? 1 : i};  // test hook: i = 0 stored as 1
}

/// The slot pebble for slot `local` of this core arrived with i: store it.
void on_slot(routed_part& c, std::uint64_t local, std::uint64_t i) {
  ++c.arrivals;
  if (c.data_perm[local] != unwritten) ++c.duplicates;
  c.data_perm[local] = i;
  ++c.writes;
}

void fill_routed(const permutation_options& o, bool inject_fault) {
  routed_part& c = g_routed.local();
  c = routed_part{};
  fill_common_part(c, o, inject_fault);
  c.perm_reached.assign(c.data.size(), 0);
}

/// The most hops a value takes between two processes under `r` with
/// `ranks` processes (1 for a job of one process): walks every pair.
int most_hops(const shoal::named_routing& r, int ranks) {
  int most = 1;
  for (int from = 0; from < ranks; ++from) {
    for (int to = 0; to < ranks; ++to) {
      if (from == to) continue;
      int hops = 0;
      for (int at = from; at != to && hops <= ranks; ++hops) at = r.next_rank(at, to, ranks);
      if (hops > most) most = hops;
    }
  }
  return most;
}

/// This core's slots checked through the inverses, and a sample forward by
/// round trips to the slots' owners (as distributed.cpp). SPMD.
permutation_tally check_routed() { return check_sampled_part<g_routed>(); }

/// The counts of the run into `out` (core 0). SPMD, after the phase.
template <class... Channels>
void take_counts(routed_counts* out, const Channels&... chs) {
  const routed_part& c = g_routed.local();
  routed_counts k;
  k.traffic = sum_routed_traffic(chs...);
  k.arrivals = shoal::allreduce_sum(c.arrivals);
  k.duplicates = shoal::allreduce_sum(c.duplicates);
  if (shoal::mycore() == 0) *out = k;
}

/// Starts the clock after a barrier; notes this process's MPI traffic.
std::chrono::steady_clock::time_point start_phase() {
  mark_phase_traffic();
  shoal::barrier();
  return std::chrono::steady_clock::now();
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --termination phases -----------------------------------------------------

/// Every core's handles of the two channels (a closure cannot carry both).
template <class R>
thread_local chan<element_targets, R> t_to_perm;
template <class R>
thread_local chan<element_targets, R> t_to_slot;

template <class R>
void send_forward(routed_part& c, const chan<element_targets, R>& to_slot,
                  std::vector<std::pair<std::uint64_t, std::uint64_t>>& sending) {
  if (c.forward.empty()) return;
  sending.swap(c.forward);
  for (const auto& [p, i] : sending) to_slot.send(p, i);
  sending.clear();
}

template <class R>
double permute_phases(const chan<element_targets, R>& to_perm,
                      const chan<element_targets, R>& to_slot) {
  routed_part& c = g_routed.local();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> sending;
  sending.reserve(4096);
  const auto t0 = start_phase();
  const std::size_t n = c.data.size();
  for (std::size_t k = 0; k < n; ++k) {
    to_perm.send(c.data[k], c.base + k);
    if ((k & 63) == 63) {
      send_forward<R>(c, to_slot, sending);
      shoal::yield();
    }
  }
  // As distributed.cpp: the to_perm phase ends in a task of its own while
  // this one forwards what the handlers leave.
  bool perm_ended = false;
  bool* ended = &perm_ended;
  shoal::spawn([to_perm, ended] {
    to_perm.end_phase();
    *ended = true;
  });
  while (!perm_ended) {
    send_forward<R>(c, to_slot, sending);
    shoal::yield();
  }
  // Every to_perm pebble for this core has been handled: the queue's last
  // ones and `forward` hold the last dependent pebbles.
  c.perm_queue.drain([&c](const pebble& q) { c.forward.push_back(on_data(c, q.where, q.i)); });
  send_forward<R>(c, to_slot, sending);
  to_slot.end_phase();
  c.slot_queue.drain([&c](const pebble& q) { on_slot(c, q.where, q.i); });
  shoal::barrier();
  return since(t0);
}

template <class R>
run_outcome run_phases(const permutation_options& o, const test_hooks& hooks,
                       const route_choice& how, routed_counts* counts) {
  const element_targets d{block_layout(static_cast<std::uint64_t>(o.elements), shoal::cores())};
  const shoal::target_channel_options co{.cache_slots = how.reduce_dedup ? how.cache_slots : 0};
  const auto to_perm = shoal::make_target_channel<std::uint64_t>(
      d,
      [](std::uint64_t local, const std::uint64_t& i) {
        routed_part& c = g_routed.local();
        __builtin_prefetch(&c.perm[local]);
        __builtin_prefetch(&c.perm_reached[local], 1);
        c.perm_queue.push(pebble{local, i},
                          [&c](const pebble& q) { c.forward.push_back(on_data(c, q.where, q.i)); });
      },
      co, R{}, how.routing);
  const auto to_slot = shoal::make_target_channel<std::uint64_t>(
      d,
      [](std::uint64_t local, const std::uint64_t& i) {
        routed_part& c = g_routed.local();
        __builtin_prefetch(&c.data_perm[local], 1);
        c.slot_queue.push(pebble{local, i}, [&c](const pebble& q) { on_slot(c, q.where, q.i); });
      },
      co, R{}, how.routing);
  run_outcome r;
  run_outcome* out = &r;
  const permutation_options opts = o;
  const bool fault = hooks.inject_fault;
  shoal::on_all_cores([opts, fault] { fill_routed(opts, fault); });
  shoal::on_all_cores([to_perm] { t_to_perm<R> = to_perm; });
  shoal::on_all_cores([to_slot] { t_to_slot<R> = to_slot; });
  shoal::on_all_cores([out, counts] {
    const double s = permute_phases<R>(t_to_perm<R>, t_to_slot<R>);
    take_counts(counts, t_to_perm<R>, t_to_slot<R>);
    const permutation_tally t = check_routed();
    if (shoal::mycore() == 0) {
      out->seconds = s;
      out->tally = t;
    }
  });
  auto a = to_perm;
  auto b = to_slot;
  a.close();
  b.close();
  shoal::on_all_cores([] {
    g_routed.local() = routed_part{};
    t_to_perm<R> = chan<element_targets, R>();
    t_to_slot<R> = chan<element_targets, R>();
  });
  return r;
}

// --termination depth ------------------------------------------------------

template <class R>
thread_local chan<pebble_targets, R> t_both;

template <class R>
struct both_handler {
  void operator()(std::uint64_t local, const std::uint64_t& i) const {
    routed_part& c = g_routed.local();
    if ((local & 1) != 0) {
      on_slot(c, local >> 1, i);
      return;
    }
    const auto [p, v] = on_data(c, local >> 1, i);
    t_both<R>.send(2 * p + 1, v);  // depth + 1 (one more per routing hop)
  }
};

template <class R>
run_outcome run_depth(const permutation_options& o, const test_hooks& hooks,
                      const route_choice& how, routed_counts* counts) {
  const pebble_targets d{block_layout(static_cast<std::uint64_t>(o.elements), shoal::cores())};
  const shoal::target_channel_options co{.cache_slots = how.reduce_dedup ? how.cache_slots : 0};
  const auto both =
      shoal::make_target_channel<std::uint64_t>(d, both_handler<R>{}, co, R{}, how.routing);
  const int depth = 2 * most_hops(how.routing, shoal::ranks());
  run_outcome r;
  run_outcome* out = &r;
  const permutation_options opts = o;
  const bool fault = hooks.inject_fault;
  shoal::on_all_cores([opts, fault] { fill_routed(opts, fault); });
  shoal::on_all_cores([both] { t_both<R> = both; });
  shoal::on_all_cores([out, counts, depth] {
    const chan<pebble_targets, R>& both = t_both<R>;
    routed_part& c = g_routed.local();
    const auto t0 = start_phase();
    const std::size_t n = c.data.size();
    for (std::size_t k = 0; k < n; ++k) {
      both.send(2 * c.data[k], c.base + k);
      if ((k & 63) == 63) shoal::yield();
    }
    both.end_phase_depth(depth);
    shoal::barrier();
    const double s = since(t0);
    take_counts(counts, both);
    const permutation_tally t = check_routed();
    if (shoal::mycore() == 0) {
      out->seconds = s;
      out->tally = t;
    }
  });
  counts->depth = depth;
  auto b = both;
  b.close();
  shoal::on_all_cores([] {
    g_routed.local() = routed_part{};
    t_both<R> = chan<pebble_targets, R>();
  });
  return r;
}

}  // namespace

run_outcome run_routed(const permutation_options& o, const test_hooks& hooks, termination how,
                       const route_choice& route, routed_counts& counts) {
  counts = routed_counts{};
  counts.depth = 0;
  using none = shoal::reduction::none;
  using dedup = shoal::reduction::drop_duplicates;
  if (how == termination::depth)
    return route.reduce_dedup ? run_depth<dedup>(o, hooks, route, &counts)
                              : run_depth<none>(o, hooks, route, &counts);
  return route.reduce_dedup ? run_phases<dedup>(o, hooks, route, &counts)
                            : run_phases<none>(o, hooks, route, &counts);
}

}  // namespace shoal_apps::permutation
