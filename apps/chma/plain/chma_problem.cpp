// Options, the string pool (generated or read and checked), the sequential
// implementation and the reference of `shoal chma` (chma_problem.hpp).
#include "chma/plain/chma_problem.hpp"

#include <algorithm>
#include <chrono>
#include <istream>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/text_input.hpp"

namespace shoal_apps::chma {

namespace {
constexpr std::int64_t max_pool = std::int64_t{1} << 28;
}  // namespace

void add_chma_options(CLI::App& cmd, chma_options& o) {
  auto* size = cmd.add_option("--pool-size", o.pool_size,
                              "strings in the generated pool (2 .. 20 letters each)")
                   ->capture_default_str();
  cmd.add_option("--pool", o.pool_file,
                 "read the pool from FILE instead: one string per line, 1 .. 20 printable "
                 "ASCII characters")
      ->check(file_name_check())
      ->excludes(size);
  // -1 stands for "half the pool" inside; a user's -1 is refused, not taken as it.
  cmd.add_option("--populate", o.populate,
                 "the map starts with the first N strings of the pool (default: half the pool)")
      ->check(CLI::Range(std::int64_t{0}, max_pool));
  cmd.add_option("--tasks", o.tasks, "concurrent tasks (W)")->capture_default_str();
  cmd.add_option("--length", o.length, "steps of each task (L)")->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the generated pool and of every task's inputs")
      ->check(unsigned_64_check())
      ->capture_default_str();
  hide_from_help(cmd, cmd.add_option("--inject-fault", o.corrupt_task,
                                     "testing: this task inserts wrong strings (validation must "
                                     "fail)"));
}

std::string chma_problem::describe() const {
  return fmt::format("pool of {} strings ({}), {} in the map at start, {} tasks x {} steps",
                     pool.size(), pool_name, populate, tasks, length);
}

namespace {

/// String i of the generated pool: 2 .. 20 letters, an upper-case one then
/// lower case (so no reverse is a pool string: rule (R)).
str_key generated_string(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t r0 = keyed_random(seed, 7, i);
  const std::size_t n = 2 + r0 % (max_chars - 1);
  char s[max_chars];
  std::uint64_t r = keyed_random(seed, 8, i);
  s[0] = static_cast<char>('A' + r % 26);
  r /= 26;
  for (std::size_t c = 1; c < n; ++c) {
    if (c == 12) r = keyed_random(seed, 9, i);  // 13 letters per word
    s[c] = static_cast<char>('a' + r % 26);
    r /= 26;
  }
  return make_key({s, n});
}

/// Checks one line of a pool file; throws input_error with FILE:LINE.
void check_line(const std::string& path, std::int64_t line, std::string_view s) {
  if (s.empty())
    throw input_error(
        fmt::format("{}:{}: empty line; each line must hold a string of 1 .. {} "
                    "printable characters",
                    path, line, max_chars));
  for (std::size_t c = 0; c < s.size(); ++c) {
    const auto b = static_cast<unsigned char>(s[c]);
    if (b < 0x20 || b > 0x7e)
      throw input_error(
          fmt::format("{}:{}: byte 0x{:02x} at column {} is not text; strings are "
                      "printable ASCII characters",
                      path, line, b, c + 1));
  }
  if (s.size() > max_chars)
    throw input_error(fmt::format("{}:{}: string of {} characters; at most {} are allowed", path,
                                  line, s.size(), max_chars));
}

std::vector<str_key> read_pool_lines(line_reader& in) {
  std::vector<str_key> pool;
  std::string_view line;
  while (in.next(line)) {
    check_line(in.name(), in.number(), line);
    if (static_cast<std::int64_t>(pool.size()) >= max_pool)
      in.fail(fmt::format("more than {} strings", max_pool));
    pool.push_back(make_key(line));
  }
  if (pool.empty()) throw input_error(fmt::format("--pool {}: no strings in the file", in.name()));
  return pool;
}

struct key_hasher {
  std::size_t operator()(const str_key& k) const noexcept { return key_hash(k); }
};

/// Refuses a pool breaking rule (R) of chma_problem.hpp: an initial string
/// whose reverse is a pool string that is not initial.
void check_interleaving_rule(const chma_problem& p) {
  std::unordered_map<str_key, std::int64_t, key_hasher> first_line;  // 1-based, first occurrence
  for (std::size_t i = 0; i < p.pool.size(); ++i)
    first_line.emplace(p.pool[i], static_cast<std::int64_t>(i) + 1);
  const auto initial = [&](std::int64_t line) { return line <= p.populate; };
  for (std::int64_t i = 0; i < p.populate; ++i) {
    const str_key& s = p.pool[static_cast<std::size_t>(i)];
    const auto r = first_line.find(reversed(s));
    if (r == first_line.end() || initial(r->second)) continue;
    throw input_error(fmt::format(
        "{}:{}: \"{}\" is the reverse of \"{}\" ({}:{}), which the map starts with (--populate "
        "{}), so whether a lookup finds it would depend on the order of the tasks; remove one "
        "or change --populate",
        p.pool_name, r->second, r->first.view(), s.view(), p.pool_name, i + 1, p.populate));
  }
}

void check_sizes(const chma_options& o, std::int64_t pool, int ranks) {
  if (o.tasks < 1 || o.tasks > (std::int64_t{1} << 30))
    throw input_error(fmt::format("--tasks {}: out of range; expected 1 .. 2^30", o.tasks));
  if (o.length < 1 || o.length > 0x7fffffffLL)
    throw input_error(fmt::format("--length {}: out of range; expected 1 .. 2147483647", o.length));
  // Every step is replayed by the sequential reference: a run past the bound
  // would take days, so it is refused rather than left to be killed.
  const double steps = static_cast<double>(o.tasks) * static_cast<double>(o.length);
  if (steps > 1099511627776.0)
    throw input_error(
        fmt::format("--tasks {} with --length {}: {:.3g} steps, more than the 2^40 (1.1e+12) a "
                    "run may take; lower --tasks or --length",
                    o.tasks, o.length, steps));
  if (o.populate < -1 || o.populate > pool)
    throw input_error(fmt::format("--populate {}: out of range; expected 0 .. {} (the pool's size)",
                                  o.populate, pool));
  // Each process holds the pool (24 bytes a string); the map's slots (32..64
  // bytes per key at half load) hold at most populate + tasks * length keys.
  const double keys = std::min(
      static_cast<double>(pool) * 2,
      static_cast<double>(pool) + static_cast<double>(o.tasks) * static_cast<double>(o.length));
  const double need = 24.0 * static_cast<double>(pool) * (ranks + 2) + 2 * 64.0 * keys;
  check_memory(need, 0.7,
               fmt::format("--pool-size/--pool: a pool of {} strings needs about {}", pool,
                           human_bytes(need)));
}

}  // namespace

chma_problem make_problem(const chma_options& o, int ranks) {
  chma_problem p;
  if (o.pool_file.empty()) {
    if (o.pool_size < 1 || o.pool_size > max_pool)
      throw input_error(
          fmt::format("--pool-size {}: out of range; expected 1 .. {}", o.pool_size, max_pool));
    check_sizes(o, o.pool_size, ranks);
    p.pool_name = "generated";
    p.pool.resize(static_cast<std::size_t>(o.pool_size));
    for (std::size_t i = 0; i < p.pool.size(); ++i) p.pool[i] = generated_string(o.seed, i);
  } else {
    p.pool_name = o.pool_file;
    const std::unique_ptr<std::istream> in = open_input("--pool", o.pool_file);
    p.pool = read_pool(*in, printable(o.pool_file, 200));
    check_sizes(o, static_cast<std::int64_t>(p.pool.size()), ranks);
  }
  const auto pool = static_cast<std::int64_t>(p.pool.size());
  p.populate = o.populate < 0 ? pool / 2 : o.populate;
  p.tasks = static_cast<std::uint32_t>(o.tasks);
  p.length = static_cast<std::uint32_t>(o.length);
  p.seed = o.seed;
  if (o.corrupt_task >= o.tasks)
    throw input_error(
        fmt::format("--inject-fault {}: no such task (there are {})", o.corrupt_task, o.tasks));
  p.corrupt_task = o.corrupt_task;
  if (!o.pool_file.empty()) check_interleaving_rule(p);
  return p;
}

std::vector<str_key> read_pool(std::istream& in, const std::string& name) {
  line_reader lines(in, name);
  return read_pool_lines(lines);
}

std::vector<str_key> read_pool_buffer(const char* data, std::size_t size, const std::string& name) {
  memory_buffer buffer(data, size);
  std::istream in(&buffer);
  return read_pool(in, name);
}

sequential_result run_sequential(const chma_problem& p, bool keep_keys) {
  sequential_result r;
  key_set map(static_cast<std::size_t>(p.populate));
  for (std::int64_t i = 0; i < p.populate; ++i) {
    const str_key& k = p.pool[static_cast<std::size_t>(i)];
    map.insert(k, key_hash(k));
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t t = 0; t < p.tasks; ++t) {
    for (std::uint32_t k = 0; k < p.length; ++k) {
      const str_key& x = p.input(t, k);
      if (!map.contains(x, key_hash(x))) continue;
      const str_key y = t == p.corrupt_task ? faulty(x) : reversed(x);
      map.insert(y, key_hash(y));
      ++r.totals.inserts;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.totals.lookups = p.steps();
  r.totals.keys = static_cast<std::int64_t>(map.size());
  map.for_each([&](const str_key& k) {
    r.totals.digest += key_hash(k);
    if (keep_keys) r.keys.push_back(k);
  });
  return r;
}

reference_result run_reference(const chma_problem& p, bool keep_keys) {
  reference_result r;
  std::unordered_set<std::string> map;
  for (std::int64_t i = 0; i < p.populate; ++i)
    map.emplace(p.pool[static_cast<std::size_t>(i)].view());
  for (std::uint32_t t = 0; t < p.tasks; ++t) {
    for (std::uint32_t k = 0; k < p.length; ++k) {
      const std::string x(p.input(t, k).view());
      if (map.count(x) == 0) continue;
      map.emplace(x.rbegin(), x.rend());
      ++r.totals.inserts;
    }
  }
  r.totals.lookups = p.steps();
  r.totals.keys = static_cast<std::int64_t>(map.size());
  for (const std::string& s : map) {
    r.totals.digest += key_hash(make_key(s));
    if (keep_keys) r.keys.push_back(s);
  }
  std::sort(r.keys.begin(), r.keys.end());
  return r;
}

}  // namespace shoal_apps::chma
