// Reading a graph file: a whitespace-separated edge list or a Matrix Market
// coordinate file. Every error is an input_error naming the file, the line
// and what was wrong, so a user can fix the file without a debugger.
//
// The Matrix Market banner follows the NIST reference reader (mmio.c's
// mm_read_banner): "%%MatrixMarket" is matched exactly, case and all, and
// the four words after it (object, format, field, symmetry) in any case.
// The banner must be the first line and start in column 1. Any other line
// that looks like a banner (it starts with "%%", or with "%MatrixMarket" in
// any case) is refused rather than skipped as a comment: a misspelled or
// misplaced banner would otherwise turn the file into an edge list whose
// size line is read as an edge.
#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "common/plain/graph.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/mix.hpp"
#include "common/plain/text_input.hpp"

namespace shoal_apps {

namespace {

// Edge-list ids have no declared bound; this one keeps the arrays a
// vertex count implies addressable.
constexpr std::int64_t max_edge_list_id = (std::int64_t{1} << 40) - 1;

/// line_reader plus the tokens of the current line and typed fields.
class graph_cursor {
 public:
  graph_cursor(std::istream& in, const std::string& name) : lines_(in, name) {}

  bool next() {
    if (!lines_.next(line_)) return false;
    split_tokens(line_, tokens_);
    return true;
  }

  const std::vector<std::string_view>& tokens() const noexcept { return tokens_; }
  std::string_view line() const noexcept { return line_; }
  std::int64_t number() const noexcept { return lines_.number(); }
  const std::string& name() const noexcept { return lines_.name(); }
  [[noreturn]] void fail(const std::string& what) const { lines_.fail(what); }

  /// The current line, cut and escaped for a message.
  std::string shown() const { return printable(line_, 60); }

  /// An integer token in [lo, hi]; `what` names it ("vertex id").
  std::int64_t integer(std::string_view token, std::int64_t lo, std::int64_t hi,
                       std::string_view what) const {
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec == std::errc::result_out_of_range)
      fail(fmt::format("{} {} out of range [{}, {}]", what, printable(token), lo, hi));
    if (ec != std::errc() || p != token.data() + token.size())
      fail(fmt::format("malformed line '{}': expected an integer {}, got '{}'", shown(), what,
                       printable(token)));
    if (v < 0) fail(fmt::format("negative {} {}", what, v));
    if (v < lo || v > hi) fail(fmt::format("{} {} out of range [{}, {}]", what, v, lo, hi));
    return v;
  }

