// ISx's problem, generator, local sort and checks (isx_problem.hpp).
#include "isx/plain/isx_problem.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/mix.hpp"

namespace shoal_apps::isx {

namespace {

/// Keys are 32-bit; a larger job would need 64-bit keys everywhere.
constexpr std::uint64_t max_key_limit = std::uint64_t{1} << 32;
/// Keys per core: 2^31 keep every count and offset in 32 bits and far above
/// what a machine of today holds per core.
constexpr std::uint64_t max_keys_per_core = std::uint64_t{1} << 31;
constexpr std::uint64_t max_iterations = 1000;
constexpr std::uint64_t max_message_keys = std::uint64_t{1} << 20;

/// "2^22" for powers of two, else the number.
std::string power_or_number(std::uint64_t v) {
  if (v != 0 && (v & (v - 1)) == 0) return fmt::format("2^{}", std::countr_zero(v));
  return std::to_string(v);
}

}  // namespace

void add_options(CLI::App& cmd, isx_options& o) {
  cmd.add_option("--keys-per-core", o.keys_per_core, "keys each core sorts (weak scaling, as ISx)")
      ->check(unsigned_64_check())
      ->capture_default_str();
  cmd.add_option("--max-key", o.max_key, "keys are uniform in [0, M); 0: keys-per-core x cores")
      ->check(unsigned_64_check())
      ->capture_default_str();
  cmd.add_option("--iterations", o.iterations, "timed sorts, after one untimed")
      ->check(unsigned_64_check())
      ->capture_default_str();
  cmd.add_option("--message-keys", o.message_keys,
                 "keys a core stages per destination before sending them (BCL: 1024)")
      ->check(unsigned_64_check())
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the keys")
      ->check(unsigned_64_check())
      ->capture_default_str();
  // For the tests: spoils the output, to prove the check fails.
  hide_from_help(cmd, cmd.add_option("--inject-fault", o.fault, "spoil the output (tests)")
                          ->check(CLI::IsMember({"none", "order", "lose", "range"})));
}

isx_problem::isx_problem(const isx_options& o, int cores)
    : cores_(cores),
      keys_per_core_(o.keys_per_core),
      max_key_(o.max_key),
      seed_(o.seed),
      iterations_(0),
      message_keys_(0) {
  if (o.keys_per_core < 1 || o.keys_per_core > max_keys_per_core)
    throw input_error(fmt::format("--keys-per-core {}: out of range; expected 1 .. {}",
                                  o.keys_per_core, max_keys_per_core));
  if (o.iterations < 1 || o.iterations > max_iterations)
    throw input_error(fmt::format("--iterations {}: out of range; expected 1 .. {}", o.iterations,
                                  max_iterations));
  if (o.message_keys < 1 || o.message_keys > max_message_keys)
    throw input_error(fmt::format("--message-keys {}: out of range; expected 1 .. {}",
                                  o.message_keys, max_message_keys));
  iterations_ = static_cast<int>(o.iterations);
  message_keys_ = static_cast<int>(o.message_keys);
  const auto p = static_cast<std::uint64_t>(cores);
  if (max_key_ == 0) max_key_ = std::min(keys_per_core_ * p, max_key_limit);
  if (max_key_ > max_key_limit)
    throw input_error(fmt::format("--max-key {}: keys are 32-bit; expected at most {} (2^32)",
                                  max_key_, max_key_limit));
  if (max_key_ < p)
    throw input_error(fmt::format(
        "--max-key {}: fewer key values than the job's {} cores; each core sorts a range of at "
        "least one value",
        max_key_, cores));
  owner_mul_ = (p << 32) / max_key_;
  begins_.resize(static_cast<std::size_t>(cores) + 1);
  for (int c = 0; c <= cores; ++c) begins_[static_cast<std::size_t>(c)] = range_begin(c);
  // Per core: the input, what it receives (with margin), the sorted output,
  // the counts of its range, and staging; times the cores of this machine
  // (the baseline's ranks or shoal's cores all share it).
  const double width = std::ceil(static_cast<double>(max_key_) / static_cast<double>(p));
  const double per_core = 4.0 * (static_cast<double>(keys_per_core_) +
                                 2.0 * static_cast<double>(receive_bound()) + width) +
                          4.0 * static_cast<double>(message_keys_) * static_cast<double>(p);
  const double need = per_core * static_cast<double>(p);
  check_memory(need, 0.8,
               fmt::format("--keys-per-core {} --max-key {} on {} cores: the sort needs {}",
                           keys_per_core_, max_key_, cores, human_bytes(need)),
               "lower --keys-per-core or --max-key");
}

std::uint32_t isx_problem::key(std::uint64_t g) const noexcept {
  // Lemire's multiply-shift maps a uniform 64-bit word onto [0, max_key)
  // with a bias below 2^-32, without a division.
  __extension__ using u128 = unsigned __int128;  // GCC/Clang; __extension__: no -Wpedantic
  const std::uint64_t r = keyed_random(seed_, 0x697378ULL, g);
  return static_cast<std::uint32_t>((static_cast<u128>(r) * max_key_) >> 64);
}

std::uint64_t isx_problem::range_begin(int c) const noexcept {
  const auto p = static_cast<std::uint64_t>(cores_);
  return (static_cast<std::uint64_t>(c) * max_key_ + p - 1) / p;
}

std::uint64_t isx_problem::receive_bound() const noexcept {
  const auto p = static_cast<std::uint64_t>(cores_);
  const std::uint64_t widest = (max_key_ + p - 1) / p;
  const double expected = static_cast<double>(total_keys()) * static_cast<double>(widest) /
                          static_cast<double>(max_key_);
  return static_cast<std::uint64_t>(expected + 16.0 * std::sqrt(expected) + 64.0) +
         static_cast<std::uint64_t>(message_keys_);
}

std::string isx_problem::describe() const {
  return fmt::format("{} keys per core x {} cores, uniform in [0, {}), {} sorts",
                     power_or_number(keys_per_core_), cores_, max_key_, iterations_);
}

void make_keys(const isx_problem& p, int core, std::span<std::uint32_t> out) {
  const std::uint64_t first = static_cast<std::uint64_t>(core) * p.keys_per_core();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = p.key(first + i);
}

std::uint64_t count_keys(std::span<const std::uint32_t> keys, std::uint64_t lo,
                         std::span<std::uint32_t> counts) noexcept {
  std::uint64_t outside = 0;
  std::uint32_t* c = counts.data();
  const std::uint64_t width = counts.size();
  for (const std::uint32_t k : keys) {
    const std::uint64_t v = k - lo;  // wraps far above width when k < lo
    if (v >= width) {
      ++outside;
      continue;
    }
    ++c[v];
  }
  return outside;
}

void emit_sorted(std::span<const std::uint32_t> counts, std::uint64_t lo, std::uint64_t total,
                 std::vector<std::uint32_t>& sorted) {
  // Keys are spread thin (max_key = P x keys per core by default: about one
  // key per value), so a loop of counts[v] stores mispredicts its exit on
  // most values. Instead every value stores 4 copies unconditionally and
  // moves on by its count; only counts above 4 loop. 4 slots of slack at
  // the end take the overshoot of the last values.
  constexpr std::size_t spill = 4;
  sorted.resize(total + spill);
  std::uint32_t* out = sorted.data();
  const std::uint32_t* c = counts.data();
  const std::size_t width = counts.size();
  auto k = static_cast<std::uint32_t>(lo);
  for (std::size_t v = 0; v < width; ++v, ++k) {
    const std::uint32_t n = c[v];
    out[0] = k;
    out[1] = k;
    out[2] = k;
    out[3] = k;
    if (n > spill) [[unlikely]]
      for (std::uint32_t i = spill; i < n; ++i) out[i] = k;
    out += n;
  }
  sorted.resize(total);
}

std::uint64_t counting_sort(std::span<const std::uint32_t> keys, std::uint64_t lo, std::uint64_t hi,
                            std::vector<std::uint32_t>& counts,
                            std::vector<std::uint32_t>& sorted) {
  counts.assign(static_cast<std::size_t>(hi - lo), 0);
  const std::uint64_t outside = count_keys(keys, lo, counts);
  emit_sorted(counts, lo, keys.size() - outside, sorted);
  return outside;
}

std::uint64_t key_hash(std::uint32_t k) noexcept { return mix64(0x6b6579ULL ^ k); }

std::uint64_t position_hash(std::uint32_t k, std::uint64_t position) noexcept {
  return mix64((position << 32) ^ k ^ 0x736f7274ULL);
}

isx_tally operator+(isx_tally a, const isx_tally& b) noexcept {
  a.keys += b.keys;
  a.out_of_order += b.out_of_order;
  a.out_of_range += b.out_of_range;
  a.input_hash += b.input_hash;
  a.output_hash += b.output_hash;
  a.sorted_hash += b.sorted_hash;
  return a;
}

isx_tally check_output(std::span<const std::uint32_t> input, std::span<const std::uint32_t> sorted,
                       std::uint64_t base, std::uint64_t lo, std::uint64_t hi, std::uint64_t lost) {
  isx_tally t;
  t.keys = sorted.size();
  t.out_of_range = lost;
  for (const std::uint32_t k : input) t.input_hash += key_hash(k);
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const std::uint32_t k = sorted[i];
    if (k < lo || k >= hi) ++t.out_of_range;
    if (i > 0 && sorted[i - 1] > k) ++t.out_of_order;
    t.output_hash += key_hash(k);
    t.sorted_hash += position_hash(k, base + i);
  }
  return t;
}

