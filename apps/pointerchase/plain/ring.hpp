// The PointerChase problem (Active Pebbles section 4.2) as both
// `shoal pointerchase` and shoal-baseline-pointerchase define it: options,
// the random ring, the token, the per-seat checks and the report.
//
// The ring is a seeded random permutation of the P participants (cores or
// ranks), rotated so that participant 0 sits at position 0: a random cyclic
// order that starts and ends at the participant that times the run. A token
// makes --rounds laps: participant 0 sends it to ring[1], each participant
// relays it to its successor, and a lap ends when it is back at ring[0]; the
// run ends after rounds * P hops, on participant 0. One message per hop, so
// the time per hop is the latency of one dependent message.
//
// The token carries its lap, its hop number (1 for the first hop, rounds * P
// for the last) and the participant that sent it. Each participant checks
// every arrival against what ring order implies (ring_seat::arrive), so the
// validation needs no second run: the token came from the ring predecessor,
// with the hop and lap numbers of this participant's next visit, and every
// participant was visited exactly --rounds times.
//
// Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/plain/report.hpp"

namespace shoal_apps::pointerchase {

/// The command-line options shared by the app and the baseline.
struct chase_options {
  std::int64_t rounds = 10000;  ///< laps of the ring
  std::uint64_t seed = 1;       ///< seeds the ring's order
};

/// Largest --rounds (the lap number travels in 32 bits).
inline constexpr std::int64_t max_rounds = 2147483647;

/// Declares --rounds and --seed on `cmd`, bound to `o`.
void add_chase_options(CLI::App& cmd, chase_options& o);

/// Throws input_error naming the flag when an option is out of range.
void check_options(const chase_options& o);

/// The token relayed around the ring: 16 bytes.
struct token {
  std::int64_t hop;   ///< 1 for the first hop, rounds * P for the last
  std::int32_t lap;   ///< 0-based lap the hop belongs to
  std::int32_t from;  ///< the participant that sent it
};

/// The ring of `participants` in the order `seed` gives, with participant 0
/// at position 0: ring[k] is the participant at position k. Local, O(P).
std::vector<int> make_ring(int participants, std::uint64_t seed);

/// One participant's place in the ring and the record of its visits.
struct ring_seat {
  int me = 0;
  int pred = 0;  ///< ring predecessor: the only sender it accepts
  int succ = 0;  ///< ring successor: where it relays the token
  int pos = 0;   ///< position in the ring, 0 for the start
  int participants = 1;
  std::int64_t rounds = 0;
  std::int64_t visits = 0;
  std::int64_t violations = 0;  ///< arrivals out of ring order
  std::int64_t first_bad_hop = -1;

  /// Total hops of the run: rounds * participants.
  std::int64_t total_hops() const noexcept { return rounds * participants; }
  /// The hop number of this seat's visit `v` (0-based) in ring order.
  std::int64_t expected_hop(std::int64_t v) const noexcept {
    return pos == 0 ? (v + 1) * participants : v * participants + pos;
  }
  /// Records an arrival of `t` and checks it against ring order.
  void arrive(const token& t) noexcept;
  /// The token to relay after `t`: next hop, its lap, sent by this seat.
  token next(const token& t) const noexcept;
  /// Whether `t` was the last hop of the run (nothing to relay).
  bool last(const token& t) const noexcept { return t.hop >= total_hops(); }
};

/// The seat of participant `me` in `ring` (from make_ring) for `rounds` laps.
ring_seat make_seat(const std::vector<int>& ring, int me, std::int64_t rounds);

/// The first token, sent by participant 0 to its successor.
token first_token(const ring_seat& start) noexcept;

/// What the participants found, summed over all of them.
struct chase_tally {
  std::int64_t visits = 0;          ///< arrivals, over every participant
  std::int64_t violations = 0;      ///< arrivals out of ring order
  std::int64_t wrong_counts = 0;    ///< participants not visited exactly rounds times
  std::int64_t first_bad_hop = -1;  ///< smallest hop found out of order (-1: none)

  /// This seat's part (visits, violations, whether its count is right).
  static chase_tally of(const ring_seat& s) noexcept;
  /// The sum of two parts (associative; the smallest first_bad_hop wins).
  friend chase_tally operator+(const chase_tally& a, const chase_tally& b) noexcept;
};

/// Fills `out`: problem line, time, rate (hops/s), fields rounds, hops,
/// participants, latency_us_per_hop, violations, wrong_visit_counts, and
/// the verdict (every participant visited rounds times, all in ring order).
void fill_report(report& out, const chase_options& o, int participants, const std::string& per_what,
                 double seconds, const chase_tally& t);

}  // namespace shoal_apps::pointerchase
