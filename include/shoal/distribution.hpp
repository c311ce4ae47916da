// Distributions (Active Pebbles' targets, section 3.2): a distribution maps a
// global target id to the core that owns it and the target's index among
// that core's targets. Target ids are the application's (a vertex, a table
// slot, a key); a static distribution costs O(1) space and a few
// instructions per lookup, and needs no set-up to address a target.
//
//   shoal::block_distribution d(n, shoal::cores());   // n targets in blocks
//   shoal::target_location at = d.locate(17);        // {core, local index}
//
// Built in:
//   block_distribution(n, cores)              core t / ceil(n / cores)
//   cyclic_distribution(cores)                core t mod cores
//   block_cyclic_distribution(block, cores)   blocks of `block` dealt round-robin
//                                             (shoal's global arrays' layout)
//   hashed_distribution(cores, seed)          core hash(t) mod cores; the local
//                                             index is the target id itself
// User-defined: any type satisfying distribution_like (locate(t) returning a
// target_location; optionally name() and targets(), used in error messages
// and range checks; targets() and local_count(core) give combine-until-flush
// a flat array, and first_target(core), for a distribution whose cores own
// contiguous ranges of ids, a flush region by region: target_channel.hpp).
//
// Contract. locate() is pure arithmetic: it does not check. Whoever sends to
// a target (target_channel) checks it with check_target(), which ends the
// job with a message naming the target and the distribution when the target
// is outside the distribution's range (targets(), when it has one) or maps
// to a core outside the job. Distributions are trivially copyable so that
// handles and closures can carry them to every core and process; every
// process must build the same distribution (same arguments).
#pragma once

#include "shoal/detail/check.hpp"

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

namespace shoal {

/// Where a target lives: its owner core (global core id) and its index
/// among that core's targets.
struct target_location {
  int core = 0;
  std::uint64_t local = 0;
  friend bool operator==(const target_location&, const target_location&) = default;
};

/// A distribution: maps target ids to target_locations, trivially copyable.
template <class D>
concept distribution_like = std::is_trivially_copyable_v<D> &&
    requires(const D& d, std::uint64_t t) {
  { d.locate(t) } -> std::same_as<target_location>;
};

/// n targets in contiguous blocks of ceil(n / cores): core c owns
/// [c * block, (c + 1) * block). The last cores may own fewer (or none).
class block_distribution {
 public:
  block_distribution() = default;  // no targets: for handles assigned later
  block_distribution(std::uint64_t targets, int cores)
      : targets_(targets), cores_(cores), block_(cores > 0 ? (targets + cores - 1) / cores : 0) {
    SHOAL_CHECK(cores > 0, "block_distribution: {} cores; it needs at least one", cores);
    if (block_ == 0) block_ = 1;
  }
  target_location locate(std::uint64_t t) const noexcept {
    return {static_cast<int>(t / block_), t % block_};
  }
  /// Target id of local index `l` of core `core`.
  std::uint64_t global(int core, std::uint64_t l) const noexcept {
    return static_cast<std::uint64_t>(core) * block_ + l;
  }
  /// The first target of core `core`'s block: its targets are
  /// first_target(core) .. first_target(core) + local_count(core) - 1 (a
  /// combining target channel flushes block by block).
  std::uint64_t first_target(int core) const noexcept { return global(core, 0); }
  /// How many targets core `core` owns.
  std::uint64_t local_count(int core) const noexcept {
    const std::uint64_t first = static_cast<std::uint64_t>(core) * block_;
    if (first >= targets_) return 0;
    return targets_ - first < block_ ? targets_ - first : block_;
  }
  std::uint64_t targets() const noexcept { return targets_; }
  std::string name() const {
    return fmt::format("block_distribution({} targets, {} cores)", targets_, cores_);
  }

 private:
  std::uint64_t targets_ = 0;
  int cores_ = 1;
  std::uint64_t block_ = 1;
};

/// Target t on core t mod cores, local index t / cores. Unbounded.
class cyclic_distribution {
 public:
  cyclic_distribution() = default;  // one core
  explicit cyclic_distribution(int cores) : cores_(static_cast<std::uint64_t>(cores)) {
    SHOAL_CHECK(cores > 0, "cyclic_distribution: {} cores; it needs at least one", cores);
  }
  target_location locate(std::uint64_t t) const noexcept {
    return {static_cast<int>(t % cores_), t / cores_};
  }
  std::uint64_t global(int core, std::uint64_t l) const noexcept {
    return l * cores_ + static_cast<std::uint64_t>(core);
  }
  std::string name() const { return fmt::format("cyclic_distribution({} cores)", cores_); }

