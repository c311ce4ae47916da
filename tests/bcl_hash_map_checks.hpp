// Checks of shoal::bcl::hash_map (bcl/hash_map.hpp), shared by
// test_bcl_hash_map.cpp (one process) and mpi/bcl_job.cpp (every backend,
// several processes). Each returns the number of wrong values it saw (0:
// passed); call from the root task.
#pragma once

#include "bcl_check_support.hpp"

#include "shoal/bcl/hash_map.hpp"
#include "shoal/shoal.hpp"

#include <cstdint>
#include <optional>

namespace bcl_hash_map_checks {

using u64 = std::uint64_t;
using map = shoal::bcl::hash_map<u64, u64>;
using shoal::bcl::hash_insert;
using shoal::bcl::hash_promise;
static_assert(sizeof(map) <= 24);
static_assert(sizeof(map::bucket) == 32);

/// Zeroed counters on core 0 (reused heap memory is not zero).
inline shoal::global_ptr<u64> counters(int n) {
  const auto c = shoal::global_alloc<u64>(8 * shoal::cores());
  for (int i = 0; i < n; ++i) shoal::rput(c + i, u64{0});
  shoal::rflush();
  return c;
}

inline u64 value_of(u64 key, int core) { return key * 1000 + static_cast<u64>(core); }

/// Every core inserts the same `keys` keys at once (value: key and core),
/// then, after a barrier, finds each with both find forms, and finds
/// `keys` missing keys. Exactly one insert per key reports inserted, the
/// others updated; every key is found with a value some core wrote; no
/// missing key is found.
inline u64 same_keys_from_every_core(u64 keys, u64 per_core) {
  const int n = shoal::cores();
  const map m = map::make(per_core);
  const auto cnt = counters(4);  // inserted, updated, full, wrong
  shoal::on_all_cores([m, cnt, keys] {
    map h = m;
    const int me = shoal::mycore();
    u64 ins = 0, upd = 0, full = 0, wrong = 0;
    for (u64 i = 0; i < keys; ++i) {
      const u64 k = i;  // every core the same order: they race on each key
      switch (h.insert(k, value_of(k, me))) {
        case hash_insert::inserted:
          ++ins;
          break;
        case hash_insert::updated:
          ++upd;
          break;
        case hash_insert::full:
          ++full;
          break;
      }
      // Visible to this core's find as soon as insert returned.
      const std::optional<u64> got = h.find(k);
      if (!got || *got / 1000 != k) ++wrong;
    }
    shoal::barrier();
    const int n = shoal::cores();
    for (u64 k = 0; k < keys; ++k) {
      for (hash_promise p : {hash_promise::atomic, hash_promise::find_only}) {
        const std::optional<u64> got = h.find(k, p);
        if (!got || *got / 1000 != k || *got % 1000 >= static_cast<u64>(n)) ++wrong;
      }
      if (h.find(k + keys) || h.find(k + keys, hash_promise::find_only)) ++wrong;
    }
    shoal::fetch_add(cnt, ins);
    shoal::fetch_add(cnt + 1, upd);
    shoal::fetch_add(cnt + 2, full);
    shoal::fetch_add(cnt + 3, wrong);
  });
  u64 wrong = shoal::rget(cnt + 3);
  if (shoal::rget(cnt) != keys) ++wrong;
  if (shoal::rget(cnt + 1) != keys * static_cast<u64>(n - 1)) ++wrong;
  if (shoal::rget(cnt + 2) != 0) ++wrong;
  map d = m;
  d.destroy();
  shoal::global_free(cnt);
  return wrong;
}

/// Inserts from every core while every core also finds keys of the others:
/// a find during the insert phase returns either nothing or the value that
/// was inserted (never another key's, never a torn one).
inline u64 finds_during_inserts(u64 per) {
  const map m = map::make(3 * per);  // a third full: no part overflows
  const auto cnt = counters(1);
  shoal::on_all_cores([m, cnt, per] {
    map h = m;
    const int me = shoal::mycore();
    const int n = shoal::cores();
    const int other = (me + 1) % n;
    u64 wrong = 0;
    for (u64 i = 0; i < per; ++i) {
      const u64 mine = i * static_cast<u64>(n) + static_cast<u64>(me);
      if (h.insert(mine, mine * 3 + 1) != hash_insert::inserted) ++wrong;
      const u64 theirs = i * static_cast<u64>(n) + static_cast<u64>(other);
      const std::optional<u64> got = h.find(theirs);
      if (got && *got != theirs * 3 + 1) ++wrong;
    }
    shoal::barrier();
    for (u64 i = 0; i < per; ++i) {
      const u64 theirs = i * static_cast<u64>(n) + static_cast<u64>(other);
      const std::optional<u64> got = h.find(theirs, hash_promise::find_only);
      if (!got || *got != theirs * 3 + 1) ++wrong;
    }
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, m);
}

/// A table of 3 buckets per core filled from one task: each home part
/// takes 3 keys, then reports full and changes nothing; an existing key in
/// a full part is still updated; what was inserted is all found. place_of
/// names the home and a slot of its part, where the first key of a part
/// lands.
inline u64 full_parts_reported() {
  const int n = shoal::cores();
  map m = map::make(3);
  u64 wrong = 0;
  std::vector<int> used(static_cast<std::size_t>(n), 0);
  std::vector<u64> in, out;
  for (u64 k = 1; k < 40 * static_cast<u64>(n); ++k) {
    const map::place at = m.place_of(k);
    if (at.core != m.home(k) || at.slot >= m.per_core()) ++wrong;
    int& u = used[static_cast<std::size_t>(m.home(k))];
    const hash_insert r = m.insert(k, k + 5);
    if (u == 0 && shoal::rget(m.at(at.core, at.slot)).e.key != k) ++wrong;
    if (u < 3) {
      if (r != hash_insert::inserted) ++wrong;
      ++u;
      in.push_back(k);
    } else {
      if (r != hash_insert::full) ++wrong;
      out.push_back(k);
    }
  }
  for (int u : used)
    if (u != 3) ++wrong;  // 40 keys per core: every part filled
  for (u64 k : in) {
    if (m.find(k) != std::optional<u64>(k + 5)) ++wrong;
    if (m.insert(k, k + 6) != hash_insert::updated) ++wrong;  // full part, key present
    if (m.find(k, hash_promise::find_only) != std::optional<u64>(k + 6)) ++wrong;
  }
  for (u64 k : out)
    if (m.find(k) || m.find(k, hash_promise::find_only)) ++wrong;  // probed every bucket
  m.destroy();
  if (m.valid()) ++wrong;
  return wrong;
}

/// Update semantics: a second insert of a key replaces its value.
inline u64 update_replaces_value() {
  map m = map::make(16);
  u64 wrong = 0;
  if (m.find(42)) ++wrong;
  if (m.insert(42, 1) != hash_insert::inserted) ++wrong;
  if (m.insert(42, 2) != hash_insert::updated) ++wrong;
  if (m.find(42) != std::optional<u64>(2)) ++wrong;
  if (m.insert(0, 9) != hash_insert::inserted) ++wrong;  // key 0 is a key like any other
  if (m.find(0, hash_promise::find_only) != std::optional<u64>(9)) ++wrong;
  m.destroy();
  return wrong;
}

/// Promise local: every core inserts every key homed on its own process
/// (the cores of one process race on the same keys with CPU atomics), then
/// after a barrier every key is found remotely by every core.
inline u64 local_inserts(u64 keys) {
  const map m = map::make(keys);
  const auto cnt = counters(2);  // inserted, wrong
  shoal::on_all_cores([m, cnt, keys] {
    map h = m;
    u64 ins = 0, wrong = 0;
    for (u64 k = 0; k < keys; ++k) {
      if (shoal::rank_of(h.home(k)) != shoal::myrank()) continue;
      const hash_insert r = h.insert(k, k * 11, hash_promise::local);
      if (r == hash_insert::inserted) ++ins;
      if (r == hash_insert::full) ++wrong;
      if (h.find(k, hash_promise::local) != std::optional<u64>(k * 11)) ++wrong;
    }
    shoal::barrier();
    for (u64 k = 0; k < keys; ++k)
      if (h.find(k) != std::optional<u64>(k * 11)) ++wrong;
    shoal::fetch_add(cnt, ins);
    shoal::fetch_add(cnt + 1, wrong);
  });
  u64 wrong = shoal::rget(cnt + 1);
  if (shoal::rget(cnt) != keys) ++wrong;  // each key inserted exactly once
  map d = m;
  d.destroy();
  shoal::global_free(cnt);
  return wrong;
}

/// Counters: every core adds 1 to each of `keys` keys at once (add), then
/// adds 1 again only to keys present (add_existing), and tries add_existing
/// on `keys` absent keys. Exactly one add per key reports inserted; every
/// key ends at 2 x cores; no absent key is inserted; for_each_local over
/// every core's part sees each key once with that count. A table of one
/// bucket per core reports full without changing anything.
inline u64 adds_from_every_core(u64 keys) {
  const int n = shoal::cores();
  const map m = map::make(keys + 8);
  const auto cnt = counters(4);  // inserted, absent found, wrong, seen by for_each_local
  shoal::on_all_cores([m, cnt, keys] {
    map h = m;
    u64 ins = 0, found_absent = 0, wrong = 0;
    for (u64 k = 0; k < keys; ++k)
      if (h.add(k, 1) == hash_insert::inserted) ++ins;
    shoal::barrier();
    for (u64 k = 0; k < keys; ++k) {
      if (!h.add_existing(k, 1)) ++wrong;
      if (h.add_existing(k + keys, 1)) ++found_absent;
    }
    shoal::barrier();
    u64 seen = 0;
    const u64 want = 2 * static_cast<u64>(shoal::cores());
    h.for_each_local([&](const u64& k, u64& v) {
      ++seen;
      if (k >= keys || v != want) ++wrong;
    });
    shoal::fetch_add(cnt, ins);
    shoal::fetch_add(cnt + 1, found_absent);
    shoal::fetch_add(cnt + 2, wrong);
    shoal::fetch_add(cnt + 3, seen);
  });
  u64 wrong = shoal::rget(cnt + 2) + shoal::rget(cnt + 1);
  if (shoal::rget(cnt) != keys) ++wrong;
  if (shoal::rget(cnt + 3) != keys) ++wrong;
  map h = m;
  for (u64 k = 0; k < keys; ++k) {
    const std::optional<u64> got = h.find(k);
    if (!got || *got != 2 * static_cast<u64>(n)) ++wrong;
    if (h.find(k + keys)) ++wrong;
  }
  // One bucket per core: the second key homed on a core finds it full.
  map tiny = map::make(1);
  u64 full = 0;
  for (u64 k = 0; k < 64 * static_cast<u64>(n); ++k)
    if (tiny.add(k, 5) == hash_insert::full) ++full;
  if (full != 64 * static_cast<u64>(n) - static_cast<u64>(n)) ++wrong;
  u64 total = 0;
  for (u64 k = 0; k < 64 * static_cast<u64>(n); ++k)
    if (const std::optional<u64> got = tiny.find(k)) total += *got;
  if (total != 5 * static_cast<u64>(n)) ++wrong;
  h.destroy();
  tiny.destroy();
  shoal::global_free(cnt);
  return wrong;
}

}  // namespace bcl_hash_map_checks
