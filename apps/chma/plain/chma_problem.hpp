// The concurrent hash-map access problem of `shoal chma` (GMT section V.D)
// and its sequential reference. No shoal here: plain C++.
//
// The workload. A pool of P strings (1 .. 20 printable ASCII characters,
// generated from --seed or read from --pool FILE, one per line); the map
// starts with the first N of them (--populate). Then W tasks (--tasks) each
// take L steps (--length); step k of task t draws input string
// x = pool[input_index(t, k)] (counter-based), looks x up and, when x is in
// the map, inserts reverse(x). Accesses = lookups + inserts.
//
// Why the final map cannot depend on how the tasks interleave. Call a pool
// string "initial" when it is among the first N. The pool obeys the rule
//   (R) no initial string's reverse is a pool string that is not initial.
// Claim: under (R), a lookup finds x exactly when x is initial, whatever the
// order of other tasks' inserts. Suppose not, and take the first lookup (in
// real time) that finds a non-initial x: x was inserted before it, as the
// reverse of some y that an earlier lookup found. That lookup was earlier,
// so y is initial, and x = reverse(y) is a pool string (it was looked up)
// that is not initial: against (R). So every lookup's result, hence every
// insert, is fixed by the schedule alone, and the final map is the initial
// strings plus reverse(x) for every initial x any step drew: a sequential run
// of the tasks one after another builds exactly the same map.
//
// A generated pool obeys (R) by construction: its strings are at least 2
// characters, start with an upper-case letter and continue in lower case, so
// a reverse (which ends in upper case) is never a pool string. A pool file
// is checked when read (check_interleaving_rule); one that breaks (R) is
// refused with FILE:LINE of both strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "chma/plain/string_key.hpp"

namespace shoal_apps::chma {

/// The command line (every implementation).
struct chma_options {
  std::int64_t pool_size = std::int64_t{1} << 20;  ///< --pool-size: generated strings
  std::string pool_file;                           ///< --pool FILE instead
  std::int64_t populate = -1;                      ///< --populate: initial strings (-1: half)
  std::int64_t tasks = 16384;                      ///< --tasks: W
  std::int64_t length = 256;                       ///< --length: L steps per task
  std::uint64_t seed = 1;                          ///< --seed
  std::int64_t corrupt_task = -1;                  ///< hidden --inject-fault
};

/// Declares the options on `cmd`.
void add_chma_options(CLI::App& cmd, chma_options& o);

/// The problem, the same on every process: the pool itself and the sizes.
struct chma_problem {
  std::vector<str_key> pool;
  std::int64_t populate = 0;
  std::uint32_t tasks = 0;
  std::uint32_t length = 0;
  std::uint64_t seed = 0;
  std::int64_t corrupt_task = -1;
  std::string pool_name;  ///< "generated" or the file

  std::int64_t steps() const { return static_cast<std::int64_t>(tasks) * length; }
  std::string describe() const;

  /// Pool index of step k's input string for task t.
  std::uint64_t input_index(std::uint32_t t, std::uint32_t k) const noexcept {
    const std::uint64_t r = keyed_random(seed, 1000 + std::uint64_t{t}, k);
    return ((r >> 32) * pool.size()) >> 32;
  }
  const str_key& input(std::uint32_t t, std::uint32_t k) const noexcept {
    return pool[input_index(t, k)];
  }
};

/// What --inject-fault makes its task insert instead of reverse(x): a key no
/// correct run can hold (it starts with DEL, which no pool string has).
inline str_key faulty(const str_key& x) noexcept {
  str_key r = reversed(x);
  r.bytes()[0] = 0x7f;
  return r;
}

/// Checks the options, reads or generates the pool and checks it; throws
/// input_error naming the flag, or FILE:LINE for the pool file.
chma_problem make_problem(const chma_options& o, int ranks);

/// Reads a pool (one string of 1 .. max_chars printable ASCII characters a
/// line; CRLF line ends and a leading UTF-8 byte-order mark allowed) from a
/// stream or a buffer, without the runtime (tests, fuzz targets). Throws
/// input_error "<name>:<line>: ..." for a bad line, a line over
/// max_line_bytes, or an empty pool. Rule (R) is checked by make_problem.
std::vector<str_key> read_pool(std::istream& in, const std::string& name);
std::vector<str_key> read_pool_buffer(const char* data, std::size_t size, const std::string& name);

/// A digest of a map's contents: the sum of key_hash over its keys (any
/// order), with the number of keys and the accesses that built it.
struct map_totals {
  std::int64_t keys = 0;
  std::uint64_t digest = 0;
  std::int64_t lookups = 0;
  std::int64_t inserts = 0;  ///< insert operations (including of keys already there)

  std::int64_t accesses() const { return lookups + inserts; }
  bool operator==(const map_totals&) const = default;
};

/// `--impl sequential`: the map in one key_set, every task's steps in turn
/// (task 0's L steps, then task 1's, ...). The populated set is built
/// untimed; the steps are timed into `seconds`.
struct sequential_result {
  map_totals totals;
  double seconds = 0;
  std::vector<str_key> keys;  ///< the final map's keys (for the element check)
};
sequential_result run_sequential(const chma_problem& p, bool keep_keys);

/// The reference: the same schedule on a std::unordered_set<std::string>
/// (other code than key_set), ignoring --inject-fault. Its keys, sorted, are
/// returned when `keep_keys`.
struct reference_result {
  map_totals totals;
  std::vector<std::string> keys;
};
reference_result run_reference(const chma_problem& p, bool keep_keys);

}  // namespace shoal_apps::chma
