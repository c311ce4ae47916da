// Fuzz target: the driver's command line, parsed as `shoal` parses it but
// without running a job. The input is the argument list, one argument per
// line; argv[0] is "shoal". First the runtime's flags (config::parse, which
// removes them), then the driver's CLI11 parse with every bundled app. A
// refusal is config_error or a CLI11 ParseError (the driver turns both into
// a message and status 2); any other exception escaping is a finding: the
// driver would die on it without a word.
#include <shoal/config.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "driver_cli.hpp"

namespace {

// More arguments than any real command line; keeps each run short.
constexpr std::size_t max_arguments = 64;

std::vector<std::string> split_lines(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"shoal"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < max_arguments; ++i) {
    if (data[i] == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && args.size() < max_arguments) args.push_back(current);
  return args;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = split_lines(data, size);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    (void)shoal::config::parse(argc, argv.data(), nullptr);
  } catch (const shoal::config_error&) {
    return 0;
  }
  static const std::vector<shoal_apps::app_spec> apps = shoal_tools::all_apps();
  const auto line = std::make_unique<shoal_tools::driver_cli>(apps);
  try {
    line->cli.parse(argc, argv.data());
  } catch (const CLI::ParseError&) {
    // Includes CLI::Success (--help): the driver prints it and exits.
  }
  return 0;
}
