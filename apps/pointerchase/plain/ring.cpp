// PointerChase: ring construction, per-seat checks and the report (see ring.hpp).
#include "pointerchase/plain/ring.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/input_error.hpp"

namespace shoal_apps::pointerchase {

namespace {
/// SplitMix64: the ring's random stream.
std::uint64_t splitmix(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

void add_chase_options(CLI::App& cmd, chase_options& o) {
  cmd.add_option("--rounds", o.rounds,
                 "laps the token makes around the ring of all cores (one message per hop)")
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the ring's random order")
      ->check(unsigned_64_check())
      ->capture_default_str();
}

void check_options(const chase_options& o) {
  if (o.rounds < 1 || o.rounds > max_rounds)
    throw input_error(fmt::format("--rounds {}: out of range; expected an integer in [1, {}]",
                                  o.rounds, max_rounds));
}

std::vector<int> make_ring(int participants, std::uint64_t seed) {
  std::vector<int> ring(static_cast<std::size_t>(participants));
  for (int k = 0; k < participants; ++k) ring[static_cast<std::size_t>(k)] = k;
  std::uint64_t state = seed ^ 0x706f696e74657263ULL;  // "pointerc"
  for (std::size_t k = ring.size(); k > 1; --k)        // Fisher-Yates
    std::swap(ring[k - 1], ring[splitmix(state) % k]);
  // Rotate participant 0 to the front: the same cyclic order, started at 0.
  std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), 0), ring.end());
  return ring;
}

ring_seat make_seat(const std::vector<int>& ring, int me, std::int64_t rounds) {
  ring_seat s;
  const int n = static_cast<int>(ring.size());
  s.me = me;
  s.participants = n;
  s.rounds = rounds;
  s.pos = static_cast<int>(std::find(ring.begin(), ring.end(), me) - ring.begin());
  s.succ = ring[static_cast<std::size_t>((s.pos + 1) % n)];
  s.pred = ring[static_cast<std::size_t>((s.pos + n - 1) % n)];
  return s;
}

void ring_seat::arrive(const token& t) noexcept {
  const bool in_order = t.from == pred && t.hop == expected_hop(visits) &&
                        t.lap == static_cast<std::int32_t>(visits) && visits < rounds;
  if (!in_order) {
    ++violations;
    if (first_bad_hop < 0) first_bad_hop = t.hop;
  }
  ++visits;
}

token ring_seat::next(const token& t) const noexcept {
  const std::int64_t hop = t.hop + 1;
  return token{hop, static_cast<std::int32_t>((hop - 1) / participants), me};
}

token first_token(const ring_seat& start) noexcept { return token{1, 0, start.me}; }

chase_tally chase_tally::of(const ring_seat& s) noexcept {
  return chase_tally{s.visits, s.violations, s.visits == s.rounds ? 0 : 1, s.first_bad_hop};
}

chase_tally operator+(const chase_tally& a, const chase_tally& b) noexcept {
  std::int64_t bad = a.first_bad_hop;
  if (b.first_bad_hop >= 0 && (bad < 0 || b.first_bad_hop < bad)) bad = b.first_bad_hop;
  return chase_tally{a.visits + b.visits, a.violations + b.violations,
                     a.wrong_counts + b.wrong_counts, bad};
}

void fill_report(report& out, const chase_options& o, int participants, const std::string& per_what,
                 double seconds, const chase_tally& t) {
  const std::int64_t hops = o.rounds * participants;
  out.set_problem(fmt::format("ring of {} {}s (seed {}), {} laps, {} hops, one message per hop",
                              participants, per_what, o.seed, o.rounds, hops));
  out.set_time(seconds);
  const double rate = seconds > 0 ? static_cast<double>(hops) / seconds : 0;
  out.set_rate(rate, "hops/s");
  out.set("latency_us_per_hop", seconds > 0 ? seconds * 1e6 / static_cast<double>(hops) : 0.0);
  out.set("rounds", o.rounds);
  out.set("hops", hops);
  out.set("seed", o.seed, false);
  out.set("ring_size", participants);
  out.set("violations", t.violations);
  out.set("wrong_visit_counts", t.wrong_counts);
  const bool ok = t.visits == hops && t.violations == 0 && t.wrong_counts == 0;
  if (ok) {
    out.set_validated(
        true, fmt::format("every {} visited {} times, all in ring order", per_what, o.rounds));
  } else {
    out.set_validated(
        false, fmt::format("{} visits of {} expected, {} out of ring order (first at hop {}), {} "
                           "{}s not visited exactly {} times",
                           t.visits, hops, t.violations, t.first_bad_hop, t.wrong_counts, per_what,
                           o.rounds));
  }
}

}  // namespace shoal_apps::pointerchase
