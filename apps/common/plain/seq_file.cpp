// The FASTA/FASTQ reader (seq_file.hpp).
#include "common/plain/seq_file.hpp"

#include <array>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"

namespace shoal_apps {

namespace {

/// Upper-case base for each byte, 0 for a byte that is not a base.
constexpr std::array<char, 256> base_table() {
  std::array<char, 256> t{};
  for (const char c : {'A', 'C', 'G', 'T', 'N'}) {
    t[static_cast<unsigned char>(c)] = c;
    t[static_cast<unsigned char>(c - 'A' + 'a')] = c;
  }
  return t;
}
constexpr std::array<char, 256> bases = base_table();

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

/// The record name of a header line (after its first byte, up to a space).
std::string header_name(std::string_view header) {
  header.remove_prefix(1);
  const std::size_t end = header.find_first_of(" \t");
  return std::string(header.substr(0, end));
}

}  // namespace

seq_reader::seq_reader(std::istream& in, std::string name) : lines_(in, std::move(name)) {
  std::string_view first;
  if (!next_nonblank(first))
    throw input_error(fmt::format("{}: empty file: expected FASTA ('>' first) or FASTQ ('@' first)",
                                  lines_.name()));
  if (first[0] == '>')
    format_ = seq_format::fasta;
  else if (first[0] == '@')
    format_ = seq_format::fastq;
  else
    lines_.fail(fmt::format(
        "not a FASTA or FASTQ file: the first line starts with '{}', expected '>' (FASTA) or '@' "
        "(FASTQ)",
        printable(first.substr(0, 1))));
  pending_ = std::string(first);
  has_pending_ = true;
}

bool seq_reader::next_nonblank(std::string_view& line) {
  while (lines_.next(line))
    if (!blank(line)) return true;
  return false;
}

void seq_reader::append_bases(std::string_view line, std::string& out) const {
  // Trailing spaces (an editor's) are tolerated; inner ones are not bases.
  const std::size_t end = line.find_last_not_of(" \t\r\v\f");
  line = line.substr(0, end == std::string_view::npos ? 0 : end + 1);
  const std::size_t start = out.size();
  out.resize(start + line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char b = bases[static_cast<unsigned char>(line[i])];
    if (b == 0)
      lines_.fail(
          fmt::format("column {}: '{}' is not a base (expected A, C, G, T or N, in either case)",
                      i + 1, printable(line.substr(i, 1))));
    out[start + i] = b;
  }
}

bool seq_reader::next(seq_record& r) {
  return format_ == seq_format::fasta ? next_fasta(r) : next_fastq(r);
}

bool seq_reader::next_fasta(seq_record& r) {
  std::string_view line;
  if (!has_pending_) return false;
  r.name = header_name(pending_);
  r.line = lines_.number();
  r.bases.clear();
  has_pending_ = false;
  while (lines_.next(line)) {
    if (blank(line) || line[0] == ';') continue;
    if (line[0] == '>') {
      pending_ = std::string(line);
      has_pending_ = true;
      // The header is the line just read: its number is the next record's.
      return true;
    }
    append_bases(line, r.bases);
  }
  return true;
}

bool seq_reader::next_fastq(seq_record& r) {
  std::string_view line;
  std::string header;
  if (has_pending_) {
    header = std::move(pending_);
    has_pending_ = false;
  } else {
    if (!next_nonblank(line)) return false;
    header = std::string(line);
  }
  r.line = lines_.number();
  if (header[0] != '@')
    lines_.fail(
        fmt::format("expected a FASTQ record's '@' header line, got '{}'", printable(header, 60)));
  r.name = header_name(header);
  const auto truncated = [&](const char* wanted) {
    lines_.fail(fmt::format("truncated record '{}' (line {}): the file ends where its {} should be",
                            printable(r.name, 60), r.line, wanted));
  };
  if (!lines_.next(line)) truncated("sequence line");
  r.bases.clear();
  append_bases(line, r.bases);
  if (!lines_.next(line)) truncated("'+' line");
  if (line.empty() || line[0] != '+')
    lines_.fail(fmt::format("record '{}' (line {}): expected the '+' line, got '{}'",
                            printable(r.name, 60), r.line, printable(line, 60)));
  if (line.size() > 1 && header_name(line) != r.name)
    lines_.fail(fmt::format("record '{}' (line {}): the '+' line names another record '{}'",
                            printable(r.name, 60), r.line, printable(line.substr(1), 60)));
  if (!lines_.next(line)) truncated("quality line");
  if (line.size() != r.bases.size())
    lines_.fail(fmt::format("record '{}' (line {}): {} quality bytes for {} bases",
                            printable(r.name, 60), r.line, line.size(), r.bases.size()));
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] < '!' || line[i] > '~')
      lines_.fail(
          fmt::format("record '{}' (line {}): column {}: quality byte '{}' outside '!'..'~'",
                      printable(r.name, 60), r.line, i + 1, printable(line.substr(i, 1))));
  return true;
}

namespace {

std::vector<std::string> read_all(std::istream& in, const std::string& name) {
  seq_reader reader(in, name);
  std::vector<std::string> out;
  seq_record r;
  while (reader.next(r)) out.push_back(std::move(r.bases));
  return out;
}

}  // namespace

std::vector<std::string> read_seq_file(std::string_view flag, const std::string& path) {
  const std::unique_ptr<std::istream> in = open_input(flag, path);
  return read_all(*in, printable(path, 200));
}

std::vector<std::string> read_seq_buffer(const char* data, std::size_t size,
                                         const std::string& name) {
  memory_buffer buffer(data, size);
  std::istream in(&buffer);
  return read_all(in, name);
}

}  // namespace shoal_apps
