// What `shoal wordcount` shares with its sequential reference (no shoal):
// the problem, how text is cut into words, the seeded Zipf text generator,
// and the sequential count the distributed one is validated against.
//
// Words: maximal runs of ASCII letters, digits and apostrophes, lowercased;
// every other byte separates words. A word longer than max_word_bytes, a
// NUL byte (binary data) or an empty file is bad input (input_error naming
// the file and line).
//
// Zipf text: core c's stream is words_per_core words; word i is the word of
// rank r = F^-1(u) where u = keyed_random(seed, c, i) / 2^64 and F is the
// cumulative Zipf(s) distribution over ranks 1..vocabulary. The word of
// rank r is "w" followed by r in base 26 (letters), so ranks and words map
// one to one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shoal_apps::wordcount {

inline constexpr std::size_t max_word_bytes = 1000;

struct problem {
  std::vector<std::string> files;    ///< empty: generated Zipf text
  std::uint64_t words_per_core = 0;  ///< Zipf: words per core
  std::uint64_t vocabulary = 0;      ///< Zipf: distinct words possible
  double zipf_s = 1.0;               ///< Zipf exponent
  std::uint64_t seed = 0;
  std::uint64_t top = 10;
  int participants = 1;  ///< cores generating text (Zipf) or sharing files
};

/// (word, count), by count descending then word ascending.
using ranking = std::vector<std::pair<std::string, std::uint64_t>>;

/// Checks every file (opens, reads, tokenizes): throws input_error naming
/// the file and line for a missing, unreadable, empty or binary file, or an
/// overlong word. Returns a digest of every file's words in order (what the
/// count sees), to compare between processes that each read the files.
std::uint64_t check_files(const std::vector<std::string>& files);

/// Calls f(word) for every word of file `path` (already checked).
void for_each_word_in_file(const std::string& path, const std::function<void(std::string_view)>& f);

/// The cumulative Zipf distribution over ranks 1..vocabulary (for sampling).
std::vector<double> zipf_cdf(std::uint64_t vocabulary, double s);
/// The word of rank r (1-based).
std::string zipf_word(std::uint64_t rank);
/// Word i of core `core`'s Zipf stream.
std::uint64_t zipf_rank(const std::vector<double>& cdf, std::uint64_t seed, int core,
                        std::uint64_t i);

/// The files core `core` of `cores` reads: every cores-th file, from `core`.
std::vector<std::string> files_of_core(const problem& p, int core, int cores);

/// The sequential count of the whole input: every word's count, sorted by
/// word (the distributed gather's order).
std::vector<std::pair<std::string, std::uint64_t>> sequential_counts(const problem& p);

/// The best k of `counts` (by count descending, then word ascending).
ranking best_of(std::vector<std::pair<std::string, std::uint64_t>> counts, std::uint64_t k);

}  // namespace shoal_apps::wordcount
