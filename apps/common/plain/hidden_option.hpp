// Options for the tests only (fault injection, a wire format forced): parsed
// like any other option and named in its errors, but left out of --help.
//
// CLI11 2.1 hides an option whose group is "", but its Option::get_name()
// then returns "", so every error about it lost the flag's name
// (": zzz not in {...}", "Could not convert:  = zzz"). Here such an option
// keeps a named group, hidden_group, and the app's help formatter leaves that
// group out: its errors read like a visible option's ("--inject-fault: zzz
// not in {...}") and the help is what group "" printed. No shoal here.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace shoal_apps {

/// The group of the options hide_from_help hides; never printed.
inline constexpr const char* hidden_group = "Tests only";

/// CLI11's help formatter, less the options of hidden_group. The usage line
/// is CLI11's own (its [OPTIONS] counts every option, as with group "").
class hidden_option_formatter : public CLI::Formatter {
 public:
  hidden_option_formatter() = default;
  explicit hidden_option_formatter(const CLI::Formatter& base) : CLI::Formatter(base) {}

  /// The group's help text; nothing for hidden_group. CLI11's make_groups
  /// (not virtual) ends every group but the last with a blank line: the
  /// hidden group must come last, which it does while the apps declare no
  /// other group ("Options", the help flag's, always comes first).
  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> opts) const override {
    if (group == hidden_group) return {};
    return CLI::Formatter::make_group(std::move(group), is_positional, std::move(opts));
  }
};

/// Hides `opt`, a flag or an option (not a positional) of `app`, from
/// `app`'s --help, keeping its name in CLI11's errors; returns `opt`. Gives
/// `app` a hidden_option_formatter (a copy of its CLI::Formatter) unless it
/// has one; subcommands added to `app` later inherit it. Call at set-up.
inline CLI::Option* hide_from_help(CLI::App& app, CLI::Option* opt) {
  opt->group(hidden_group);
  const std::shared_ptr<CLI::FormatterBase> current = app.get_formatter();
  if (std::dynamic_pointer_cast<hidden_option_formatter>(current) != nullptr) return opt;
  const auto base = std::dynamic_pointer_cast<CLI::Formatter>(current);
  app.formatter(base != nullptr ? std::make_shared<hidden_option_formatter>(*base)
                                : std::make_shared<hidden_option_formatter>());
  return opt;
}

}  // namespace shoal_apps
