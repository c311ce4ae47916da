#include "common/plain/text_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <sys/stat.h>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"

namespace shoal_apps {

std::string printable(std::string_view s, std::size_t max_chars) {
  std::string out;
  const std::size_t n = std::min(s.size(), max_chars);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b >= 0x20 && b < 0x7f)
      out += static_cast<char>(b);
    else
      out += fmt::format("\\x{:02x}", b);
  }
  if (s.size() > max_chars) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

std::unique_ptr<std::istream> open_input(std::string_view flag, const std::string& path) {
  if (path.empty())
    throw input_error(
        fmt::format("{} '': empty file name (leave the flag out to use the "
                    "generated input)",
                    flag));
  const std::string shown = printable(path, 200);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw input_error(fmt::format("{} {}: cannot open: {}", flag, shown, std::strerror(errno)));
  if (S_ISDIR(st.st_mode))
    throw input_error(fmt::format("{} {}: is a directory, not a file", flag, shown));
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*in)
    throw input_error(fmt::format("{} {}: cannot open: {}", flag, shown, std::strerror(errno)));
  return in;
}

memory_buffer::memory_buffer(const char* data, std::size_t size) {
  // get area only: the const_cast never leads to a write (no put area).
  char* p = const_cast<char*>(data);
  setg(p, p, p + size);
}

line_reader::line_reader(std::istream& in, std::string name)
    : in_(in), name_(std::move(name)), buffer_(max_line_bytes + 2) {}

bool line_reader::next(std::string_view& line) {
  // +2: room for a "\r" before the "\n" and for istream::getline's NUL.
  in_.getline(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) {
    ++number_;
    fail(fmt::format("read error: {}", std::strerror(errno)));
  }
  if (got == 0 && in_.eof()) return false;
  ++number_;
  if (in_.fail() && !in_.eof())
    fail(fmt::format("line longer than {} bytes (is this a text file?)", max_line_bytes));
  // gcount counts the "\n" it consumed, except on a last line without one.
  std::size_t n = in_.eof() ? got : got - 1;
  if (n > 0 && buffer_[n - 1] == '\r') --n;
  if (n > max_line_bytes)
    fail(fmt::format("line longer than {} bytes (is this a text file?)", max_line_bytes));
  std::size_t start = 0;
  if (number_ == 1 && n >= 3 && std::memcmp(buffer_.data(), "\xEF\xBB\xBF", 3) == 0) start = 3;
  line = std::string_view(buffer_.data() + start, n - start);
  return true;
}

void line_reader::fail(std::string_view what) const {
  throw input_error(fmt::format("{}:{}: {}", name_, number_, what));
}

void split_tokens(std::string_view line, std::vector<std::string_view>& tokens) {
  const auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  };
  tokens.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && space(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !space(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
}

}  // namespace shoal_apps
