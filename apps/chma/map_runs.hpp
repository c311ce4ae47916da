// The shoal implementations of `shoal chma` and what a run reports.
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>
#include <vector>

#include "chma/plain/chma_problem.hpp"

namespace shoal_apps::chma {

/// After the steps: the counts and digest of core state `s` (its shard,
/// lookups, inserts) summed over the job; core 0 stores them in *out. With
/// `gather`, every shard's keys also go to core 0, into its `s.gathered`.
/// Task, every core (SPMD).
template <class CoreState>
void collect_totals(CoreState& s, map_totals* out, shoal::channel<str_key> to_core0, bool gather) {
  map_totals mine{static_cast<std::int64_t>(s.shard.size()), 0, s.lookups, s.inserts};
  s.shard.for_each([&](const str_key& k) {
    mine.digest += key_hash(k);
    if (gather) to_core0.send(0, k);
  });
  const map_totals all = shoal::allreduce(mine, [](const map_totals& a, const map_totals& b) {
    return map_totals{a.keys + b.keys, a.digest + b.digest, a.lookups + b.lookups,
                      a.inserts + b.inserts};
  });
  if (shoal::mycore() != 0) return;
  *out = all;
  // Keys from one core arrive in order; wait for them all (untimed).
  while (gather && static_cast<std::int64_t>(s.gathered.size()) < all.keys) shoal::yield();
}

/// One run (rank 0's view): the final map's totals, the timed steps, and
/// every key of the final map when asked for.
struct channel_result {
  map_totals totals;
  double seconds = 0;
  std::vector<str_key> keys;
};

/// Each populates the distributed map (untimed), runs every task's steps
/// (timed) and collects the totals (and keys, when `gather_keys`) on rank 0.
/// Collective: call on every rank with the same problem.
///
/// Tasks migrate with their accesses: one message per access (map_migrate.cpp).
channel_result run_migrate(const chma_problem& p, bool gather_keys);
/// Tasks stay home; each access is a request and a reply (map_split_phase.cpp).
channel_result run_split_phase(const chma_problem& p, bool gather_keys);
/// On shoal::set and shoal::array: each access a chain of container
/// operations (map_container.cpp).
channel_result run_on_containers(const chma_problem& p, bool gather_keys);

}  // namespace shoal_apps::chma
