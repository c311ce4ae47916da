// Checks of hash_map and the queues with serialised values (bcl/object.hpp,
// bcl/object_queue.hpp): strings, vectors and a user type through serial
// pointers, shared by
// test_bcl_object.cpp (one process) and mpi/bcl_object_job.cpp (every
// backend, several processes). Each returns the number of wrong values it
// saw (0: passed); call from the root task.
#pragma once

#include "shoal/bcl/checksum_queue.hpp"
#include "shoal/bcl/circular_queue.hpp"
#include "shoal/bcl/fast_queue.hpp"
#include "shoal/bcl/hash_map.hpp"
#include "shoal/shoal.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bcl_check_support.hpp"

/// A user type with copy logic, stored through shoal::serializer.
struct sensor_reading {
  std::string sensor;
  std::vector<std::uint32_t> samples;
  std::uint64_t stamp = 0;
  bool operator==(const sensor_reading&) const = default;
};

template <>
struct shoal::serializer<sensor_reading> {
  static std::size_t size(const sensor_reading& r) {
    return serializer<std::string>::size(r.sensor) +
           serializer<std::vector<std::uint32_t>>::size(r.samples) + sizeof r.stamp;
  }
  static void write(byte_writer& w, const sensor_reading& r) {
    serializer<std::string>::write(w, r.sensor);
    serializer<std::vector<std::uint32_t>>::write(w, r.samples);
    w.put(r.stamp);
  }
  static sensor_reading read(byte_reader& r) {
    sensor_reading s;
    s.sensor = serializer<std::string>::read(r);
    s.samples = serializer<std::vector<std::uint32_t>>::read(r);
    s.stamp = r.get<std::uint64_t>("sensor_reading's stamp");
    return s;
  }
};

