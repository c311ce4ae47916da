// Fuzz target: the flag parsers without any app (the cheap command-line
// target `make test` runs; fuzz_command_line.cpp parses the whole driver but
// needs every app built with clang). The input is a command line, one
// argument per line (argv_lines.hpp). Two parsers see it:
//   1. shoal::config::parse, the runtime's flags and SHOAL_* variables
//      (numbers with ranges, choice words, booleans), compiled in from
//      src/runtime/config.cpp, then unknown_env and describe;
//   2. a CLI11 subcommand with the apps' shared checks (the graph options,
//      unsigned_64_check, file_name_check, an --impl choice, --json) behind
//      the driver's empty-argument refusal.
// A refusal is config_error or CLI::ParseError; anything else escaping, and
// a broken contract of config::parse (argv changed on a throw, argv[argc]
// not null, a parsed config that fails validate), is a finding.
#include <shoal/config.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "argv_lines.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/graph.hpp"
#include "common/plain/text_input.hpp"

namespace {

// A contract broken: libFuzzer keeps the input as a crash.
void require(bool ok) {
  if (!ok) std::abort();
}

// The runtime's parser: returns false when it refused the line.
bool runtime_flags(std::vector<char*>& argv, int& argc, char** envp) {
  const std::vector<char*> before = argv;
  const int before_argc = argc;
  try {
    shoal::config c = shoal::config::parse(argc, argv.data(), envp);
    require(argc >= 1 && argc <= before_argc && argv[argc] == nullptr);
    c.validate();  // parse returns a validated config: a throw here is a finding
    require(!c.describe().empty());
  } catch (const shoal::config_error& e) {
    require(argc == before_argc && argv == before && *e.what() != '\0');
    return false;
  }
  for (const std::string& warning : shoal::config::unknown_env(envp)) require(!warning.empty());
  return true;
}

// Every byte of a message the driver prints is printable ASCII, and a long
// value is cut.
void check_printable(const std::string& text) {
  const std::string shown = shoal_apps::printable(text, 40);
  for (const char ch : shown) require(ch >= 0x20 && ch < 0x7f);
  require(shown.size() <= 40 * 4 + 32);
}

void app_flags(int argc, char** argv) {
  if (!shoal_apps::empty_argument(argc, argv).empty()) return;  // the driver refuses it
  CLI::App cli{"fuzz_flags"};
  cli.require_subcommand(1);
  CLI::App* cmd = cli.add_subcommand("bfs", "graph options");
  shoal_apps::graph_options graph;
  shoal_apps::add_graph_options(*cmd, graph);
  std::string impl = "a";
  cmd->add_option("--impl", impl, "implementation")->check(CLI::IsMember({"a", "b"}));
  bool json = false;
  cmd->add_flag("--json", json, "json");
  std::uint64_t count = 0;
  cmd->add_option("--count", count, "a 64-bit count")->check(shoal_apps::unsigned_64_check());
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    check_printable(e.what());
    return;
  }
  require(impl == "a" || impl == "b");
  require(cmd->count("--graph") == 0 || !graph.file.empty());  // never "no file"
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  shoal_fuzz::argv_lines line(data, size);
  std::vector<char*> argv = shoal_fuzz::argv_lines::pointers(line.args);
  std::vector<char*> envp = shoal_fuzz::argv_lines::pointers(line.env);
  int argc = static_cast<int>(line.args.size());
  if (runtime_flags(argv, argc, envp.data())) app_flags(argc, argv.data());
  return 0;
}
