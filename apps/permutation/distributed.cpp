// `shoal permutation --impl channel`: Active Pebbles' Permutation on shoal
// (see impls.hpp and permutation.cpp).
//
// The timed phase is one phase of dependent messages on two typed channels
// of 16-byte pebbles. Each core sends, for each of its i, {data[i], i} on
// `to_perm` to the owner of perm[data[i]]; that handler reads
// p = perm[data[i]], and {p, i} goes on `to_slot` to the owner of
// data_perm[p], whose handler stores i there. The to_perm handler leaves
// {p, i} in a per-core vector that the core's task sends every 64 of its
// own pebbles: a handler cannot wait for a free buffer, so sent from the
// handler they take overflow buffers (unbounded) whenever the pool is empty.
// Sending them from the handler measured the same speed (57 against 58 M
// elements/s at 2^25 on 1 process x 2 cores, once the aggregator stopped
// flushing every staged buffer at each overflow take; before that fix it was
// 14x slower), so the task sends them, within the pool's bounded memory.
// Handlers queue a few pebbles and prefetch the
// element each needs (pebble_queue), so their cache misses overlap.
//
// End of the phase (Active Pebbles' depth-two termination), from the
// library's channel phases: after its last pebble each core ends the phase
// of `to_perm` (channel::end_phase: every to_perm pebble has been handled
// everywhere; in a task of its own, while the core's task keeps
// forwarding), so its `forward` then holds the last dependent pebbles; it
// sends them, then ends the phase of `to_slot`, after which every slot is
// stored.
// A handler's prefetch queue still holds its last few pebbles when a phase
// ends: the task hands them out.
//
// --termination depth (Active Pebbles' depth-two termination detection,
// channel::end_phase_depth): one channel carries both kinds of pebble (the
// top bit of `where` marks a slot pebble); the perm handler sends the slot
// pebble itself (depth 2; from a handler, so it takes overflow buffers when
// the pool is empty), and one end_phase_depth(2) ends the phase in two
// rounds of markers, without counting. No prefetch queues on this path.
#include <shoal/shoal.hpp>

#include <chrono>
#include <cstdint>
#include <vector>

#include "permutation/check_part.hpp"
#include "permutation/impls.hpp"
#include "permutation/pebble_queue.hpp"

