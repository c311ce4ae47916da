#include "wordcount/plain/word_count.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <sys/stat.h>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"
#include "common/plain/mix.hpp"
#include "common/plain/text_input.hpp"

namespace shoal_apps::wordcount {

namespace {

bool word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'';
}

/// Calls f(word) for each word of `line` (lowercased into `scratch`).
template <class F>
void words_of_line(std::string_view line, std::string& scratch, const line_reader& in, F&& f) {
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == '\0')
      in.fail(fmt::format("binary data (a NUL byte at column {}); wordcount reads text", i + 1));
    if (!word_byte(line[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && word_byte(line[j])) ++j;
    if (j - i > max_word_bytes)
      in.fail(fmt::format("a word of {} bytes at column {} (at most {})", j - i, i + 1,
                          max_word_bytes));
    scratch.assign(line.substr(i, j - i));
    for (char& c : scratch)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    f(std::string_view(scratch));
    i = j;
  }
}

template <class F>
std::uint64_t scan_file(const std::string& path, F&& f) {
  const auto stream = open_input("--files", path);
  line_reader in(*stream, path);
  std::string_view line;
  std::string scratch;
  std::uint64_t words = 0;
  bool any_byte = false;
  while (in.next(line)) {
    any_byte = true;
    words_of_line(line, scratch, in, [&](std::string_view w) {
      ++words;
      f(w);
    });
  }
  if (!any_byte) throw input_error(fmt::format("--files: {} is empty", path));
  return words;
}

/// Throws input_error for a pipe, FIFO or device: wordcount reads each file
/// three times (this check, the count, the sequential check), and the second
/// read of a pipe finds it drained (a FIFO's blocks). Missing files and
/// directories are left to open_input's messages.
void require_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) return;
  throw input_error(fmt::format(
      "--files {}: not a regular file (a pipe or a device); wordcount reads each file more "
      "than once: save the text to a file first",
      printable(path, 200)));
}

}  // namespace

std::uint64_t check_files(const std::vector<std::string>& files) {
  std::uint64_t h = mix64(files.size());
  for (const std::string& path : files) {
    require_regular_file(path);
    scan_file(path, [&](std::string_view w) {
      std::uint64_t x = w.size();
      for (const char c : w) x = (x ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;  // FNV-1a
      h = mix64(h ^ x);
    });
    h = mix64(h + 1);  // a file's end: the same words split otherwise differ
  }
  return h;
}

void for_each_word_in_file(const std::string& path,
                           const std::function<void(std::string_view)>& f) {
  scan_file(path, f);
}

std::vector<double> zipf_cdf(std::uint64_t vocabulary, double s) {
  std::vector<double> cdf(vocabulary);
  double sum = 0;
  for (std::uint64_t r = 1; r <= vocabulary; ++r) {
    sum += 1.0 / std::pow(static_cast<double>(r), s);
    cdf[r - 1] = sum;
  }
  for (double& c : cdf) c /= sum;
  return cdf;
}

std::string zipf_word(std::uint64_t rank) {
  std::string w = "w";
  do {
    w.push_back(static_cast<char>('a' + rank % 26));
    rank /= 26;
  } while (rank != 0);
  return w;
}

std::uint64_t zipf_rank(const std::vector<double>& cdf, std::uint64_t seed, int core,
                        std::uint64_t i) {
  const double u =
      static_cast<double>(keyed_random(seed, static_cast<std::uint64_t>(core), i) >> 11) *
      0x1.0p-53;
  const auto at = std::upper_bound(cdf.begin(), cdf.end(), u);
  return static_cast<std::uint64_t>(std::min<std::ptrdiff_t>(
             at - cdf.begin(), static_cast<std::ptrdiff_t>(cdf.size()) - 1)) +
         1;
}

std::vector<std::string> files_of_core(const problem& p, int core, int cores) {
  std::vector<std::string> mine;
  for (std::size_t f = static_cast<std::size_t>(core); f < p.files.size();
       f += static_cast<std::size_t>(cores))
    mine.push_back(p.files[f]);
  return mine;
}

std::vector<std::pair<std::string, std::uint64_t>> sequential_counts(const problem& p) {
  std::unordered_map<std::string, std::uint64_t> counts;
  if (!p.files.empty()) {
    for (const std::string& path : p.files)
      scan_file(path, [&](std::string_view w) { ++counts[std::string(w)]; });
  } else {
    const std::vector<double> cdf = zipf_cdf(p.vocabulary, p.zipf_s);
    std::vector<std::uint64_t> by_rank(p.vocabulary + 1, 0);
    for (int c = 0; c < p.participants; ++c)
      for (std::uint64_t i = 0; i < p.words_per_core; ++i) ++by_rank[zipf_rank(cdf, p.seed, c, i)];
    for (std::uint64_t r = 1; r <= p.vocabulary; ++r)
      if (by_rank[r] != 0) counts.emplace(zipf_word(r), by_rank[r]);
  }
  std::vector<std::pair<std::string, std::uint64_t>> out(counts.begin(), counts.end());
  std::sort(out.begin(), out.end());
  return out;
}

ranking best_of(std::vector<std::pair<std::string, std::uint64_t>> counts, std::uint64_t k) {
  const auto keep = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(k, counts.size()));
  std::partial_sort(counts.begin(), counts.begin() + keep, counts.end(),
                    [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  counts.resize(static_cast<std::size_t>(keep));
  return counts;
}

}  // namespace shoal_apps::wordcount
