// PointerChase with many chasers: successors, checks and the report (see
// chasers.hpp).
#include "pointerchase/plain/chasers.hpp"

#include <fmt/format.h>

#include "common/plain/input_error.hpp"

namespace shoal_apps::pointerchase {

namespace {
/// SplitMix64's finaliser of `x`: a seeded random function of the index.
std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

std::uint64_t chasers_problem::succ(std::uint64_t t) const noexcept {
  return mix(t ^ mix(seed)) % targets();
}

std::uint64_t chasers_problem::start(std::uint64_t chaser) const noexcept {
  return mix(chaser ^ mix(seed ^ 0x6368617365727321ULL)) % targets();  // "chasers!"
}

void check_chasers(const chasers_problem& p) {
  if (p.chasers < 1 || p.chasers > max_chasers)
    throw input_error(fmt::format("--chasers {}: out of range; expected an integer in [0, {}]",
                                  p.chasers, max_chasers));
  if (p.targets_per_core < 1 || p.targets_per_core > max_targets_per_core)
    throw input_error(fmt::format("--targets {}: out of range; expected an integer in [1, {}]",
                                  p.targets_per_core, max_targets_per_core));
  if (p.steps < 0 || p.steps > max_steps)
    throw input_error(fmt::format("--steps {}: out of range; expected an integer in [0, {}]",
                                  p.steps, max_steps));
  if (p.visits_per_core() > (std::uint64_t{1} << 26))
    throw input_error(
        fmt::format("--targets {} --steps {}: {} visits per core, more than 2^26 "
                    "(4 bytes each); lower --targets or --steps",
                    p.targets_per_core, p.steps, p.visits_per_core()));
}

chasers_tally operator+(const chasers_tally& a, const chasers_tally& b) noexcept {
  return {a.arrivals + b.arrivals, a.distinct + b.distinct, a.duplicates + b.duplicates,
          a.expected + b.expected, a.missing + b.missing,   a.extra + b.extra,
          a.wrong_id + b.wrong_id};
}

void check_core(const chasers_problem& p, int core, const std::vector<std::uint32_t>& least,
                bool least_exact, chasers_tally& t) {
  const std::uint64_t visits = p.visits_per_core();
  std::vector<std::uint32_t> first(visits, no_chaser);  // the least id whose path passes
  std::vector<std::uint8_t> on_path(visits, 0);         // the recorded id's path passes
  for (std::int64_t c = 0; c < p.chasers; ++c) {
    std::uint64_t at = p.start(static_cast<std::uint64_t>(c));
    for (std::int64_t s = 0; s <= p.steps; ++s, at = p.succ(at)) {
      if (p.owner(at) != core) continue;
      const std::uint64_t v = p.local_visit(at, s);
      if (first[v] == no_chaser) first[v] = static_cast<std::uint32_t>(c);
      if (least[v] == static_cast<std::uint32_t>(c)) on_path[v] = 1;
    }
  }
  for (std::uint64_t v = 0; v < visits; ++v) {
    const bool expected = first[v] != no_chaser;
    const bool reached = v < least.size() && least[v] != no_chaser;
    t.expected += expected ? 1 : 0;
    t.distinct += reached ? 1 : 0;
    if (expected && !reached) ++t.missing;
    if (!expected && reached) ++t.extra;
    if (expected && reached && (least_exact ? least[v] != first[v] : on_path[v] == 0)) ++t.wrong_id;
  }
}

void fill_chasers_report(report& out, const chasers_problem& p, double seconds,
                         const chasers_tally& t, bool reduced) {
  out.set_problem(
      fmt::format("{} chasers, {} steps each, on a random successor function of {} "
                  "targets ({} per core, {} cores), seed {}",
                  p.chasers, p.steps, p.targets(), p.targets_per_core, p.cores, p.seed));
  out.set_time(seconds);
  // The problem's work: every chaser's every step, whether its message
  // travelled or a reduction found it a duplicate.
  const double steps_per_s = seconds > 0 ? static_cast<double>(p.messages()) / seconds : 0;
  out.set_rate(steps_per_s / 1e6, "M chaser steps/s");
  out.set("chasers", p.chasers);
  out.set("steps", p.steps);
  out.set("targets_per_core", p.targets_per_core);
  out.set("chaser_steps", p.messages());
  out.set("arrivals", t.arrivals);
  out.set("distinct_visits", t.distinct);
  out.set("duplicate_arrivals", t.duplicates);
  out.set(
      "duplicate_fraction",
      t.arrivals == 0 ? 0.0 : static_cast<double>(t.duplicates) / static_cast<double>(t.arrivals));
  // What a perfect reduction could remove: the share of the C x (steps + 1)
  // messages that repeat a visit.
  out.set("duplicate_fraction_possible",
          p.messages() == 0
              ? 0.0
              : 1.0 - static_cast<double>(t.expected) / static_cast<double>(p.messages()));
  // What the reduction saved: a duplicate removed before it travels takes
  // the rest of its path with it, so this exceeds the messages removed.
  out.set("messages_saved", p.messages() - t.arrivals);
  out.set("missing_visits", t.missing);
  out.set("extra_visits", t.extra);
  out.set("wrong_chaser_ids", t.wrong_id);
  out.set("seed", p.seed, false);
  const bool counts_ok =
      reduced ? t.arrivals >= t.distinct && t.arrivals <= p.messages() : t.arrivals == p.messages();
  const bool ok =
      t.missing == 0 && t.extra == 0 && t.wrong_id == 0 && counts_ok && t.distinct == t.expected;
  if (ok) {
    out.set_validated(true, fmt::format("every one of the {} visits of the {} paths reached, none "
                                        "other, each by a chaser whose path passes there; {} "
                                        "arrivals{}",
                                        t.expected, p.chasers, t.arrivals,
                                        reduced ? "" : " (one per chaser step)"));
  } else {
    out.set_validated(
        false, fmt::format("{} visits missing, {} extra, {} with a wrong chaser id, "
                           "{} arrivals for {} chaser steps and {} visits",
                           t.missing, t.extra, t.wrong_id, t.arrivals, p.messages(), t.expected));
  }
}

}  // namespace shoal_apps::pointerchase
