// Checks of shoal::bcl::hash_map_buffer (bcl/hash_map_buffer.hpp), shared
// by test_bcl_hash_map_buffer.cpp (one process) and mpi/bcl_job.cpp (every
// backend, several processes). Each returns the number of wrong values it
// saw (0: passed); call from the root task.
#pragma once

#include "bcl_check_support.hpp"

#include "shoal/bcl/hash_map_buffer.hpp"

#include <cstdint>
#include <optional>

#include "bcl_hash_map_checks.hpp"

namespace bcl_hash_map_buffer_checks {

using bcl_hash_map_checks::counters;
using bcl_hash_map_checks::map;
using bcl_hash_map_checks::u64;
using buffer = shoal::bcl::hash_map_buffer<u64, u64>;
using shoal::bcl::hash_promise;

/// Two insert phases through one buffer. Phase 1: core c inserts keys
/// i * n + c and also keys 0 .. shared-1 (every core: duplicates); phase 2
/// replaces the values of the first half. After each flush the totals are
/// exact and every key is found (find_only) with a value of the phase.
/// `queue` small makes pushes meet a full queue (atomic inserts instead).
inline u64 two_phases(u64 per, u64 shared, u64 queue, u64 message) {
  const map m = map::make(4 * (per + shared));
  const auto cnt = counters(1);
  // 32-bit copies: the closure holds 48 bytes.
  const auto p32 = static_cast<std::uint32_t>(per), s32 = static_cast<std::uint32_t>(shared);
  const auto q32 = static_cast<std::uint32_t>(queue), m32 = static_cast<std::uint32_t>(message);
  shoal::on_all_cores([m, cnt, p32, s32, q32, m32] {
    const u64 per = p32, shared = s32, queue = q32, message = m32;
    map h = m;
    const auto n = static_cast<u64>(shoal::cores());
    const auto me = static_cast<u64>(shoal::mycore());
    const u64 base = 1u << 20;  // own keys above the shared ones
    u64 wrong = 0;
    buffer buf(h, queue, message);
    for (u64 i = 0; i < per; ++i) buf.insert(base + i * n + me, i);
    for (u64 k = 0; k < shared; ++k) buf.insert(k, k * 10 + me);
    buffer::flush_result r = buf.flush();
    if (r.inserted != per * n + shared || r.updated != shared * (n - 1) || r.full != 0) ++wrong;
    for (u64 i = 0; i < per; ++i) {
      const u64 k = base + i * n + (me + 1) % n;  // the next core's keys
      if (h.find(k, hash_promise::find_only) != std::optional<u64>(i)) ++wrong;
    }
    for (u64 k = 0; k < shared; ++k) {
      const std::optional<u64> got = h.find(k, hash_promise::find_only);
      if (!got || *got / 10 != k || *got % 10 >= n) ++wrong;
    }
    shoal::barrier();  // finds of phase 1 end before phase 2 changes values
    for (u64 i = 0; i < per / 2; ++i) buf.insert(base + i * n + me, i + 7);
    r = buf.flush();
    if (r.inserted != 0 || r.updated != per / 2 * n || r.full != 0) ++wrong;
    for (u64 i = 0; i < per; ++i) {
      const u64 k = base + i * n + (me + 1) % n;
      if (h.find(k) != std::optional<u64>(i < per / 2 ? i + 7 : i)) ++wrong;
    }
    buf.destroy();
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, m);
}

/// More distinct keys than the table holds: flush reports exactly the
/// entries refused (computed here from each key's home), and the inserted
/// ones are all found.
inline u64 full_table_reported(u64 per_core, u64 per) {
  const int n = shoal::cores();
  const map m = map::make(per_core);
  std::vector<u64> homed(static_cast<std::size_t>(n), 0);
  for (u64 k = 0; k < per * static_cast<u64>(n); ++k) ++homed[static_cast<std::size_t>(m.home(k))];
  u64 refused = 0;
  for (u64 h : homed) refused += h > per_core ? h - per_core : 0;
  const auto cnt = counters(3);  // wrong, found, reported full
  shoal::on_all_cores([m, cnt, per] {
    map h = m;
    const auto n = static_cast<u64>(shoal::cores());
    const auto me = static_cast<u64>(shoal::mycore());
    buffer buf(h, 64, 8);
    for (u64 i = 0; i < per; ++i) buf.insert(i * n + me, i);
    const buffer::flush_result r = buf.flush();
    u64 found = 0, wrong = 0;
    for (u64 i = 0; i < per; ++i)
      if (const auto got = h.find(i * n + me, hash_promise::find_only)) {
        ++found;
        if (*got != i) ++wrong;
      }
    if (r.inserted + r.full != per * n || r.updated != 0) ++wrong;
    buf.destroy();
    shoal::fetch_add(cnt, wrong);
    shoal::fetch_add(cnt + 1, found);
    if (me == 0) shoal::fetch_add(cnt + 2, r.full);
  });
  u64 wrong = shoal::rget(cnt);
  if (shoal::rget(cnt + 2) != refused) ++wrong;
  if (shoal::rget(cnt + 1) != per * static_cast<u64>(n) - refused) ++wrong;
  if (refused == 0) ++wrong;  // the check must really overfill
  map d = m;
  d.destroy();
  shoal::global_free(cnt);
  return wrong;
}

/// Counter phases (add, then add_existing) through one buffer: every core
/// adds 1 to keys 0 .. keys-1 (each key from every core),
/// then adds 1 to keys 0 .. 2 keys-1 if present. The totals and every count
/// are exact (n, then 2 n; the absent half untouched). `message` small:
/// many stages fill before each flush. `queue` (0: room for every entry)
/// as small as `message`: later pushes find it full, and those entries
/// take the atomic add and add_existing at flush.
inline u64 counter_phases(u64 keys, u64 message, u64 queue = 0) {
  const map m = map::make(4 * keys);
  const auto cnt = counters(1);
  const auto k32 = static_cast<std::uint32_t>(keys), m32 = static_cast<std::uint32_t>(message);
  const auto q32 = static_cast<std::uint32_t>(queue);
  shoal::on_all_cores([m, cnt, k32, m32, q32] {
    const u64 keys = k32, message = m32;
    map h = m;
    const auto n = static_cast<u64>(shoal::cores());
    u64 wrong = 0;
    buffer buf(h, q32 != 0 ? u64{q32} : 4 * keys * n, message);
    for (u64 k = 0; k < keys; ++k) buf.add(k, 1);
    buffer::flush_result r = buf.flush_as(shoal::bcl::hash_apply::add);
    if (r.inserted != keys || r.updated != keys * (n - 1) || r.full != 0) ++wrong;
    for (u64 k = 0; k < keys; ++k)
      if (h.find(k, hash_promise::find_only) != std::optional<u64>(n)) ++wrong;
    shoal::barrier();  // finds end before the next phase changes counts
    for (u64 k = 0; k < 2 * keys; ++k) buf.add_existing(k, 1);
    r = buf.flush_as(shoal::bcl::hash_apply::add_existing);
    if (r.updated != keys * n || r.absent != keys * n || r.inserted != 0) ++wrong;
    for (u64 k = 0; k < 2 * keys; ++k)
      if (h.find(k) != (k < keys ? std::optional<u64>(2 * n) : std::nullopt)) ++wrong;
    buf.destroy();
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, m);
}

}  // namespace bcl_hash_map_buffer_checks
