// Permutation: options, layout, check and report (see permutation_problem.hpp).
#include "permutation/plain/permutation_problem.hpp"

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"

namespace shoal_apps::permutation {

void add_permutation_options(CLI::App& cmd, permutation_options& o) {
  cmd.add_option("--elements", o.elements,
                 "N: elements of each of the data, perm and data_perm arrays, over all cores")
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the data and perm permutations")
      ->check(unsigned_64_check())
      ->capture_default_str();
}

void check_options(const permutation_options& o) {
  if (o.elements < 1 || o.elements > max_elements)
    throw input_error(fmt::format("--elements {}: out of range; expected an integer in [1, {}]",
                                  o.elements, max_elements));
  const double need = bytes_per_element * static_cast<double>(o.elements);
  check_memory(
      need, 0.8,
      fmt::format("--elements {}: the three arrays need {}", o.elements, human_bytes(need)),
      "lower --elements");
}

permutation_keys make_keys(const permutation_options& o) noexcept {
  const auto n = static_cast<std::uint64_t>(o.elements);
  return permutation_keys{keyed_permutation(n, o.seed * 2 + 0x64617461ULL),
                          keyed_permutation(n, o.seed * 2 + 1 + 0x7065726dULL)};
}

block_layout::block_layout(std::uint64_t n, int parts) noexcept
    : n_(n),
      block_((n + static_cast<std::uint64_t>(parts) - 1) / static_cast<std::uint64_t>(parts)) {
  // ceil(2^64 / block); block == 1 would need 2^64: saturate (owner() corrects).
  magic_ = block_ == 1 ? ~std::uint64_t{0} : ~std::uint64_t{0} / block_ + 1;
}

permutation_tally operator+(const permutation_tally& a, const permutation_tally& b) noexcept {
  std::int64_t first = a.first_wrong;
  if (b.first_wrong >= 0 && (first < 0 || b.first_wrong < first)) first = b.first_wrong;
  return permutation_tally{a.writes + b.writes,   a.unwritten + b.unwritten,
                           a.wrong + b.wrong,     first,
                           a.sampled + b.sampled, a.sample_wrong + b.sample_wrong};
}

void check_slots(const permutation_keys& keys, std::uint64_t first, const std::uint64_t* slots,
                 std::uint64_t count, permutation_tally& t) {
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t v = slots[k];
    if (v == unwritten) {
      ++t.unwritten;
    } else if (v != keys.expected_at(first + k)) {
      ++t.wrong;
    } else {
      continue;
    }
    if (t.first_wrong < 0) t.first_wrong = static_cast<std::int64_t>(first + k);
  }
}

void fill_report(report& out, const permutation_options& o, const std::string& layout,
                 double seconds, const permutation_tally& t) {
  out.set_problem(fmt::format("{} elements (data, perm, data_perm: {:.1f} MiB each), seed {}, {}",
                              o.elements, 8.0 * static_cast<double>(o.elements) / (1 << 20), o.seed,
                              layout));
  out.set_time(seconds);
  const double per_s = seconds > 0 ? static_cast<double>(o.elements) / seconds : 0;
  out.set_rate(per_s / 1e6, "M elements/s");
  out.set("elements", o.elements);
  out.set("elements_per_s", per_s);
  out.set("seed", o.seed, false);
  out.set("writes", t.writes);
  out.set("wrong", t.wrong);
  out.set("unwritten", t.unwritten);
  out.set("sampled", t.sampled);
  out.set("sample_wrong", t.sample_wrong);
  const bool ok = t.writes == o.elements && t.wrong == 0 && t.unwritten == 0 && t.sample_wrong == 0;
  if (ok) {
    out.set_validated(true, fmt::format("data_perm[perm[data[i]]] = i for all {} i (every slot "
                                        "written once, checked through the inverses; {} sampled "
                                        "forward)",
                                        o.elements, t.sampled));
  } else {
    out.set_validated(false, fmt::format("{} writes for {} slots, {} wrong and {} unwritten "
                                         "(first at {}), {} of {} sampled identities broken",
                                         t.writes, o.elements, t.wrong, t.unwritten, t.first_wrong,
                                         t.sample_wrong, t.sampled));
  }
}

}  // namespace shoal_apps::permutation
