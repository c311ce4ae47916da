// The GUPS problem (HPCC RandomAccess) as both `shoal gups` and
// shoal-baseline-gups define it: options, sizes, each participant's share of
// the updates, the memory check, the sequential reference and the report.
//
// The table has 2^n 64-bit words, table[i] = i at the start. There are
// 4 * 2^n updates, split evenly over the participants (cores or ranks);
// participant p owns the update indices [first(p), first(p+1)). Update k
// uses element k+1 of the HPCC stream, r, and does
// table[r & (2^n - 1)] ^= r, as HPCC's reference code does (each process
// starts at hpcc_starts(first) and steps before each update). So the set of
// updates, and hence the final table, is the same for any job shape.
//
// Validation follows HPCC's rule: the same updates are applied again (XOR
// undoes them) and the words with table[i] != i are counted; at most 1% may
// be wrong. The shoal app applies them again through a path independent of
// the timed one (its own addressing), so a consistent fault of the timed
// path cannot cancel itself. For small tables the table after the timed
// phase is also compared with a sequential run of the same updates
// (through a digest).
//
// Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "common/plain/report.hpp"

namespace shoal_apps::gups {

/// HPCC's bound on look-ahead: updates a core (or process) may have
/// generated and not yet seen applied.
inline constexpr int max_outstanding = 1024;

/// Accepted --log-table values.
inline constexpr int min_log_table = 1;
inline constexpr int max_log_table = 40;

/// Tables up to this size are also checked against the sequential reference.
inline constexpr int max_reference_log_table = 20;

/// The command-line options shared by the app and the baseline.
struct gups_options {
  int log_table = 20;
};

/// Declares --log-table (and nothing else) on `cmd`, bound to `o`.
void add_gups_options(CLI::App& cmd, gups_options& o);

/// First update index of participant `p` of `n` when `total` updates are
/// split evenly (p == n gives `total`): floor(total * p / n).
constexpr std::int64_t share_begin(std::int64_t total, int p, int n) noexcept {
  return total / n * p + total % n * p / n;  // without forming total * p
}

/// Sizes of one run, derived from the options.
struct gups_problem {
  int log_table = 0;
  std::int64_t table_words = 0;
  std::uint64_t mask = 0;  ///< table_words - 1
  std::int64_t updates = 0;

  /// First update index of participant `p` of `n` (p == n gives the total).
  std::int64_t first_update(int p, int n) const noexcept { return share_begin(updates, p, n); }
  /// Table size in bytes.
  double table_bytes() const noexcept { return 8.0 * static_cast<double>(table_words); }
  /// "2^20 words (8 MiB), 4194304 updates, at most 1024 outstanding per core".
  std::string describe(const std::string& per_what) const;
  /// Whether the sequential reference check runs for this size.
  bool has_reference() const noexcept { return log_table <= max_reference_log_table; }
};

/// Checks the options and derives the sizes. `processes` share the table;
/// `heap_bytes_per_process` (0 = no such limit) is the memory each process
/// may use for its part. Throws input_error naming the flag when
/// --log-table is out of range or the table does not fit.
gups_problem make_problem(const gups_options& o, int processes, double heap_bytes_per_process,
                          const std::string& heap_flag);

/// A term of the order-independent table digest: the digest of a table is
/// the sum (mod 2^64) of digest_term(i, table[i]) over all i.
std::uint64_t digest_term(std::uint64_t i, std::uint64_t value) noexcept;

/// Digest of the table after every update has been applied once, computed
/// sequentially (2^n words of memory, 4 * 2^n steps). For small tables.
std::uint64_t reference_digest(const gups_problem& p);

/// Outcome of one run, as both programs report it.
struct gups_outcome {
  double seconds = 0;          ///< timed update phase
  std::int64_t wrong = 0;      ///< words with table[i] != i after re-applying
  bool reference_run = false;  ///< whether the digest was compared
  bool reference_ok = true;    ///< digest equal to the sequential reference
};

/// Fills `out`: problem line, time, rate (GUPS), fields `gups`,
/// `error_fraction`, `updates`, `table_words`, `reference` and the verdict
/// (validated when at most 1% of the words are wrong and the reference, if
/// run, matched).
void fill_report(report& out, const gups_problem& p, const std::string& per_what,
                 const gups_outcome& o);

}  // namespace shoal_apps::gups
