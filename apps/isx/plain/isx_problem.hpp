// ISx (Hanebutte and Hemstad, PGAS 2015), the bucket sort of uniformly
// random integer keys that BCL's thesis (section 5.3) sorts with its queues:
// the problem, the key generator, the key ranges, the local counting sort
// and the checks, shared by `shoal isx` and shoal-baseline-isx. No shoal, no
// MPI.
//
// Problem (weak scaling, as ISx runs): every core (every rank of the
// baseline) holds `keys_per_core` keys, uniform in [0, max_key); key g of
// the job (g = core * keys_per_core + i) is a pure function of (seed, g),
// so any core, rank or sequential reference makes the same input. Core c
// owns the key values [ceil(c * max_key / P), ceil((c + 1) * max_key / P))
// (one bucket per core, as ISx's default); a sort sends every key to its
// owner (distribution stage), and the owner sorts what it got by counting
// (local sort stage). The input is made once and sorted `iterations` times
// after one untimed warm-up sort.
//
// Verification (a full sort check, after the last sort): on every core the
// output is non-decreasing and inside the core's range; the sizes add up to
// the job's keys; the multiset is the input's (the sum over keys of a 64-bit
// mix of the key, mod 2^64, equals the input's); and an order-sensitive
// checksum of the whole sorted sequence (each key mixed with its global
// position) is reported, so that runs of different implementations and job
// shapes of the same problem can be compared with a sequential std::sort
// (the tests do).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/plain/report.hpp"

namespace shoal_apps::isx {

/// The flags of a run (shared by the app and the baseline).
struct isx_options {
  std::uint64_t keys_per_core = std::uint64_t{1} << 22;
  std::uint64_t max_key = 0;  ///< 0: keys_per_core * cores (one key per value on average)
  std::uint64_t seed = 1;
  std::uint64_t iterations = 5;
  std::uint64_t message_keys = 1024;  ///< keys a core stages per destination before sending
  std::string fault = "none";         ///< tests: "order", "lose" or "range" spoils the output
};

/// Declares the flags of isx_options on `cmd` (the app's and the baseline's
/// command lines are the same).
void add_options(CLI::App& cmd, isx_options& o);

/// The problem of a job of `cores` cores, checked.
class isx_problem {
 public:
  /// Throws input_error naming the flag when the options cannot make a
  /// problem on `cores` cores (sizes out of range, a key range narrower
  /// than one value per core, more memory than this machine has).
  isx_problem(const isx_options& o, int cores);

  int cores() const noexcept { return cores_; }
  std::uint64_t keys_per_core() const noexcept { return keys_per_core_; }
  std::uint64_t total_keys() const noexcept {
    return keys_per_core_ * static_cast<std::uint64_t>(cores_);
  }
  std::uint64_t max_key() const noexcept { return max_key_; }
  std::uint64_t seed() const noexcept { return seed_; }
  int iterations() const noexcept { return iterations_; }
  int message_keys() const noexcept { return message_keys_; }

  /// Key g of the job's input.
  std::uint32_t key(std::uint64_t g) const noexcept;
  /// The core that sorts key value k: floor(k * P / max_key), without the
  /// 64-bit division (a fifth of the distribution's time on this machine's
  /// EPYC): a multiply by floor(P * 2^32 / max_key) is at most one below,
  /// and one compare with the next core's first key corrects it.
  int owner(std::uint32_t k) const noexcept { return owners()(k); }
  /// owner() as a value (the multiplier and the range starts), valid while
  /// the problem lives: a loop that holds it in a local keeps both in
  /// registers, where loads through the problem are repeated on every key
  /// once the compiler cannot prove the loop's stores leave them alone.
  struct owner_map {
    std::uint64_t mul;             ///< floor(P * 2^32 / max_key)
    const std::uint64_t* begins;   ///< range_begin(c), c = 0 .. P
    int operator()(std::uint32_t k) const noexcept {
      const std::uint64_t d = (static_cast<std::uint64_t>(k) * mul) >> 32;
      return static_cast<int>(d + (k >= begins[d + 1] ? 1 : 0));
    }
  };
  owner_map owners() const noexcept { return {owner_mul_, begins_.data()}; }
  /// The first key value core c sorts (range_begin(P) == max_key).
  std::uint64_t range_begin(int c) const noexcept;
  /// The most keys one core is expected to receive, with margin: its range's
  /// share of the input plus 16 standard deviations and a few messages.
  std::uint64_t receive_bound() const noexcept;
  /// "2^22 keys per core x 2 cores in [0, 8388608), 5 sorts"
  std::string describe() const;

