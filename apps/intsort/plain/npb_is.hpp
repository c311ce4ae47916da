// The NAS Parallel Benchmarks IS problem (integer sort, NPB 3.x) as both
// `shoal intsort` and shoal-baseline-intsort define it: the classes and their
// sizes, the key generator, the published partial-verification values, the
// way keys are split over participants and key ranges over owners, the
// verification rules, a sequential reference and the report.
//
// The benchmark: TOTAL_KEYS keys in [0, MAX_KEY), key i = MAX_KEY/4 * (the sum
// of the 4 uniform draws 4i+1..4i+4 of NPB's randlc stream), ranked 10 times.
// Before ranking iteration `it` (1..10) sets key[it] = it and
// key[it + 10] = MAX_KEY - it. Ranking computes, for every key value v, the
// number of keys <= v (the "cumulative histogram"); the rank of a key of value
// k is then cum[k - 1], the number of smaller keys. Partial verification
// checks the ranks of the 5 keys at the published test indices every
// iteration against the published ranks, shifted by the iteration as NPB's
// is.c does for each class; full verification, after the last iteration,
// places every key at its rank and checks the result is sorted.
// mops = 10 * TOTAL_KEYS / time / 1e6 (NPB: "keys ranked").
//
// Plain C++ (no shoal, no MPI).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/plain/report.hpp"

namespace shoal_apps::intsort {

/// Ranking iterations (NPB's MAX_ITERATIONS) and test keys (TEST_ARRAY_SIZE).
inline constexpr int max_iterations = 10;
inline constexpr int test_keys = 5;

/// One NPB IS class: its sizes and published partial-verification values.
struct is_class {
  char name = 'S';
  int log_keys = 16;     ///< TOTAL_KEYS = 2^log_keys
  int log_max_key = 11;  ///< keys lie in [0, 2^log_max_key)
  int log_buckets = 9;   ///< buckets of NPB's bucket sort (key >> (log_max_key - log_buckets))
  std::array<std::int64_t, test_keys> test_index{};
  std::array<std::int64_t, test_keys> test_rank{};

  std::int64_t total_keys() const noexcept { return std::int64_t{1} << log_keys; }
  std::int32_t max_key() const noexcept { return std::int32_t{1} << log_max_key; }
  int buckets() const noexcept { return 1 << log_buckets; }
  int bucket_shift() const noexcept { return log_max_key - log_buckets; }
  /// "class A: 2^23 keys in [0, 2^19), 2^10 buckets, 10 iterations".
  std::string describe() const;
};

/// The accepted --class values, in the order --help lists them.
inline constexpr std::array<const char*, 4> class_names{"S", "W", "A", "B"};

/// The class named `name` (one of class_names). Throws input_error naming
/// --class and the accepted values otherwise.
const is_class& find_class(const std::string& name);

/// The rank NPB expects for test key `i` (0..4) at `iteration` (1..10).
std::int64_t expected_rank(const is_class& c, int i, int iteration) noexcept;

/// Whether NPB checks test key value k at all (0 < k <= TOTAL_KEYS - 1).
inline bool checks_test_key(const is_class& c, std::int64_t k) noexcept {
  return k > 0 && k <= c.total_keys() - 1;
}

/// NPB's randlc seed and multiplier.
inline constexpr std::uint64_t key_seed = 314159265;
inline constexpr std::uint64_t key_multiplier = 1220703125;  // 5^13

/// The state x_n of NPB's generator x_{k+1} = a x_k mod 2^46 after `n` steps
/// from the seed (NPB's find_my_seed, by repeated squaring: O(log n)).
std::uint64_t randlc_jump(std::uint64_t n) noexcept;

/// Writes keys [first, first + out.size()) of the class's sequence into `out`,
/// exactly as NPB's create_seq computes them (the same doubles, the same
/// rounding), starting from the generator state after 4 * first draws.
void generate_keys(const is_class& c, std::int64_t first, std::span<std::int32_t> out);

/// Participant p of n holds keys [share_begin(total, p, n), share_begin(total, p+1, n)).
constexpr std::int64_t share_begin(std::int64_t total, int p, int n) noexcept {
  return total / n * p + total % n * p / n;
}

/// Applies NPB's per-iteration modification to the keys a participant holds
/// (indices [first, first + keys.size())): key[it] = it, key[it+10] = MAX_KEY - it.
void modify_keys(const is_class& c, int iteration, std::int64_t first,
                 std::span<std::int32_t> keys) noexcept;

/// Splits the buckets over `owners` contiguous ranges with about the same
/// number of keys each, from the global bucket sizes `sizes` (length
/// c.buckets()). Returns owners + 1 bucket boundaries: owner o ranks the keys
/// of buckets [bounds[o], bounds[o+1]), so key values
/// [bounds[o] << shift, bounds[o+1] << shift). Every owner gets at least one
/// bucket; requires owners <= c.buckets().
std::vector<std::int32_t> split_buckets(std::span<const std::int64_t> sizes, int owners);

/// Checks the job shape: throws input_error (naming `what`, e.g. "--cores")
/// when there are more participants than buckets or than keys.
void check_shape(const is_class& c, std::int64_t participants, const std::string& what);

/// The verdict pieces every implementation reports.
struct is_outcome {
  double seconds = 0;                ///< the 10 timed iterations
  std::int64_t partial_passed = 0;   ///< test-key checks that passed (of 5 per iteration)
  std::int64_t partial_checked = 0;  ///< test-key checks made
  std::int64_t out_of_order = 0;     ///< full verification: keys out of sort or misplaced
};

/// Fills the report: problem, time, rate (Mop/s), class, mops, the verdict.
/// Passes when all 5 * 10 partial checks passed and full verification found
/// nothing wrong.
void fill_report(report& out, const is_class& c, const is_outcome& o);

/// The partial verification of one iteration on a single array: counts the
/// test keys whose rank cum[k-1] matches (`cum` covers the whole key range).
/// Adds to o.partial_passed / o.partial_checked.
void partial_verify(const is_class& c, int iteration, std::span<const std::int64_t> test_values,
                    std::span<const std::int32_t> cum, is_outcome& o);

/// The sequential reference (--impl sequential): the whole benchmark on one
/// core, NPB's serial algorithm without buckets. `fault` as for the app
/// ("", "partial" or "full": makes that verification fail, for tests).
is_outcome run_sequential(const is_class& c, const std::string& fault);

}  // namespace shoal_apps::intsort
