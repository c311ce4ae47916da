// `shoal permutation --impl sequential`: the permutation in one loop on one
// core, the reference the distributed run is compared with (see impls.hpp).
#include <chrono>
#include <cstdint>
#include <vector>

#include "permutation/impls.hpp"

namespace shoal_apps::permutation {

namespace {
/// How far ahead the loop prefetches perm[data[i]] and data_perm[perm[data[i]]]:
/// the random loads of later elements overlap, as the channel handlers' queues do.
constexpr std::size_t perm_ahead = 16;
constexpr std::size_t slot_ahead = 8;

/// data_perm[perm[data[i]]] = i for every i; returns the number of stores.
std::int64_t permute(const std::vector<std::uint64_t>& data, const std::vector<std::uint64_t>& perm,
                     std::vector<std::uint64_t>& data_perm, bool inject_fault) {
  const std::size_t n = data.size();
  std::int64_t writes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + perm_ahead < n) __builtin_prefetch(&perm[data[i + perm_ahead]]);
    if (i + slot_ahead < n) __builtin_prefetch(&data_perm[perm[data[i + slot_ahead]]], 1);
    data_perm[perm[data[i]]] = i;
    ++writes;
  }
  if (inject_fault) data_perm[perm[data[0]]] = 1;  // i = 0 stored as 1
  return writes;
}
}  // namespace

run_outcome run_sequential(const permutation_options& o, const test_hooks& hooks) {
  const permutation_keys keys = make_keys(o);
  const auto n = static_cast<std::size_t>(o.elements);
  std::vector<std::uint64_t> data(n), perm(n), data_perm(n, unwritten);
  for (std::size_t i = 0; i < n; ++i) {
    data[i] = keys.data(i);
    perm[i] = keys.perm(i);
  }
  run_outcome r;
  const auto t0 = std::chrono::steady_clock::now();
  r.tally.writes = permute(data, perm, data_perm, hooks.inject_fault);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  check_slots(keys, 0, data_perm.data(), n, r.tally);
  // Forward, through the functions rather than the arrays: a sample of i.
  const std::size_t stride = n / 4096 + 1;
  for (std::size_t i = 0; i < n; i += stride) {
    ++r.tally.sampled;
    if (data_perm[keys.perm(keys.data(i))] != i) ++r.tally.sample_wrong;
  }
  return r;
}

}  // namespace shoal_apps::permutation
