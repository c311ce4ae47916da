// Fuzz target: the driver's command line, parsed as `shoal` parses it but
// without running a job. The input is the argument list, one argument per
// line (argv_lines.hpp). Builds every app with clang, so it is in `make
// fuzz` only; fuzz_flags.cpp is the cheap subset `make test` runs. First
// the runtime's flags (config::parse, which removes them), then the
// driver's CLI11 parse with every bundled app. A
// refusal is config_error or a CLI11 ParseError (the driver turns both into
// a message and status 2); any other exception escaping is a finding: the
// driver would die on it without a word.
#include <shoal/config.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "argv_lines.hpp"
#include "driver_cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  shoal_fuzz::argv_lines c(data, size);
  std::vector<char*> argv = shoal_fuzz::argv_lines::pointers(c.args);
  std::vector<char*> envp = shoal_fuzz::argv_lines::pointers(c.env);
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
