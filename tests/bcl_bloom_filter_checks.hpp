// Checks of shoal::bcl::bloom_filter (bcl/bloom_filter.hpp), shared by
// test_bcl_bloom_filter.cpp (one process) and mpi/bcl_job.cpp (every
// backend, several processes). Each returns the number of wrong values it
// saw (0: passed); call from the root task.
#pragma once

#include "shoal/bcl/bloom_filter.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "bcl_hash_map_checks.hpp"

namespace bcl_bloom_filter_checks {

using bcl_hash_map_checks::counters;
using bcl_hash_map_checks::u64;
using filter = shoal::bcl::bloom_filter<u64>;
using shoal::bcl::bloom_insert;

/// Every core inserts the same values in the same order (racing on each):
/// exactly one insert per value is told added (the filter is large enough
/// that these values meet no false positive: the hash is fixed, so this is
/// deterministic); a second insert is told already_present; after the
/// barrier every core finds every value.
inline u64 same_values_from_every_core(u64 values) {
  const filter f = filter::make(1 << 14, 4);
  const auto cnt = counters(2);  // added, wrong
  shoal::on_all_cores([f, cnt, values] {
    filter g = f;
    u64 added = 0, wrong = 0;
    for (u64 v = 0; v < values; ++v)
      if (g.insert(v * 977 + 5) == bloom_insert::added) ++added;
    for (u64 v = 0; v < values; ++v)
      if (g.insert(v * 977 + 5) != bloom_insert::already_present) ++wrong;
    shoal::rflush();
    shoal::barrier();
    for (u64 v = 0; v < values; ++v)
      if (!g.find(v * 977 + 5)) ++wrong;
    shoal::fetch_add(cnt, added);
    shoal::fetch_add(cnt + 1, wrong);
  });
  u64 wrong = shoal::rget(cnt + 1);
  if (shoal::rget(cnt) != values) ++wrong;
  filter d = f;
  d.destroy();
  shoal::global_free(cnt);
  return wrong;
}

/// The blocked filter's false-positive rate (the header's formula) for n
/// values in w words with k bits each.
inline double predicted_rate(double n, double w, int k) {
  const double lambda = n / w;
  double rate = 0, poisson = std::exp(-lambda);  // P(j = 0)
  for (int j = 0; j < 200; ++j) {
    rate += poisson * std::pow(1 - std::pow(63.0 / 64.0, k * j), k);
    poisson *= lambda / (j + 1);
  }
  return rate;
}

/// Inserts n values from every core, then queries `queries` values never
/// inserted: no inserted value is missed, and the share of the others
/// found is within a loose bound of predicted_rate (a quarter of it, or 4
/// standard deviations, whichever is larger). Prints both on rank 0 when
/// `print`.
inline u64 false_positive_rate(u64 n, u64 words, int k, u64 queries, bool print) {
  const filter f = filter::make(words, k);
  const auto cnt = counters(2);  // positives, missed
  shoal::on_all_cores([f, cnt, n, queries] {
    filter g = f;
    const auto c = static_cast<u64>(shoal::cores());
    const auto me = static_cast<u64>(shoal::mycore());
    for (u64 i = me; i < n; i += c) g.insert(i * 2 + 1);  // odd values inserted
    shoal::rflush();
    shoal::barrier();
    u64 positives = 0, missed = 0;
    for (u64 i = me; i < queries; i += c)
      if (g.find(i * 2)) ++positives;  // even values never were
    for (u64 i = me; i < n; i += c)
      if (!g.find(i * 2 + 1)) ++missed;
    shoal::fetch_add(cnt, positives);
    shoal::fetch_add(cnt + 1, missed);
  });
  const double measured = static_cast<double>(shoal::rget(cnt)) / static_cast<double>(queries);
  const double want = predicted_rate(static_cast<double>(n), static_cast<double>(words), k);
  const double sigma = std::sqrt(want * (1 - want) / static_cast<double>(queries));
  if (print)
    std::printf(
        "bloom_filter: %llu values in %llu words, k %d: false positives %.4f, "
        "predicted %.4f\n",
        static_cast<unsigned long long>(n), static_cast<unsigned long long>(words), k, measured,
        want);
  u64 wrong = shoal::rget(cnt + 1);
  if (std::abs(measured - want) > std::max(0.25 * want, 4 * sigma)) ++wrong;
  filter d = f;
  d.destroy();
  shoal::global_free(cnt);
  return wrong;
}

}  // namespace bcl_bloom_filter_checks
