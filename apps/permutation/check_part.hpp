// The distributed check of one core's part, shared by the typed-channel run
// (distributed.cpp) and the target-channel run (routed.cpp): the core's
// slots checked through the inverses, and a sample of its i checked forward
// by a round trip to each slot's owner.
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>

#include "permutation/plain/permutation_problem.hpp"

namespace shoal_apps::permutation {

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