 private:
  std::uint64_t cores_ = 1;
};

/// Blocks of `block` consecutive targets dealt round-robin: block b on core
/// b mod cores, as that core's local block b / cores (the layout of shoal's
/// global arrays, global_heap.hpp). Unbounded.
class block_cyclic_distribution {
 public:
  block_cyclic_distribution() = default;  // one core, blocks of one
  block_cyclic_distribution(std::uint64_t block, int cores)
      : block_(block), cores_(static_cast<std::uint64_t>(cores)) {
    SHOAL_CHECK(cores > 0, "block_cyclic_distribution: {} cores; it needs at least one", cores);
    SHOAL_CHECK(block > 0, "block_cyclic_distribution: a block of 0 targets");
  }
  target_location locate(std::uint64_t t) const noexcept {
    const std::uint64_t b = t / block_;
    return {static_cast<int>(b % cores_), (b / cores_) * block_ + t % block_};
  }
  std::uint64_t global(int core, std::uint64_t l) const noexcept {
    return ((l / block_) * cores_ + static_cast<std::uint64_t>(core)) * block_ + l % block_;
  }
  std::string name() const {
    return fmt::format("block_cyclic_distribution(block {}, {} cores)", block_, cores_);
  }

 private:
  std::uint64_t block_;
  std::uint64_t cores_ = 1;
};

/// Target t on core mix(t ^ seed) mod cores: spreads ids with structure
/// (strides, powers of two) evenly. Owners have no dense numbering, so the
/// local index is the target id itself (keep a hash map per core).
class hashed_distribution {
 public:
  hashed_distribution() = default;  // one core
  explicit hashed_distribution(int cores, std::uint64_t seed = 0)
      : cores_(static_cast<std::uint64_t>(cores)), seed_(seed) {
    SHOAL_CHECK(cores > 0, "hashed_distribution: {} cores; it needs at least one", cores);
  }
  target_location locate(std::uint64_t t) const noexcept {
    return {static_cast<int>(mix(t ^ seed_) % cores_), t};
  }
  std::string name() const {
    return fmt::format("hashed_distribution({} cores, seed {})", cores_, seed_);
  }
  /// A bijective 64-bit finaliser (splitmix64's): every input bit moves
  /// every output bit.
  static constexpr std::uint64_t mix(std::uint64_t x) noexcept {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

 private:
  std::uint64_t cores_ = 1;
  std::uint64_t seed_ = 0;
};

/// The distribution's name() if it has one, else "a user-defined distribution".
template <distribution_like D>
std::string distribution_name(const D& d) {
  if constexpr (requires {
                  { d.name() } -> std::convertible_to<std::string_view>;
                }) {
    return std::string(std::string_view(d.name()));
  } else {
    return "a user-defined distribution";
  }
}

namespace detail {
[[noreturn, gnu::cold, gnu::noinline]] inline void fatal_target(std::string_view who,
                                                                std::uint64_t target,
                                                                const std::string& dist,
                                                                std::string_view why) {
  fatal_user(fmt::format("{}: target {} of {} {}", who, target, dist, why));
}
}  // namespace detail

namespace detail {
// The cold halves of check_target, out of line so that the check inlines
// into every send (formatting the message made it a call of ~36
// instructions per value: pagerank --reduce combine under callgrind).
template <class D>
[[noreturn, gnu::cold, gnu::noinline]] void fatal_target_range(const D& d, std::uint64_t target,
                                                               std::uint64_t targets,
                                                               std::string_view who) {
  fatal_target(who, target, distribution_name(d), fmt::format("is out of range [0, {})", targets));
}
template <class D>
[[noreturn, gnu::cold, gnu::noinline]] void fatal_target_core(const D& d, std::uint64_t target,
                                                              int core, int job_cores,
                                                              std::string_view who) {
  fatal_target(who, target, distribution_name(d),
               fmt::format("maps to core {}, outside the job's {} cores", core, job_cores));
}
}  // namespace detail

/// Locates `target` and checks it: inside the distribution's range (when it
/// declares targets()) and owned by a core of a job of `job_cores` cores.
/// Ends the job otherwise, naming `who`, the target and the distribution.
template <distribution_like D>
[[gnu::always_inline]] inline target_location check_target(const D& d, std::uint64_t target,
                                                           int job_cores, std::string_view who) {
  if constexpr (requires {
                  { d.targets() } -> std::convertible_to<std::uint64_t>;
                }) {
    if (target >= d.targets()) [[unlikely]]
      detail::fatal_target_range(d, target, d.targets(), who);
  }
  const target_location at = d.locate(target);
  if (static_cast<unsigned>(at.core) >= static_cast<unsigned>(job_cores)) [[unlikely]]
    detail::fatal_target_core(d, target, at.core, job_cores, who);
  return at;
}

}  // namespace shoal
