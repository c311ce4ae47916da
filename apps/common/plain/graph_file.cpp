// Reading a graph file: a whitespace-separated edge list or a Matrix Market
// coordinate file. Every error is an input_error naming the file, the line
// and what was wrong, so a user can fix the file without a debugger.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "common/plain/graph.hpp"
#include "common/plain/input_error.hpp"

namespace shoal_apps {

namespace {

// Edge-list ids have no declared bound; this one keeps the arrays a
// vertex count implies addressable.
constexpr std::int64_t max_edge_list_id = (std::int64_t{1} << 40) - 1;

std::string read_whole_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    throw input_error(fmt::format("--graph {}: cannot open: {}", path, std::strerror(errno)));
  std::string text;
  char chunk[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, got);
  const bool bad = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (bad) throw input_error(fmt::format("--graph {}: cannot read: {}", path, std::strerror(err)));
  return text;
}

/// Walks the lines of a file's text, splitting each into tokens.
class line_cursor {
 public:
  line_cursor(const std::string& path, const std::string& text) : path_(path), text_(text) {}

  /// The next line's tokens; false at the end of the text.
  bool next(std::vector<std::string_view>& tokens) {
    if (pos_ >= text_.size()) return false;
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line_ = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++number_;
    tokens.clear();
    std::size_t i = 0;
    while (i < line_.size()) {
      while (i < line_.size() && is_space(line_[i])) ++i;
      const std::size_t start = i;
      while (i < line_.size() && !is_space(line_[i])) ++i;
      if (i > start) tokens.push_back(line_.substr(start, i - start));
    }
    return true;
  }

  std::int64_t number() const noexcept { return number_; }
  std::string_view line() const noexcept { return line_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw input_error(fmt::format("{}:{}: {}", path_, number_, what));
  }

  /// A vertex id token as an integer in [lo, hi]; `lo` says the base.
  std::int64_t id(std::string_view token, std::int64_t lo, std::int64_t hi) const {
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec == std::errc::result_out_of_range)
      fail(fmt::format("vertex id {} out of range [{}, {}]", token, lo, hi));
    if (ec != std::errc() || p != token.data() + token.size())
      fail(fmt::format("malformed line '{}': expected an integer vertex id, got '{}'", shown(),
                       token));
    if (v < 0) fail(fmt::format("negative vertex id {}", v));
    if (v < lo || v > hi) fail(fmt::format("vertex id {} out of range [{}, {}]", v, lo, hi));
    return v;
  }

  std::string shown() const {
    std::string s(line_.substr(0, 60));
    if (!s.empty() && s.back() == '\r') s.pop_back();
    return line_.size() > 60 ? s + "..." : s;
  }

 private:
  static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  }

  const std::string& path_;
  std::string_view text_;
  std::string_view line_;
  std::size_t pos_ = 0;
  std::int64_t number_ = 0;
};

bool is_number(std::string_view t) {
  double x = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  return ec == std::errc() && p == t.data() + t.size();
}

edge_list read_edge_list(line_cursor& in) {
  edge_list g;
  std::vector<std::string_view> t;
  while (in.next(t)) {
    if (t.empty() || t[0][0] == '#' || t[0][0] == '%') continue;
    if (t.size() < 2 || t.size() > 3 || (t.size() == 3 && !is_number(t[2])))
      in.fail(
          fmt::format("malformed line '{}': expected \"u v\" (two vertex ids, an optional weight)",
                      in.shown()));
    const std::int64_t u = in.id(t[0], 0, max_edge_list_id);
    const std::int64_t v = in.id(t[1], 0, max_edge_list_id);
    g.edges.push_back({u, v});
    g.vertices = std::max({g.vertices, u + 1, v + 1});
  }
  if (g.edges.empty()) in.fail("no edges in the file");
  return g;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

/// The size line "rows cols entries" after the header and comments.
struct mm_size {
  std::int64_t rows = 0, cols = 0, entries = 0, line = 0;
};

mm_size read_mm_size(line_cursor& in) {
  std::vector<std::string_view> t;
  while (in.next(t)) {
    if (t.empty() || t[0][0] == '%') continue;
    if (t.size() != 3)
      in.fail(
          fmt::format("malformed size line '{}': expected \"rows columns entries\"", in.shown()));
    constexpr std::int64_t big = std::int64_t{1} << 40;
    return {in.id(t[0], 0, big), in.id(t[1], 0, big), in.id(t[2], 0, big), in.number()};
  }
  in.fail("truncated: no size line \"rows columns entries\" after the header");
}

edge_list read_matrix_market(line_cursor& in) {
  std::vector<std::string_view> t;
  in.next(t);
  if (t.size() < 3 || !iequals(t[1], "matrix") || !iequals(t[2], "coordinate"))
    in.fail(
        fmt::format("unsupported Matrix Market header '{}': only 'matrix coordinate' files "
                    "describe graphs",
                    in.shown()));
  const mm_size size = read_mm_size(in);
  edge_list g;
  g.vertices = std::max(size.rows, size.cols);
  g.edges.reserve(static_cast<std::size_t>(std::min<std::int64_t>(size.entries, 1 << 26)));
  while (in.next(t)) {
    if (t.empty() || t[0][0] == '%') continue;
    if (t.size() < 2)
      in.fail(fmt::format("malformed entry '{}': expected \"row column [value]\"", in.shown()));
    if (static_cast<std::int64_t>(g.edges.size()) == size.entries)
      in.fail(fmt::format("more entries than the {} the size line (line {}) announces",
                          size.entries, size.line));
    const std::int64_t u = in.id(t[0], 1, size.rows);
    const std::int64_t v = in.id(t[1], 1, size.cols);
    g.edges.push_back({u - 1, v - 1});
  }
  if (static_cast<std::int64_t>(g.edges.size()) < size.entries)
    in.fail(fmt::format("truncated: the size line (line {}) announces {} entries, the file has {}",
                        size.line, size.entries, g.edges.size()));
  if (g.edges.empty()) in.fail("no edges in the file");
  return g;
}

}  // namespace

edge_list read_graph_file(const std::string& path) {
  const std::string text = read_whole_file(path);
  line_cursor in(path, text);
  if (text.rfind("%%MatrixMarket", 0) == 0) return read_matrix_market(in);
  return read_edge_list(in);
}

}  // namespace shoal_apps