namespace shoal_apps::permutation {

namespace {

/// One core's blocks of the three arrays and its state in the phase.
struct core_part {
  permutation_keys keys{keyed_permutation(1, 0), keyed_permutation(1, 0)};
  block_layout layout{1, 1};
  std::uint64_t base = 0;  ///< first global index of this core's blocks
  std::vector<std::uint64_t> data, perm, data_perm;
  pebble_queue perm_queue, slot_queue;
  std::vector<pebble> forward;  ///< {p, i} the to_perm handler found, for the task to send
  std::int64_t writes = 0;
  std::int64_t sample_wrong = 0;
  bool inject_fault = false;
};

shoal::per_core<core_part> g_parts;

/// Stores p.i at data_perm[p.where] (this core's slot). Handler context.
void store(core_part& c, const pebble& p) {
  c.data_perm[p.where - c.base] = p.i;
  ++c.writes;
}

/// Applies perm to a queued pebble and leaves {p, i} for the task to send.
void apply_perm(core_part& c, const pebble& q) {
  const std::uint64_t p = c.perm[q.where - c.base];
  const std::uint64_t i = c.inject_fault && q.i == 0 ? 1 : q.i;  // test hook: i = 0 stored as 1
  c.forward.push_back(pebble{p, i});
}

/// The to_slot handler: queues the pebble and stores the one it pushes out.
struct slot_handler {
  void operator()(const pebble& p) const {
    core_part& c = g_parts.local();
    __builtin_prefetch(&c.data_perm[p.where - c.base], 1);
    c.slot_queue.push(p, [&c](const pebble& q) { store(c, q); });
  }
};

/// The to_perm handler: queues the pebble and applies perm to the one it
/// pushes out. It sends nothing: a handler cannot wait for a free buffer,
/// so the dependent pebbles go out from the core's task (send_forward),
/// which can.
struct perm_handler {
  void operator()(const pebble& p) const {
    core_part& c = g_parts.local();
    __builtin_prefetch(&c.perm[p.where - c.base]);
    c.perm_queue.push(p, [&c](const pebble& q) { apply_perm(c, q); });
  }
};

/// Fills this core's blocks from the keys. Per core (on_all_cores).
void fill_part(const permutation_options& o, bool inject_fault) {
  core_part& c = g_parts.local();
  c = core_part{};
  fill_common_part(c, o, inject_fault);
}

/// Sends the pebbles the to_perm handler left on to their slots' owners.
/// Task context: it may wait for buffers, and handlers that run meanwhile
/// add to a fresh vector.
void send_forward(core_part& c, const shoal::channel<pebble>& to_slot,
                  std::vector<pebble>& sending) {
  if (c.forward.empty()) return;
  sending.swap(c.forward);
  for (const pebble& q : sending) to_slot.send(c.layout.owner(q.where), q);
  sending.clear();
}

/// The timed phase on this core; returns its seconds (barrier to barrier).
/// Per core (on_all_cores), SPMD.
double permute_part(const shoal::channel<pebble>& to_perm, const shoal::channel<pebble>& to_slot) {
  core_part& c = g_parts.local();
  std::vector<pebble> sending;
  sending.reserve(4096);
  shoal::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = c.data.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t j = c.data[k];
    to_perm.send(c.layout.owner(j), pebble{j, c.base + k});
    if ((k & 63) == 63) {
      send_forward(c, to_slot, sending);
      shoal::yield();  // let this core serve the others' pebbles
    }
  }
  // The to_perm phase ends in a task of its own, so that this one keeps
  // forwarding what the handlers leave while the other cores finish.
  bool perm_ended = false;
  bool* ended = &perm_ended;
  shoal::spawn([to_perm, ended] {
    to_perm.end_phase();
    *ended = true;
  });
  while (!perm_ended) {
    send_forward(c, to_slot, sending);
    shoal::yield();
  }
  // Every to_perm pebble for this core has been handled: the queue's last
  // ones and `forward` hold the last dependent pebbles.
  c.perm_queue.drain([&c](const pebble& q) { apply_perm(c, q); });
  send_forward(c, to_slot, sending);
  to_slot.end_phase();
  c.slot_queue.drain([&c](const pebble& q) { store(c, q); });
  shoal::barrier();  // every core's slots stored before the clock stops
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Checks this core's slots through the inverses, and a sample of its i
/// forward (a round trip to each slot's owner). Per core, SPMD.
permutation_tally check_part() { return check_sampled_part<g_parts>(); }

constexpr std::uint64_t slot_kind = std::uint64_t{1} << 63;
/// Every core's handle of the one channel of --termination depth.
thread_local shoal::channel<pebble> t_both;

/// The one channel's handler: a slot pebble is stored; a data pebble has
/// perm applied and its slot pebble sent on (depth 2).
struct both_handler {
  void operator()(const pebble& p) const {
    core_part& c = g_parts.local();
    if ((p.where & slot_kind) != 0) {
      store(c, pebble{p.where & ~slot_kind, p.i});
      return;
    }
    const std::uint64_t q = c.perm[p.where - c.base];
    const std::uint64_t i = c.inject_fault && p.i == 0 ? 1 : p.i;  // test hook, as apply_perm
    t_both.send(c.layout.owner(q), pebble{q | slot_kind, i});
  }
};

/// The timed phase of --termination depth on this core. Per core, SPMD.
double permute_part_depth(const shoal::channel<pebble>& both) {
  core_part& c = g_parts.local();
  shoal::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = c.data.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t j = c.data[k];
    both.send(c.layout.owner(j), pebble{j, c.base + k});
    if ((k & 63) == 63) shoal::yield();  // let this core serve the others' pebbles
  }
  both.end_phase_depth(2);  // every data pebble, and the slot pebble it caused, handled
  shoal::barrier();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

run_outcome run_depth(const permutation_options& o, const test_hooks& hooks) {
  shoal::channel<pebble> both = shoal::make_channel<pebble>(both_handler{});
  run_outcome r;
  run_outcome* out = &r;  // dereferenced on core 0 only (the root's core)
  const permutation_options opts = o;
  const bool fault = hooks.inject_fault;
  shoal::on_all_cores([opts, fault, both] {
    fill_part(opts, fault);
    t_both = both;
  });
  shoal::on_all_cores([both, out] {
    const double s = permute_part_depth(both);
    const permutation_tally t = check_part();
    if (shoal::mycore() == 0) {
      out->seconds = s;
      out->tally = t;
    }
  });
  both.close();
  shoal::on_all_cores([] {
    g_parts.local() = core_part{};
    t_both = shoal::channel<pebble>();
  });
  return r;
}

}  // namespace

run_outcome run_distributed(const permutation_options& o, const test_hooks& hooks,
                            termination how) {
  if (how == termination::depth) return run_depth(o, hooks);
  shoal::channel<pebble> to_slot = shoal::make_channel<pebble>(slot_handler{});
  shoal::channel<pebble> to_perm = shoal::make_channel<pebble>(perm_handler{});
  run_outcome r;
  run_outcome* out = &r;  // dereferenced on core 0 only (the root's core)
  const permutation_options opts = o;
  const bool fault = hooks.inject_fault;
  shoal::on_all_cores([opts, fault] { fill_part(opts, fault); });
  shoal::on_all_cores([to_perm, to_slot, out] {
    const double s = permute_part(to_perm, to_slot);
    const permutation_tally t = check_part();
    if (shoal::mycore() == 0) {
      out->seconds = s;
      out->tally = t;
    }
  });
  to_perm.close();
  to_slot.close();
  shoal::on_all_cores([] { g_parts.local() = core_part{}; });  // free the arrays
  return r;
}

}  // namespace shoal_apps::permutation
