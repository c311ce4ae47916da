// Options, sizes, memory check, sequential reference and report of GUPS,
// shared by `shoal gups` and shoal-baseline-gups.
#include "gups/plain/gups_problem.hpp"

#include <vector>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"
#include "gups/plain/hpcc_stream.hpp"

namespace shoal_apps::gups {

void add_gups_options(CLI::App& cmd, gups_options& o) {
  cmd.add_option("--log-table", o.log_table,
                 fmt::format("table of 2^n 64-bit words over the whole job, n in [{}, {}]; "
                             "4 * 2^n updates",
                             min_log_table, max_log_table))
      ->capture_default_str();
}

std::string gups_problem::describe(const std::string& per_what) const {
  return fmt::format("2^{} words ({}), {} updates, at most {} outstanding per {}", log_table,
                     human_bytes(table_bytes()), updates, max_outstanding, per_what);
}

namespace {

void check_fits(const gups_problem& p, int processes, double heap_bytes_per_process,
                const std::string& heap_flag) {
  const double need = p.table_bytes() / processes;
  const std::string what =
      fmt::format("--log-table {}: the table needs {} ({} per process over {})", p.log_table,
                  human_bytes(p.table_bytes()), human_bytes(need), processes);
  if (heap_bytes_per_process > 0 && need > heap_bytes_per_process)
    throw input_error(fmt::format(
        "{}, more than the global heap of {} per process ({}); raise {} or lower --log-table", what,
        human_bytes(heap_bytes_per_process), heap_flag, heap_flag));
  check_memory(need, 0.9, what, "lower --log-table or use more processes");
}

}  // namespace

gups_problem make_problem(const gups_options& o, int processes, double heap_bytes_per_process,
                          const std::string& heap_flag) {
  if (o.log_table < min_log_table || o.log_table > max_log_table)
    throw input_error(fmt::format("--log-table {}: out of range; expected an integer in [{}, {}]",
                                  o.log_table, min_log_table, max_log_table));
  gups_problem p;
  p.log_table = o.log_table;
  p.table_words = std::int64_t{1} << o.log_table;
  p.mask = static_cast<std::uint64_t>(p.table_words) - 1;
  p.updates = 4 * p.table_words;
  check_fits(p, processes, heap_bytes_per_process, heap_flag);
  return p;
}

std::uint64_t digest_term(std::uint64_t i, std::uint64_t value) noexcept {
  // A strong 64-bit mix of (i, value), so that a value moved to another
  // word, or two values swapped, changes the sum.
  std::uint64_t x = value ^ (i * 0x9e3779b97f4a7c15ULL);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t reference_digest(const gups_problem& p) {
  std::vector<std::uint64_t> table(static_cast<std::size_t>(p.table_words));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = i;
  std::uint64_t r = hpcc_starts(0);
  for (std::int64_t k = 0; k < p.updates; ++k) {
    r = hpcc_next(r);
    table[r & p.mask] ^= r;
  }
  std::uint64_t digest = 0;
  for (std::size_t i = 0; i < table.size(); ++i) digest += digest_term(i, table[i]);
  return digest;
}

void fill_report(report& out, const gups_problem& p, const std::string& per_what,
                 const gups_outcome& o) {
  const double gups = o.seconds > 0 ? static_cast<double>(p.updates) / o.seconds / 1e9 : 0;
  const double error_fraction = static_cast<double>(o.wrong) / static_cast<double>(p.table_words);
  out.set_problem(p.describe(per_what));
  out.set_time(o.seconds);
  out.set_rate(gups, "GUPS");
  out.set("gups", gups);
  out.set("error_fraction", error_fraction);
  out.set("updates", p.updates, false);
  out.set("table_words", p.table_words, false);
  out.set("reference", o.reference_run ? (o.reference_ok ? "matched" : "MISMATCH") : "skipped");
  const bool ok = error_fraction <= 0.01 && o.reference_ok;
  std::string detail =
      fmt::format("{} of {} words wrong after re-applying the updates (HPCC allows 1%)", o.wrong,
                  p.table_words);
  if (o.reference_run)
    detail += o.reference_ok ? "; table equals the sequential reference"
                             : "; table DIFFERS from the sequential reference";
  out.set_validated(ok, detail);
}

}  // namespace shoal_apps::gups