 private:
  int cores_;
  std::uint64_t keys_per_core_;
  std::uint64_t max_key_;
  std::uint64_t seed_;
  int iterations_;
  int message_keys_;
  std::uint64_t owner_mul_ = 0;        ///< floor(P * 2^32 / max_key)
  std::vector<std::uint64_t> begins_;  ///< range_begin(c), c = 0 .. P
};

/// Fills `out` with this core's input keys (keys core * kpc .. + kpc - 1).
void make_keys(const isx_problem& p, int core, std::span<std::uint32_t> out);

/// The local sort stage in its two halves, for callers that count keys as
/// they arrive: count_keys adds each key of `keys` inside [lo, lo +
/// counts.size()) to its count and returns how many were outside;
/// emit_sorted writes every counted value, in order, `counts[v]` times, to
/// `sorted` (resized to `total`, the sum of the counts).
std::uint64_t count_keys(std::span<const std::uint32_t> keys, std::uint64_t lo,
                         std::span<std::uint32_t> counts) noexcept;
void emit_sorted(std::span<const std::uint32_t> counts, std::uint64_t lo, std::uint64_t total,
                 std::vector<std::uint32_t>& sorted);

/// The local sort stage: sorts `keys`, all inside [lo, hi), by counting into
/// `counts` (resized to hi - lo and zeroed here) and writes the sorted keys
/// to `sorted` (resized to keys.size()). Keys outside the range are not
/// written: they are counted and returned (0 when the distribution was right).
std::uint64_t counting_sort(std::span<const std::uint32_t> keys, std::uint64_t lo, std::uint64_t hi,
                            std::vector<std::uint32_t>& counts, std::vector<std::uint32_t>& sorted);

/// 64-bit mix of one key, summed (mod 2^64) into the multiset checksum.
std::uint64_t key_hash(std::uint32_t k) noexcept;
/// The order-sensitive term of key k at global position `position`.
std::uint64_t position_hash(std::uint32_t k, std::uint64_t position) noexcept;

/// One core's part of the verification; parts add up over the job.
struct isx_tally {
  std::uint64_t keys = 0;          ///< keys in this core's output
  std::uint64_t out_of_order = 0;  ///< outputs smaller than their predecessor
  std::uint64_t out_of_range = 0;  ///< outputs outside the core's range (or lost in the sort)
  std::uint64_t input_hash = 0;    ///< sum of key_hash over this core's input
  std::uint64_t output_hash = 0;   ///< sum of key_hash over this core's output
  std::uint64_t sorted_hash = 0;   ///< sum of position_hash over this core's output
};
isx_tally operator+(isx_tally a, const isx_tally& b) noexcept;

/// Checks one core's sorted output (first global position `base`, range
/// [lo, hi)) against its input; adds `lost` keys the sort dropped.
isx_tally check_output(std::span<const std::uint32_t> input, std::span<const std::uint32_t> sorted,
                       std::uint64_t base, std::uint64_t lo, std::uint64_t hi, std::uint64_t lost);

/// Spoils `sorted` the way --inject-fault says (tests prove the check fails).
void inject_fault(const std::string& fault, std::vector<std::uint32_t>& sorted);

/// The job's verdict and figures into `out` (rank 0): `seconds` for the
/// timed sorts, `t` summed over every core.
void fill_report(report& out, const isx_problem& p, double seconds, const isx_tally& t);

/// The sequential reference: the whole input on one core, std::sort, the
/// same checks (the tally of one "core" owning every value).
isx_tally sort_sequential(const isx_problem& p, double& seconds);

}  // namespace shoal_apps::isx