 private:
  line_reader lines_;
  std::string_view line_;
  std::vector<std::string_view> tokens_;
};

bool is_real(std::string_view t) {
  double x = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  return ec == std::errc() && p == t.data() + t.size();
}

bool is_integer(std::string_view t) {
  std::int64_t x = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  return ec == std::errc() && p == t.data() + t.size();
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

/// Whether `line` looks like a Matrix Market banner, well formed or not.
bool looks_like_banner(std::string_view line) {
  const std::size_t at = line.find_first_not_of(" \t");
  if (at == std::string_view::npos) return false;
  line.remove_prefix(at);
  constexpr std::string_view word = "%matrixmarket";
  return line.starts_with("%%") ||
         (line.size() >= word.size() && iequals(line.substr(0, word.size()), word));
}

/// Records the line whose vertex id sets the vertex count, for messages.
void note_largest(edge_list& g, const graph_cursor& in, std::int64_t id) {
  if (id + 1 <= g.vertices) return;
  g.vertices = id + 1;
  g.size_origin = fmt::format("{}:{}: vertex id {}", in.name(), in.number(), id);
}

edge_list read_edge_list(graph_cursor& in) {
  edge_list g;
  do {
    const auto& t = in.tokens();
    if (looks_like_banner(in.line()))
      in.fail(
          fmt::format("'{}' looks like a Matrix Market banner, which must be the first "
                      "line of the file and read exactly \"%%MatrixMarket matrix "
                      "coordinate <field> <symmetry>\"",
                      in.shown()));
    if (t.empty() || t[0][0] == '#' || t[0][0] == '%') continue;
    if (t.size() < 2 || t.size() > 3 || (t.size() == 3 && !is_real(t[2])))
      in.fail(
          fmt::format("malformed line '{}': expected \"u v\" (two vertex ids, an optional weight)",
                      in.shown()));
    const std::int64_t u = in.integer(t[0], 0, max_edge_list_id, "vertex id");
    const std::int64_t v = in.integer(t[1], 0, max_edge_list_id, "vertex id");
    g.edges.push_back({u, v});
    note_largest(g, in, std::max(u, v));
  } while (in.next());
  if (g.edges.empty()) in.fail("no edges in the file");
  return g;
}

enum class mm_field { pattern, integer, real };
enum class mm_symmetry { general, symmetric, skew };

struct mm_banner {
  mm_field field = mm_field::pattern;
  mm_symmetry symmetry = mm_symmetry::general;
};

/// The banner's field word; complex (and anything unknown) is refused.
mm_field field_named(const graph_cursor& in, std::string_view w) {
  if (iequals(w, "pattern")) return mm_field::pattern;
  if (iequals(w, "integer")) return mm_field::integer;
  if (iequals(w, "real")) return mm_field::real;
  if (iequals(w, "complex"))
    in.fail("complex Matrix Market files are not supported (a graph's weights are real)");
  in.fail(fmt::format("unknown Matrix Market field '{}': expected pattern, integer or real",
                      printable(w)));
}

/// The banner's symmetry word. Hermitian needs complex values, refused above.
mm_symmetry symmetry_named(const graph_cursor& in, std::string_view w) {
  if (iequals(w, "general")) return mm_symmetry::general;
  if (iequals(w, "symmetric")) return mm_symmetry::symmetric;
  if (iequals(w, "skew-symmetric")) return mm_symmetry::skew;
  if (iequals(w, "hermitian"))
    in.fail("hermitian Matrix Market files are complex, which is not supported");
  in.fail(
      fmt::format("unknown Matrix Market symmetry '{}': expected general, symmetric or "
                  "skew-symmetric",
                  printable(w)));
}

/// Parses line 1 of a file that looks like a banner (the NIST rules above).
mm_banner read_banner(const graph_cursor& in) {
  const auto& t = in.tokens();
  if (in.line().empty() || in.line()[0] != '%')
    in.fail("the Matrix Market banner must start in column 1 (no leading blanks)");
  if (t[0] != "%%MatrixMarket")
    in.fail(
        fmt::format("unknown banner '{}': a Matrix Market file starts with "
                    "\"%%MatrixMarket\", spelled exactly so",
                    printable(t[0])));
  if (t.size() != 5)
    in.fail(
        fmt::format("malformed banner '{}': expected \"%%MatrixMarket matrix coordinate "
                    "<field> <symmetry>\"",
                    in.shown()));
  if (!iequals(t[1], "matrix") || !iequals(t[2], "coordinate"))
    in.fail(
        fmt::format("unsupported Matrix Market header '{}': only 'matrix coordinate' files "
                    "describe graphs",
                    in.shown()));
  return {field_named(in, t[3]), symmetry_named(in, t[4])};
}

/// The size line "rows cols entries" after the header and comments.
struct mm_size {
  std::int64_t rows = 0, cols = 0, entries = 0, line = 0;
};

mm_size read_mm_size(graph_cursor& in, const mm_banner& b) {
  while (in.next()) {
    const auto& t = in.tokens();
    if (looks_like_banner(in.line()))
      in.fail(
          fmt::format("a second Matrix Market banner '{}' (the first is on line 1)", in.shown()));
    if (t.empty() || t[0][0] == '%') continue;
    if (t.size() != 3)
      in.fail(
          fmt::format("malformed size line '{}': expected \"rows columns entries\"", in.shown()));
    constexpr std::int64_t big = std::int64_t{1} << 40;
    const mm_size s{in.integer(t[0], 0, big, "row count"), in.integer(t[1], 0, big, "column count"),
                    in.integer(t[2], 0, big, "entry count"), in.number()};
    if (b.symmetry != mm_symmetry::general && s.rows != s.cols)
      in.fail(fmt::format("a {} matrix must be square, this one is {} x {}",
                          b.symmetry == mm_symmetry::symmetric ? "symmetric" : "skew-symmetric",
                          s.rows, s.cols));
    return s;
  }
  in.fail("truncated: no size line \"rows columns entries\" after the header");
}

/// Checks an entry's value token against the banner's field.
void check_value(const graph_cursor& in, const mm_banner& b) {
  const auto& t = in.tokens();
  const std::size_t want = b.field == mm_field::pattern ? 2 : 3;
  const bool ok = t.size() == want && (b.field != mm_field::integer || is_integer(t[2])) &&
                  (b.field != mm_field::real || is_real(t[2]));
  if (ok) return;
  in.fail(fmt::format("malformed entry '{}': expected {}", in.shown(),
                      b.field == mm_field::pattern ? "\"row column\" (a pattern file has no values)"
                      : b.field == mm_field::integer ? "\"row column integer-value\""
                                                     : "\"row column real-value\""));
}

/// Checks a symmetric file's entry (i, j) is in the stored lower triangle.
void check_triangle(const graph_cursor& in, const mm_banner& b, std::int64_t i, std::int64_t j) {
  if (b.symmetry == mm_symmetry::general) return;
  if (b.symmetry == mm_symmetry::skew && i == j)
    in.fail(
        fmt::format("entry ({}, {}) on the diagonal of a skew-symmetric matrix (its diagonal "
                    "is zero and not stored)",
                    i, j));
  if (i < j)
    in.fail(
        fmt::format("entry ({}, {}) above the diagonal: a symmetric Matrix Market file "
                    "stores only the lower triangle (row >= column)",
                    i, j));
}

edge_list read_matrix_market(graph_cursor& in) {
  const mm_banner b = read_banner(in);
  const mm_size size = read_mm_size(in, b);
  edge_list g;
  g.vertices = std::max(size.rows, size.cols);
  g.size_origin =
      fmt::format("{}:{}: the size line ({} x {})", in.name(), size.line, size.rows, size.cols);
  g.symmetric = b.symmetry != mm_symmetry::general;
  // A bounded reserve: the size line is not trusted until the entries are read.
  g.edges.reserve(static_cast<std::size_t>(std::min<std::int64_t>(size.entries, 1 << 16)));
  std::int64_t entries = 0;
  while (in.next()) {
    const auto& t = in.tokens();
    if (looks_like_banner(in.line()))
      in.fail(
          fmt::format("a second Matrix Market banner '{}' (the first is on line 1)", in.shown()));
    if (t.empty() || t[0][0] == '%') continue;
    if (entries == size.entries)
      in.fail(fmt::format("more entries than the {} the size line (line {}) announces",
                          size.entries, size.line));
    check_value(in, b);
    const std::int64_t i = in.integer(t[0], 1, size.rows, "vertex id");
    const std::int64_t j = in.integer(t[1], 1, size.cols, "vertex id");
    check_triangle(in, b, i, j);
    g.edges.push_back({i - 1, j - 1});
    ++entries;
  }
  if (entries < size.entries)
    in.fail(fmt::format("truncated: the size line (line {}) announces {} entries, the file has {}",
                        size.line, size.entries, entries));
  if (g.edges.empty()) in.fail("no edges in the file");
  return g;
}

}  // namespace

edge_list read_graph(std::istream& in, const std::string& name) {
  graph_cursor cursor(in, name);
  if (!cursor.next()) throw input_error(fmt::format("{}: empty file: no edges", name));
  if (looks_like_banner(cursor.line())) return read_matrix_market(cursor);
  return read_edge_list(cursor);
}

edge_list read_graph_buffer(const char* data, std::size_t size, const std::string& name) {
  memory_buffer buffer(data, size);
  std::istream in(&buffer);
  return read_graph(in, name);
}

edge_list read_graph_file(const std::string& path) {
  const std::unique_ptr<std::istream> in = open_input("--graph", path);
  return read_graph(*in, printable(path, 200));
}

void add_mirrored_edges(edge_list& g) {
  if (!g.symmetric) return;
  const std::size_t stored = g.edges.size();
  for (std::size_t k = 0; k < stored; ++k)
    if (g.edges[k].u != g.edges[k].v) g.edges.push_back({g.edges[k].v, g.edges[k].u});
  g.symmetric = false;
}

std::uint64_t digest_of(const edge_list& g) { return digest_of(g.vertices, g.symmetric, g.edges); }

std::uint64_t digest_of(std::int64_t vertices, bool symmetric, std::span<const edge> edges) {
  // Order-sensitive: the same file read twice gives the same list in the
  // same order, and any other list (an edge moved, added or changed) a
  // different digest but with odds of 2^-64.
  std::uint64_t h = mix64(static_cast<std::uint64_t>(vertices) * 2 + (symmetric ? 1 : 0));
  for (const edge& e : edges)
    h = mix64(h ^ mix64(static_cast<std::uint64_t>(e.u) * 0x9e3779b97f4a7c15ULL +
                        static_cast<std::uint64_t>(e.v)));
  return mix64(h ^ edges.size());
}

}  // namespace shoal_apps
