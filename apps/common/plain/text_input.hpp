// Reading a user's text file safely: the one place the apps' readers (graph
// files, string pools) open a file named on the command line and split it
// into lines. A hostile file (a directory, /dev/zero, binary garbage, a
// 100,000-digit number) must end in an input_error naming the file, the line
// and what was wrong, never in an endless read, a crash or a raw dump of the
// bytes. No shoal here: the plain-MPI baselines and the fuzz targets use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace shoal_apps {

/// The longest line a reader accepts (bytes, without the line end). Real
/// graph and pool lines are under 100 bytes; the bound stops a file with no
/// line end (/dev/zero) from growing one line until memory runs out.
inline constexpr std::size_t max_line_bytes = std::size_t{1} << 16;

/// `s` as it may appear in a message: at most `max_chars` characters (then
/// "... (N bytes)"), every byte outside printable ASCII written as \xNN, so
/// binary garbage or a huge token cannot flood or corrupt a terminal. A
/// backslash stays as it is, so applying it twice changes nothing more.
std::string printable(std::string_view s, std::size_t max_chars = 40);

/// Opens `path` (the value of `flag`, e.g. "--graph") for reading. Throws
/// input_error when the name is empty, names a directory, or cannot be
/// opened (with the system's reason). Set-up only.
std::unique_ptr<std::istream> open_input(std::string_view flag, const std::string& path);

/// A read-only std::streambuf over bytes the caller keeps alive: lets the
/// readers (which take a std::istream) run on a buffer, as a fuzzer gives.
class memory_buffer : public std::streambuf {
 public:
  memory_buffer(const char* data, std::size_t size);
};

/// Splits a stream into lines of at most max_line_bytes. Skips a UTF-8
/// byte-order mark at the start of the stream; strips "\n" and a "\r"
/// before it. `name` (the file) starts every message.
class line_reader {
 public:
  line_reader(std::istream& in, std::string name);

  /// The next line; false at the end. Throws input_error (name:line) for a
  /// line longer than max_line_bytes or a failed read.
  bool next(std::string_view& line);

  std::int64_t number() const noexcept { return number_; }
  const std::string& name() const noexcept { return name_; }

  /// Throws input_error "<name>:<line>: <what>".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  std::istream& in_;
  std::string name_;
  std::vector<char> buffer_;
  std::int64_t number_ = 0;
};

/// The whitespace-separated tokens of `line` (space, tab, \r, \v, \f).
void split_tokens(std::string_view line, std::vector<std::string_view>& tokens);

}  // namespace shoal_apps
