// PointerChase with many chasers (`shoal pointerchase --chasers C`): the
// throughput form of pointer chasing, where chains of dependent messages
// can meet, so that message reductions have duplicates to remove.
//
// Every core owns --targets targets (N = targets x cores in all, in blocks:
// target t on core t / targets). Each target has one random successor,
// succ(t) (a seeded random function of [0, N), not a permutation, so paths
// merge). Chaser c starts at start(c) and follows succ for --steps steps: a
// visit (t, s) is "target t at step s", and every visit is one message to
// t's owner, whose handler records it and, below the last step, sends the
// visit (succ(t), s + 1). Two chasers at the same target at the same step
// are duplicates: from there on they visit the same targets at the same
// steps. Without a reduction every chaser's message travels (C x (steps + 1)
// messages); a reduction keyed by the visit (dedup keeps one, min keeps the
// least chaser id) drops a duplicate that meets another at a source or a
// routing hop before it travels, and with it the rest of its path.
//
// Checks, independent of the messages (each owner recomputes every chaser's
// path): the visits reached are exactly the visits of the C paths (none
// missing, none extra), and the chaser id recorded at each visit is one
// whose path passes there; without a reduction, or with min, it is the
// least such id (every message, or the least one, arrived). Without a
// reduction the arrivals are exactly C x (steps + 1).
//
// Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/plain/report.hpp"

namespace shoal_apps::pointerchase {

/// The problem of --chasers C: sizes and seed.
struct chasers_problem {
  std::int64_t chasers = 0;           ///< C (0: the token ring instead)
  std::int64_t targets_per_core = 0;  ///< --targets
  std::int64_t steps = 0;             ///< --steps
  std::uint64_t seed = 1;
  int cores = 1;

  std::uint64_t targets() const noexcept {
    return static_cast<std::uint64_t>(targets_per_core) * static_cast<std::uint64_t>(cores);
  }
  /// Visits per core: (steps + 1) x targets_per_core.
  std::uint64_t visits_per_core() const noexcept {
    return static_cast<std::uint64_t>(steps + 1) * static_cast<std::uint64_t>(targets_per_core);
  }
  /// Messages without a reduction: C x (steps + 1).
  std::int64_t messages() const noexcept { return chasers * (steps + 1); }

  std::uint64_t succ(std::uint64_t t) const noexcept;
  std::uint64_t start(std::uint64_t chaser) const noexcept;
  int owner(std::uint64_t t) const noexcept {
    return static_cast<int>(t / static_cast<std::uint64_t>(targets_per_core));
  }
  /// Index of visit (t, s) among its owner's visits: s x targets + t mod targets.
  std::uint64_t local_visit(std::uint64_t t, std::int64_t s) const noexcept {
    const auto per = static_cast<std::uint64_t>(targets_per_core);
    return static_cast<std::uint64_t>(s) * per + t % per;
  }
  /// The visit id (a target channel's target): s x N + t.
  std::uint64_t visit_id(std::uint64_t t, std::int64_t s) const noexcept {
    return static_cast<std::uint64_t>(s) * targets() + t;
  }
};

/// Largest --chasers, --targets, --steps (ids travel in 32 bits; the memory
/// per core stays small).
inline constexpr std::int64_t max_chasers = 1 << 24;
inline constexpr std::int64_t max_targets_per_core = 1 << 22;
inline constexpr std::int64_t max_steps = 1 << 12;

/// Throws input_error naming the flag when a size is out of range, or when
/// one core's visits ((steps + 1) x targets) exceed 2^26.
void check_chasers(const chasers_problem& p);

/// No chaser recorded at a visit.
inline constexpr std::uint32_t no_chaser = std::numeric_limits<std::uint32_t>::max();

/// What the owners found, summed over cores.
struct chasers_tally {
  std::int64_t arrivals = 0;    ///< messages handled at their owners
  std::int64_t distinct = 0;    ///< visits reached
  std::int64_t duplicates = 0;  ///< arrivals at a visit already reached
  std::int64_t expected = 0;    ///< visits of the C paths (recomputed)
  std::int64_t missing = 0;     ///< expected visits not reached
  std::int64_t extra = 0;       ///< visits reached that no path makes
  std::int64_t wrong_id = 0;    ///< recorded chaser not on the visit's path (or not the least)

  friend chasers_tally operator+(const chasers_tally& a, const chasers_tally& b) noexcept;
};

/// Checks core `core`'s record (`least[v]`: the least chaser id that arrived
/// at its visit v, or no_chaser) against every chaser's path; `least_exact`:
/// the least id on the path must have arrived (no reduction, or min). Fills
/// expected, missing, extra, wrong_id and distinct.
void check_core(const chasers_problem& p, int core, const std::vector<std::uint32_t>& least,
                bool least_exact, chasers_tally& t);

/// Fills `out` for a --chasers run: problem, time, rate (messages/s), the
/// counts and the verdict (`reduced`: a reduction was on, so arrivals may
/// be fewer than C x (steps + 1)).
void fill_chasers_report(report& out, const chasers_problem& p, double seconds,
                         const chasers_tally& t, bool reduced);

}  // namespace shoal_apps::pointerchase
