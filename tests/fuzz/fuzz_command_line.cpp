// Fuzz target: the driver's command line, parsed as `shoal` parses it but
// without running a job. The input is the argument list, one argument per
// line; argv[0] is "shoal"; a line "SHOAL_<NAME>=<value>" is an environment
// variable instead. First the runtime's flags (config::parse, which
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

struct command_line {
  std::vector<std::string> args{"shoal"};
  std::vector<std::string> env;
};

command_line split_lines(const std::uint8_t* data, std::size_t size) {
  command_line c;
  std::string current;
  const auto take = [&c](const std::string& line) {
    if (c.args.size() + c.env.size() >= max_arguments) return;
    if (line.rfind("SHOAL_", 0) == 0 && line.find('=') != std::string::npos) {
      c.env.push_back(line);
    } else {
      c.args.push_back(line);
    }
  };
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      take(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty()) take(current);
  return c;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  command_line c = split_lines(data, size);
  std::vector<char*> argv = pointers(c.args);
  std::vector<char*> envp = pointers(c.env);
  int argc = static_cast<int>(c.args.size());
  try {
    (void)shoal::config::parse(argc, argv.data(), envp.data());
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
