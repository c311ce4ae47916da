// What the typed-channel run (distributed.cpp) and the target-channel run
// (routed.cpp) share about one core's part: its set-up from the keys, and
// its distributed check (the core's slots checked through the inverses, and
// a sample of its i checked forward by a round trip to each slot's owner).
#pragma once

#include <shoal/shoal.hpp>

#include <cstddef>
#include <cstdint>

#include "permutation/plain/permutation_problem.hpp"

namespace shoal_apps::permutation {

/// Fills the fields both runs' parts share (keys, layout, base, data, perm,
/// data_perm unwritten, forward's room, the test hook) for this core, from
/// a part reset to its default. Per core (on_all_cores).
template <class Part>
void fill_common_part(Part& c, const permutation_options& o, bool inject_fault) {
  c.keys = make_keys(o);
  c.layout = block_layout(static_cast<std::uint64_t>(o.elements), shoal::cores());
  c.base = c.layout.begin(shoal::mycore());
  const std::size_t n = c.layout.size(shoal::mycore());
  c.data.resize(n);
  c.perm.resize(n);
  c.data_perm.assign(n, unwritten);
  for (std::size_t k = 0; k < n; ++k) {
    c.data[k] = c.keys.data(c.base + k);
    c.perm[k] = c.keys.perm(c.base + k);
  }
  c.forward.reserve(4096);
  c.inject_fault = inject_fault;
}

/// `Parts` is the run's per-core part (keys, base, data, data_perm, layout,
/// writes, sample_wrong). Per core, SPMD; returns the job-wide tally.
template <auto& Parts>
permutation_tally check_sampled_part() {
  auto& c = Parts.local();
  permutation_tally t;
  t.writes = c.writes;
  check_slots(c.keys, c.base, c.data_perm.data(), c.data_perm.size(), t);
  const std::size_t n = c.data.size();
  const std::size_t stride = n / 256 + 1;
  shoal::completion_event replies(static_cast<std::int64_t>((n + stride - 1) / stride));
  shoal::completion_event* ev = &replies;
  const int home = shoal::mycore();
  for (std::size_t k = 0; k < n; k += stride) {
    const std::uint64_t i = c.base + k;
    const std::uint64_t j = c.keys.perm(c.keys.data(i));
    shoal::send(c.layout.owner(j), [i, j, home, ev] {
      auto& owner = Parts.local();
      const bool ok = owner.data_perm[j - owner.base] == i;
      shoal::send(home, [ok, ev] {
        if (!ok) ++Parts.local().sample_wrong;
        ev->complete();
      });
    });
    ++t.sampled;
  }
  shoal::flush();
  replies.wait();
  t.sample_wrong = c.sample_wrong;
  return shoal::allreduce(
      t, [](const permutation_tally& a, const permutation_tally& b) { return a + b; });
}

}  // namespace shoal_apps::permutation
