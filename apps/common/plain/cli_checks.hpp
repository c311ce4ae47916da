// Strict checks of flag values that CLI11 alone lets through: it reads
// "-1", "1e23" and 18446744073709551616 into a std::uint64_t as 2^64 - 1,
// and takes an empty file name as no file at all (so `--graph ''` would run
// on the generated input). Each check returns CLI11's error text, which the
// driver prints after the flag's name and ends with status 2. No shoal here.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "common/plain/input_error.hpp"
#include "common/plain/text_input.hpp"

namespace shoal_apps {

/// A decimal integer in [0, 2^64 - 1], nothing else (no sign, exponent,
/// fraction or surrounding text).
inline CLI::Validator unsigned_64_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t v = 0;
        const char* end = text.data() + text.size();
        const bool digits = !text.empty() && text[0] >= '0' && text[0] <= '9';
        const auto [p, ec] = std::from_chars(text.data(), end, v);
        if (digits && ec == std::errc() && p == end) return {};
        return "expected an integer 0 .. 18446744073709551615, got '" + printable(text) + "'";
      },
      "UINT64");
}

/// A file name that is not empty (an empty one is refused, not taken as
/// "no file").
inline CLI::Validator file_name_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty()) return {};
        return "empty file name (leave the flag out to use the generated input)";
      },
      "FILE");
}

/// A message naming the first empty command-line argument, or "" when there
/// is none. CLI11 takes `--seed ''` or `--hold-us ''` as "keep the default",
/// so an empty value (a shell variable that was not set) would be ignored
/// silently; the driver refuses it before parsing.
inline std::string empty_argument(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '\0') continue;
    return i > 1 && argv[i - 1][0] == '-' ? printable(argv[i - 1]) + ": empty value"
                                          : "argument " + std::to_string(i) + " is empty";
  }
  return {};
}

/// Throws input_error "<flag>: applies to <where> only[, not <instead>]"
/// when `opt` was given on the command line (CLI11 counts it) while `used`
/// is false: a flag the rest of the line leaves unused is refused rather
/// than ignored as if it had taken effect. `opt` outlives the parse (the
/// command line is kept for the run).
inline void refuse_unused(const CLI::Option* opt, bool used, std::string_view where,
                          std::string_view instead = {}) {
  if (used || opt == nullptr || opt->count() == 0) return;
  std::string why = opt->get_name() + ": applies to " + std::string(where) + " only";
  if (!instead.empty()) why += ", not " + std::string(instead);
  throw input_error(why);
}

}  // namespace shoal_apps
