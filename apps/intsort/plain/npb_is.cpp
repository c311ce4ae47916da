// The NPB IS problem: classes, key generator, verification, sequential reference.
#include "intsort/plain/npb_is.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"

namespace shoal_apps::intsort {

namespace {

// Sizes and published values of NPB 3.x is.c (test_index_array, test_rank_array).
const std::array<is_class, 4> classes{{
    {'S', 16, 11, 9, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {'W',
     20,
     16,
     10,
     {357773, 934767, 875723, 898999, 404505},
     {1249, 11698, 1039987, 1043896, 1048018}},
    {'A',
     23,
     19,
     10,
     {2112377, 662041, 5336171, 3642833, 4250760},
     {104, 17523, 123928, 8288932, 8388264}},
    {'B',
     25,
     21,
     10,
     {41869, 812306, 5102857, 18232239, 26860214},
     {33422937, 10244, 59149, 33135281, 99}},
}};

constexpr std::uint64_t mask46 = (std::uint64_t{1} << 46) - 1;
constexpr double two_to_minus_46 = 1.0 / static_cast<double>(std::uint64_t{1} << 46);

/// a * x mod 2^46 (the product wraps mod 2^64, a multiple of 2^46).
constexpr std::uint64_t mul46(std::uint64_t a, std::uint64_t x) noexcept {
  return (a * x) & mask46;
}

}  // namespace

std::string is_class::describe() const {
  return fmt::format("class {}: 2^{} keys in [0, 2^{}), 2^{} buckets, {} iterations", name,
                     log_keys, log_max_key, log_buckets, max_iterations);
}

const is_class& find_class(const std::string& name) {
  for (const is_class& c : classes)
    if (name.size() == 1 && name[0] == c.name) return c;
  throw input_error(fmt::format("--class {}: unknown class; expected one of S, W, A, B", name));
}

std::int64_t expected_rank(const is_class& c, int i, int iteration) noexcept {
  const std::int64_t r = c.test_rank[static_cast<std::size_t>(i)];
  switch (c.name) {
    case 'S':
      return i <= 2 ? r + iteration : r - iteration;
    case 'W':
      return i < 2 ? r + (iteration - 2) : r - iteration;
    case 'A':
      return i <= 2 ? r + (iteration - 1) : r - (iteration - 1);
    default:  // 'B'
      return i == 1 || i == 2 || i == 4 ? r + iteration : r - iteration;
  }
}

std::uint64_t randlc_jump(std::uint64_t n) noexcept {
  std::uint64_t x = key_seed;
  std::uint64_t a = key_multiplier;
  for (; n != 0; n >>= 1) {
    if ((n & 1) != 0) x = mul46(a, x);
    a = mul46(a, a);
  }
  return x;
}

void generate_keys(const is_class& c, std::int64_t first, std::span<std::int32_t> out) {
  std::uint64_t x = randlc_jump(4 * static_cast<std::uint64_t>(first));
  const double k = static_cast<double>(c.max_key() / 4);
  auto draw = [&x] {
    x = mul46(key_multiplier, x);
    return static_cast<double>(x) * two_to_minus_46;  // exact, as randlc's R46 * X
  };
  for (std::int32_t& key : out) {
    // The additions in NPB's order: the rounding of the sum decides the key.
    double sum = draw();
    sum += draw();
    sum += draw();
    sum += draw();
    key = static_cast<std::int32_t>(k * sum);
  }
}

void modify_keys(const is_class& c, int iteration, std::int64_t first,
                 std::span<std::int32_t> keys) noexcept {
  const auto n = static_cast<std::int64_t>(keys.size());
  const std::int64_t a = iteration - first;
  const std::int64_t b = iteration + max_iterations - first;
  if (a >= 0 && a < n) keys[static_cast<std::size_t>(a)] = iteration;
  if (b >= 0 && b < n) keys[static_cast<std::size_t>(b)] = c.max_key() - iteration;
}

std::vector<std::int32_t> split_buckets(std::span<const std::int64_t> sizes, int owners) {
  const auto buckets = static_cast<std::int32_t>(sizes.size());
  std::int64_t total = 0;
  for (const std::int64_t s : sizes) total += s;
  std::vector<std::int32_t> bounds(static_cast<std::size_t>(owners) + 1, 0);
  bounds[static_cast<std::size_t>(owners)] = buckets;
  std::int32_t b = 0;
  std::int64_t below = 0;  // keys in buckets [0, b)
  for (int o = 1; o < owners; ++o) {
    const std::int64_t target = total / owners * o + total % owners * o / owners;
    // The boundary whose count of keys below is nearest the target, leaving
    // every owner before and after at least one bucket.
    const std::int32_t lowest = bounds[static_cast<std::size_t>(o) - 1] + 1;
    const std::int32_t highest = buckets - (owners - o);
    while (b < lowest || (b < highest && below + sizes[static_cast<std::size_t>(b)] <= target)) {
      below += sizes[static_cast<std::size_t>(b)];
      ++b;
    }
    if (b < highest && target - below > below + sizes[static_cast<std::size_t>(b)] - target) {
      below += sizes[static_cast<std::size_t>(b)];
      ++b;
    }
    bounds[static_cast<std::size_t>(o)] = b;
  }
  return bounds;
}

void check_shape(const is_class& c, std::int64_t participants, const std::string& what) {
  if (participants > c.buckets())
    throw input_error(fmt::format(
        "{}: {} {} is more than the {} buckets of class {} (each ranks at least one bucket)", what,
        participants, what == "--cores" ? "cores in all" : "processes", c.buckets(), c.name));
  if (participants > c.total_keys())
    throw input_error(fmt::format("{}: {} {} is more than the {} keys of class {}", what,
                                  participants, what == "--cores" ? "cores in all" : "processes",
                                  c.total_keys(), c.name));
}

void fill_report(report& out, const is_class& c, const is_outcome& o) {
  const double keys = static_cast<double>(c.total_keys());
  const double mops = o.seconds > 0 ? keys * max_iterations / o.seconds / 1e6 : 0;
  out.set_problem(c.describe());
  out.set_time(o.seconds);
  out.set_rate(mops, "Mop/s");
  out.set("class", std::string(1, c.name));
  out.set("mops", mops);
  out.set("iterations", max_iterations);
  out.set("total_keys", c.total_keys(), false);
  out.set("max_key", c.max_key(), false);
  out.set("partial_verified", fmt::format("{}/{}", o.partial_passed, test_keys * max_iterations));
  out.set("full_verified", o.out_of_order == 0);
  const bool ok = o.partial_passed == test_keys * max_iterations &&
                  o.partial_checked == test_keys * max_iterations && o.out_of_order == 0;
  std::string detail = fmt::format(
      "{} of {} published test-key ranks matched; {} keys out of sort after placing every "
      "key at its rank",
      o.partial_passed, test_keys * max_iterations, o.out_of_order);
  out.set_validated(ok, detail);
}

void partial_verify(const is_class& c, int iteration, std::span<const std::int64_t> test_values,
                    std::span<const std::int32_t> cum, is_outcome& o) {
  for (int i = 0; i < test_keys; ++i) {
    const std::int64_t k = test_values[static_cast<std::size_t>(i)];
    if (!checks_test_key(c, k)) continue;
    ++o.partial_checked;
    if (cum[static_cast<std::size_t>(k - 1)] == expected_rank(c, i, iteration)) ++o.partial_passed;
  }
}

namespace {

/// One ranking of the whole key array into cum (size MAX_KEY): cum[v] = keys <= v.
void rank_all(std::span<const std::int32_t> keys, std::vector<std::int32_t>& cum) {
  std::fill(cum.begin(), cum.end(), 0);
  for (const std::int32_t k : keys) ++cum[static_cast<std::size_t>(k)];
  for (std::size_t v = 1; v < cum.size(); ++v) cum[v] += cum[v - 1];
}

}  // namespace

is_outcome run_sequential(const is_class& c, const std::string& fault) {
  is_outcome o;
  std::vector<std::int32_t> keys(static_cast<std::size_t>(c.total_keys()));
  generate_keys(c, 0, keys);
  std::vector<std::int32_t> cum(static_cast<std::size_t>(c.max_key()));
  std::array<std::int64_t, test_keys> test_values{};
  auto iterate = [&](int iteration, is_outcome& into) {
    modify_keys(c, iteration, 0, keys);
    for (int i = 0; i < test_keys; ++i)
      test_values[static_cast<std::size_t>(i)] =
          keys[static_cast<std::size_t>(c.test_index[static_cast<std::size_t>(i)])];
    rank_all(keys, cum);
    if (fault == "partial" && iteration == 3)
      for (std::int32_t& r : cum) ++r;
    partial_verify(c, iteration, test_values, cum, into);
  };
  is_outcome untimed;
  iterate(1, untimed);  // NPB's free iteration: pages touched, not counted
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 1; it <= max_iterations; ++it) iterate(it, o);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Full verification: every key at its rank, then the order.
  std::vector<std::int32_t> sorted(keys.size(), -1);
  for (const std::int32_t k : keys)
    sorted[static_cast<std::size_t>(--cum[static_cast<std::size_t>(k)])] = k;
  if (fault == "full") std::swap(sorted.front(), sorted.back());
  for (std::size_t i = 1; i < sorted.size(); ++i)
    o.out_of_order += sorted[i - 1] > sorted[i] ? 1 : 0;
  return o;
}

}  // namespace shoal_apps::intsort