void inject_fault(const std::string& fault, std::vector<std::uint32_t>& sorted) {
  if (sorted.size() < 2) return;
  if (fault == "order") std::swap(sorted.front(), sorted.back());
  if (fault == "lose") sorted.pop_back();
  if (fault == "range") sorted.back() = std::numeric_limits<std::uint32_t>::max();
}

void fill_report(report& out, const isx_problem& p, double seconds, const isx_tally& t) {
  const double keys = static_cast<double>(p.total_keys()) * p.iterations();
  const double rate = seconds > 0 ? keys / seconds / 1e6 : 0;
  out.set_problem(p.describe());
  out.set_time(seconds);
  out.set_rate(rate, "Mkeys/s");
  out.set("keys_per_core", p.keys_per_core());
  out.set("total_keys", p.total_keys(), false);
  out.set("max_key", p.max_key(), false);
  out.set("iterations", p.iterations(), false);
  out.set("message_keys", p.message_keys(), false);
  out.set("seconds_per_sort", seconds / p.iterations());
  out.set("sorted_checksum", fmt::format("{:016x}", t.sorted_hash));
  const bool same_multiset = t.input_hash == t.output_hash && t.keys == p.total_keys();
  const bool ok = same_multiset && t.out_of_order == 0 && t.out_of_range == 0;
  out.set("full_verified", ok);
  out.set_validated(
      ok, fmt::format("{} of {} keys out, {} out of order, {} outside their core's range; the "
                      "output is {}the input's multiset",
                      t.keys, p.total_keys(), t.out_of_order, t.out_of_range,
                      same_multiset ? "" : "NOT "));
}

isx_tally sort_sequential(const isx_problem& p, double& seconds) {
  std::vector<std::uint32_t> keys(static_cast<std::size_t>(p.total_keys()));
  for (std::size_t g = 0; g < keys.size(); ++g) keys[g] = p.key(g);
  std::vector<std::uint32_t> sorted;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < p.iterations(); ++i) {
    sorted = keys;
    std::sort(sorted.begin(), sorted.end());
  }
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return check_output(keys, sorted, 0, 0, p.max_key(), 0);
}

}  // namespace shoal_apps::isx
