// The Permutation problem (Active Pebbles section 4.3) as `shoal
// permutation` defines it: options, the arrays' contents, their block
// distribution, the memory check, the independent check and the report.
//
// Three arrays of N 64-bit elements, block-distributed over the P
// participants (cores): data, perm and data_perm. data and perm are seeded
// pseudo-random permutations of [0, N) (keyed_permutation.hpp), filled
// pointwise; data_perm starts as `unwritten`. The timed phase makes
// data_perm[perm[data[i]]] = i for every i. Since both are bijections,
// afterwards data_perm[j] must be data^-1(perm^-1(j)) for every j: the check
// computes that through the inverse permutations, a path that shares nothing
// with the timed phase but the arrays' definition.
//
// Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "common/plain/report.hpp"
#include "permutation/plain/keyed_permutation.hpp"

namespace shoal_apps::permutation {

/// The command-line options.
struct permutation_options {
  std::int64_t elements = std::int64_t{1} << 20;  ///< N
  std::uint64_t seed = 1;
};

/// Largest --elements.
inline constexpr std::int64_t max_elements = std::int64_t{1} << 40;
/// Bytes per element: data, perm and data_perm, 8 bytes each.
inline constexpr double bytes_per_element = 24;
/// What data_perm holds where nothing was written.
inline constexpr std::uint64_t unwritten = ~std::uint64_t{0};

/// Declares --elements and --seed on `cmd`, bound to `o`.
void add_permutation_options(CLI::App& cmd, permutation_options& o);

/// Throws input_error naming the flag when --elements is out of range or the
/// arrays would not fit in this machine's memory.
void check_options(const permutation_options& o);

/// The data and perm permutations of a run.
struct permutation_keys {
  keyed_permutation data;
  keyed_permutation perm;

  /// The i that the timed phase must have stored at data_perm[j].
  std::uint64_t expected_at(std::uint64_t j) const noexcept {
    return data.inverse(perm.inverse(j));
  }
};

/// The permutations --elements and --seed select.
permutation_keys make_keys(const permutation_options& o) noexcept;

__extension__ using uint128 = unsigned __int128;  // GCC and Clang; __extension__: no -Wpedantic

/// N elements in P blocks of ceil(N / P): participant p owns
/// [begin(p), begin(p + 1)); the last ones may own fewer, or none.
class block_layout {
 public:
  block_layout(std::uint64_t n, int parts) noexcept;

  /// The participant that owns element j (< n): j / block, by a multiply.
  int owner(std::uint64_t j) const noexcept {
    auto q = static_cast<std::uint64_t>((static_cast<uint128>(j) * magic_) >> 64);
    // The reciprocal is rounded up, so q is j / block or one more; with
    // block 1 it saturates at 2^64 - 1, and q is j - 1.
    if (q * block_ > j)
      --q;
    else if ((q + 1) * block_ <= j)
      ++q;
    return static_cast<int>(q);
  }
  std::uint64_t begin(int p) const noexcept {
    const std::uint64_t b = static_cast<std::uint64_t>(p) * block_;
    return b < n_ ? b : n_;
  }
  std::uint64_t size(int p) const noexcept { return begin(p + 1) - begin(p); }

 private:
  std::uint64_t n_;
  std::uint64_t block_;
  std::uint64_t magic_;  ///< ceil(2^64 / block), 2^64 - 1 for block 1
};

/// What the check of one run found (summed over participants).
struct permutation_tally {
  std::int64_t writes = 0;        ///< stores into data_perm in the timed phase
  std::int64_t unwritten = 0;     ///< slots still holding `unwritten`
  std::int64_t wrong = 0;         ///< slots holding another value than expected_at(j)
  std::int64_t first_wrong = -1;  ///< smallest such j (-1: none)
  std::int64_t sampled = 0;       ///< i checked forward: data_perm[perm[data[i]]] == i
  std::int64_t sample_wrong = 0;

  friend permutation_tally operator+(const permutation_tally& a,
                                     const permutation_tally& b) noexcept;
};

/// Checks data_perm[j] for j in [first, first + count) (stored at
/// slots[0, count)) against expected_at(j); adds to `t` (not writes/sampled).
void check_slots(const permutation_keys& keys, std::uint64_t first, const std::uint64_t* slots,
                 std::uint64_t count, permutation_tally& t);

/// Fills `out`: problem line, time, rate (M elements/s), fields elements,
/// elements_per_s, wrong, unwritten, writes, sampled, and the verdict
/// (every slot written once with the value the inverses give, every
/// sampled identity holds).
void fill_report(report& out, const permutation_options& o, const std::string& layout,
                 double seconds, const permutation_tally& t);

}  // namespace shoal_apps::permutation
