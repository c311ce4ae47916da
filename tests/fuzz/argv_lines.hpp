// A fuzz input as a command line: one argument per line, argv[0] "shoal"; a
// line "SHOAL_<NAME>=<value>" is an environment variable instead. Shared by
// the command-line targets (fuzz_command_line, fuzz_flags) so that one
// corpus file means the same command line to both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shoal_fuzz {

/// The split input: argument strings and environment strings; pointers()
/// turns either into the null-terminated array main() and environ have.
struct argv_lines {
  // More arguments than any real command line; keeps each run short.
  static constexpr std::size_t max_entries = 64;

  std::vector<std::string> args{"shoal"};
  std::vector<std::string> env;

  argv_lines(const std::uint8_t* data, std::size_t size) {
    std::string current;
    for (std::size_t i = 0; i < size; ++i) {
      if (data[i] == '\n') {
        take(current);
        current.clear();
      } else {
        current.push_back(static_cast<char>(data[i]));
      }
    }
    if (!current.empty()) take(current);
  }

  /// Pointers into `strings` (which must outlive them), then a null.
  static std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> p;
    p.reserve(strings.size() + 1);
    for (std::string& s : strings) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
  }

 private:
  void take(const std::string& line) {
    if (args.size() + env.size() >= max_entries) return;
    if (line.rfind("SHOAL_", 0) == 0 && line.find('=') != std::string::npos) {
      env.push_back(line);
    } else {
      args.push_back(line);
    }
  }
};

}  // namespace shoal_fuzz