namespace bcl_object_checks {

using u64 = std::uint64_t;
using u32 = std::uint32_t;
using shoal::bcl::hash_insert;
using shoal::bcl::hash_promise;
using string_map = shoal::bcl::hash_map<u64, std::string>;
using vector_map = shoal::bcl::hash_map<u64, std::vector<u32>>;
using reading_map = shoal::bcl::hash_map<u64, sensor_reading>;
// A bucket holds status, key and a 16-byte serial_ptr.
static_assert(sizeof(string_map::bucket) == 32);

inline shoal::global_ptr<u64> counter() {
  const auto c = shoal::global_alloc<u64>(8 * shoal::cores());
  shoal::rput(c, u64{0});
  shoal::rflush();
  return c;
}

/// The string of `len` characters stored for key k (its content says k).
inline std::string text_of(u64 k, std::size_t len) {
  std::string s(len, ' ');
  for (std::size_t j = 0; j < len; ++j) s[j] = static_cast<char>('a' + (k * 7 + j) % 26);
  return s;
}
inline constexpr std::size_t lengths[] = {0, 1, 100, 10000};
inline std::string string_for(u64 k) { return text_of(k, lengths[k % 4]); }
inline std::vector<u32> vector_for(u64 k) {
  std::vector<u32> v(k % 37);
  for (std::size_t j = 0; j < v.size(); ++j) v[j] = static_cast<u32>(k * 1000 + j);
  return v;
}
inline sensor_reading reading_for(u64 k) {
  return {text_of(k + 3, k % 20), vector_for(k * 3), k * k};
}

/// Each core inserts `per` keys of its own (value_for(k): strings of 0, 1,
/// 100 and 10000 bytes, vectors of 0..36 words, readings), finds each right
/// away, then, after a barrier, finds every core's keys with promises
/// atomic and find_only, and local where the key's home is on this process.
template <class V, V (*value_for)(u64)>
u64 round_trip(u64 per, u64 arena_bytes_per_core) {
  using map = shoal::bcl::hash_map<u64, V>;
  const map m = map::make(2 * per * static_cast<u64>(shoal::cores()), arena_bytes_per_core);
  const auto cnt = counter();
  shoal::on_all_cores([m, cnt, per] {
    map h = m;
    const u64 me = static_cast<u64>(shoal::mycore());
    const u64 n = static_cast<u64>(shoal::cores());
    const u64 keys = per * n;
    u64 wrong = 0;
    for (u64 i = 0; i < per; ++i) {
      const u64 k = i * n + me;
      if (h.insert(k, value_for(k)) != hash_insert::inserted) ++wrong;
      if (h.find(k) != value_for(k)) ++wrong;
    }
    shoal::barrier();
    for (u64 k = 0; k < keys; ++k) {
      for (hash_promise p : {hash_promise::atomic, hash_promise::find_only}) {
        if (h.find(k, p) != value_for(k)) ++wrong;
        if (h.find(k + keys, p)) ++wrong;
      }
    }
    shoal::barrier();  // the local finds below must not overlap remote ones
    for (u64 k = 0; k < keys; ++k)
      if (shoal::rank_of(h.home(k)) == shoal::myrank() &&
          h.find(k, hash_promise::local) != value_for(k))
        ++wrong;
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, m);
}

inline u64 strings_round_trip(u64 per) {
  return round_trip<std::string, string_for>(per,
                                             per * 10016 + 4096);  // one core may get all long ones
}
inline u64 vectors_round_trip(u64 per) {
  return round_trip<std::vector<u32>, vector_for>(per, per * 160 + 1024);
}
inline u64 readings_round_trip(u64 per) {
  return round_trip<sensor_reading, reading_for>(per, per * 600 + 1024);
}

/// Every core replaces the values of the same keys, round after round,
/// with values of another length each time: each insert reports updated
/// after the first, each takes new arena bytes (the old are kept), and
/// after a barrier every key holds one of the last round's values.
inline u64 replace_values(u64 keys, u64 rounds) {
  const string_map ms = string_map::make(4 * keys, keys * rounds * 48 + 4096);
  const auto cnt = counter();
  // Two 32-bit counts: the closure holds 48 bytes at most.
  shoal::on_all_cores([ms, cnt, keys = static_cast<u32>(keys), rounds = static_cast<u32>(rounds)] {
    string_map s = ms;
    const u64 me = static_cast<u64>(shoal::mycore());
    u64 wrong = 0;
    for (u64 round = 0; round < rounds; ++round) {
      for (u64 k = 0; k < keys; ++k) {
        const std::string value = fmt::format("{}:{}:{}", round, me, text_of(k, round + k % 5));
        const u64 before = s.arena_bytes_left();
        const hash_insert got = s.insert(k, value);
        if (got == hash_insert::full) ++wrong;
        if (round > 0 && got != hash_insert::updated) ++wrong;
        if (before - s.arena_bytes_left() < 4 + value.size()) ++wrong;  // nothing reclaimed
        const std::optional<std::string> now = s.find(k);
        if (!now || now->substr(now->find(':', now->find(':') + 1) + 1) !=
                        text_of(k, static_cast<u64>(std::stoul(*now)) + k % 5))
          ++wrong;
      }
    }
    shoal::barrier();
    for (u64 k = 0; k < keys; ++k) {
      const std::optional<std::string> last = s.find(k, hash_promise::find_only);
      if (!last || last->rfind(fmt::format("{}:", rounds - 1), 0) != 0) ++wrong;
    }
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, ms);
}

/// A value that says how to check itself: "<seed>|" then a pattern of a
/// length picked by the seed (1 to 3000 bytes).
inline std::string whole_value(u64 seed) {
  return fmt::format("{}|{}", seed, text_of(seed, 1 + seed * 2654435761u % 3000));
}
inline bool is_whole(const std::string& s) {
  const auto bar = s.find('|');
  if (bar == std::string::npos) return false;
  return s == whole_value(std::stoull(s.substr(0, bar)));
}

/// Every core inserts values of changing lengths under 4 shared keys while
/// finding the same keys: every find returns nothing (before the first
/// insert) or one whole value some insert wrote, never a mix.
inline u64 finds_racing_inserts(u64 rounds) {
  const string_map ms = string_map::make(8, rounds * 3100 + 4096);
  const auto cnt = counter();
  shoal::on_all_cores([ms, cnt, rounds] {
    string_map s = ms;
    const u64 me = static_cast<u64>(shoal::mycore());
    u64 wrong = 0;
    for (u64 i = 0; i < rounds; ++i) {
      const u64 k = i % 4;
      s.insert(k, whole_value(i * 1000 + me));
      for (u64 j = 0; j < 4; ++j) {
        const std::optional<std::string> got = s.find((k + j) % 4);
        if (got && !is_whole(*got)) ++wrong;
      }
    }
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, ms);
}

/// Fills each core's small arena with 100-character strings while
/// arena_bytes_left() says one more fits: then it says one does not, and
/// every value inserted is still found whole.
inline u64 arena_filled_values_kept() {
  const string_map ms = string_map::make(64, 2000);
  const auto cnt = counter();
  shoal::on_all_cores([ms, cnt] {
    string_map s = ms;
    const u64 me = static_cast<u64>(shoal::mycore());
    const u64 n = static_cast<u64>(shoal::cores());
    u64 wrong = 0, k = me;
    std::vector<u64> mine;
    while (s.arena_bytes_left() >= 104) {
      if (s.insert(k, text_of(k, 100)) != hash_insert::inserted) ++wrong;
      mine.push_back(k);
      k += n;
    }
    // 2000 bytes (or more: rounded up to a block) / 104 (a 4-byte length, 8-byte aligned).
    if (mine.size() < 19 || s.arena_bytes_left() >= 104) ++wrong;
    shoal::barrier();
    for (u64 key : mine)
      if (s.find(key) != text_of(key, 100)) ++wrong;
    shoal::fetch_add(cnt, wrong);
  });
  return bcl_check_support::wrong_then_free(cnt, ms);
}

using string_queue = shoal::bcl::circular_queue<std::string>;
using string_checksum_queue = shoal::bcl::checksum_queue<std::string>;
using vector_fast_queue = shoal::bcl::fast_queue<std::vector<u32>>;
static_assert(sizeof(string_checksum_queue) <= 128 && sizeof(vector_fast_queue) <= 128);

/// Every core pushes `per` whole values (1 to 3000 bytes) to a string queue
/// (circular_queue or checksum_queue) of 8 hosted on the last core while
/// popping from it: every value popped is whole, each is popped once (the
/// seeds' sum matches), the queue ends empty, and refused pushes gave their
/// bytes back (the arena is sized for the values pushed, not for the
/// refusals).
template <class Q = string_queue>
u64 string_queue_push_pop(u64 per) {
  const int n = shoal::cores();
  const auto words = shoal::global_alloc<u64>(16);  // the 72-byte handle
  const auto sums = shoal::global_alloc<u64>(8 * n);
  const u64 zeros[3] = {};
  shoal::rput(sums, zeros, 3);  // popped, sum of seeds, wrong
  Q q = Q::make(n - 1, 8, per * 3016 + 4096);
  u64 raw[16] = {};
  static_assert(sizeof(Q) <= sizeof raw);
  std::memcpy(raw, &q, sizeof q);
  shoal::rput(words, raw, 16);
  shoal::rflush();
  shoal::on_all_cores([words, sums, per] {
    u64 handle[16];
    shoal::rget(words, handle, 16);
    Q mine;
    std::memcpy(&mine, handle, sizeof mine);
    const u64 me = static_cast<u64>(shoal::mycore());
    const u64 total = per * static_cast<u64>(shoal::cores());
    u64 wrong = 0, seeds = 0, popped = 0;
    const auto pop_one = [&] {
      std::string s;
      if (!mine.pop(s)) return false;
      if (!is_whole(s)) ++wrong;
      seeds += std::stoull(s.substr(0, s.find('|')));
      shoal::fetch_add(sums, u64{1});
      ++popped;
      return true;
    };
    for (u64 j = 0; j < per; ++j) {
      const std::string v = whole_value(me * 100000 + j);
      while (!mine.push(v))
        if (!pop_one()) shoal::yield();
      pop_one();
    }
    while (shoal::rget(sums) < total)
      if (!pop_one()) shoal::yield();
    shoal::fetch_add(sums + 1, seeds);
    shoal::fetch_add(sums + 2, wrong);
  });
  u64 wrong = shoal::rget(sums + 2);
  u64 expect = 0;
  for (u64 c = 0; c < static_cast<u64>(n); ++c)
    for (u64 j = 0; j < per; ++j) expect += c * 100000 + j;
  if (shoal::rget(sums + 1) != expect) ++wrong;
  if (shoal::rget(sums) != per * static_cast<u64>(n)) ++wrong;
  if (q.size() != 0) ++wrong;
  q.destroy();
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// fast_queue's phases with vectors (0 to 36 words, vector_for): every core
/// pushes `per` keys' vectors (singles, and runs of 10, longer than a
/// delegate's batch of 8 serial_ptrs) to a queue on the last core that
/// holds exactly all of them, so one more push is refused; after rflush
/// and a barrier every core pops (runs of 10 and singles) until empty. Each
/// vector comes back whole and once (the sum of its first words, the key,
/// and the count match).
inline u64 vector_fast_queue_phases(u64 per) {
  const int n = shoal::cores();
  const auto words = shoal::global_alloc<u64>(16 * n);
  const auto sums = shoal::global_alloc<u64>(8 * n);
  const u64 zeros[3] = {};
  shoal::rput(sums, zeros, 3);  // popped, sum of keys, wrong
  vector_fast_queue q = vector_fast_queue::make(n - 1, per * static_cast<u64>(n), per * 160 + 4096);
  u64 raw[16] = {};
  static_assert(sizeof(vector_fast_queue) <= sizeof raw);
  std::memcpy(raw, &q, sizeof q);
  shoal::rput(words, raw, 16);
  shoal::rflush();
  shoal::on_all_cores([words, sums, per] {
    u64 handle[16];
    shoal::rget(words, handle, 16);
    vector_fast_queue mine;
    std::memcpy(&mine, handle, sizeof mine);
    const u64 me = static_cast<u64>(shoal::mycore());
    u64 wrong = 0, keys = 0, popped = 0;
    std::vector<std::vector<u32>> run(10);
    for (u64 j = 0, runs = 0; j < per; ++runs) {
      const u64 g = std::min<u64>(runs % 2 == 1 ? 10 : 1, per - j);
      for (u64 i = 0; i < g; ++i) run[i] = vector_for(me * 1000 + j + i);
      if (!mine.push(std::span<const std::vector<u32>>(run.data(), g))) ++wrong;
      j += g;
    }
    shoal::rflush();
    shoal::barrier();
    if (mine.push(std::vector<u32>{1, 2})) ++wrong;  // full
    shoal::barrier();
    const auto take = [&](const std::vector<u32>& v) {
      // vector_for(k) starts with k * 1000; checked whole.
      if (v.empty()) return;
      const u64 k = v[0] / 1000;
      if (v != vector_for(k)) ++wrong;
      keys += k;
    };
    for (bool more = true; more;) {
      more = false;
      if (mine.pop(std::span<std::vector<u32>>(run))) {
        for (const auto& v : run) take(v);
        popped += run.size();
        more = true;
      }
      std::vector<u32> v;
      if (mine.pop(v)) {
        take(v);
        ++popped;
        more = true;
      }
    }
    shoal::fetch_add(sums, popped);
    shoal::fetch_add(sums + 1, keys);
    shoal::fetch_add(sums + 2, wrong);
  });
  u64 wrong = shoal::rget(sums + 2);
  u64 expect = 0;
  for (u64 c = 0; c < static_cast<u64>(n); ++c)
    for (u64 j = 0; j < per; ++j)
      if (!vector_for(c * 1000 + j).empty()) expect += c * 1000 + j;
  if (shoal::rget(sums + 1) != expect) ++wrong;
  if (shoal::rget(sums) != per * static_cast<u64>(n)) ++wrong;
  if (q.size() != 0) ++wrong;
  q.destroy();
  shoal::global_free(words);
  shoal::global_free(sums);
  return wrong;
}

/// Fills core `core`'s arena, then inserts one more there: the job ends
/// (status 2) naming the table and arena_bytes_per_core. Other cores do
/// nothing (the error on one process alone ends the job).
inline void overfill_arena_on(int core) {
  const string_map ms = string_map::make(64, 1000);
  shoal::on_all_cores([ms, core] {
    if (shoal::mycore() != core) return;
    string_map s = ms;
    for (u64 k = 0; k < 64; ++k) s.insert(k, text_of(k, 100));
  });
}

}  // namespace bcl_object_checks
