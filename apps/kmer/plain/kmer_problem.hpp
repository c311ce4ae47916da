// K-mer counting (issue 12 item 4; BCL's thesis, section 6.3): the problem,
// the seeded read generator, k-mer extraction, the sequential reference
// count and the check, shared by `shoal kmer` and shoal-baseline-kmer. No
// shoal, no MPI.
//
// Input: the reads of a FASTA/FASTQ file (--reads, every rank reads the
// file: common/plain/seq_file.hpp), or generated reads: a random genome of
// --genome-length bases (base i a pure function of (seed, i)), and
// --read-count reads of --read-length bases, read r copied from a random
// position (pure function of (seed, r)), reverse-complemented for every
// other read on average, each base replaced by another with probability
// --error-rate (so reads carry singletons, k-mers that occur once: the
// errors). Any core or rank makes read r alone; reads are split over the
// cores (or ranks) in contiguous blocks of read numbers.
//
// K-mers: every window of k bases (k = --k, 1..31, 2 bits per base in a
// 64-bit word) that holds no N; each counted as its canonical form, the
// smaller of the k-mer and its reverse complement (so a read and its
// reverse complement give the same counts, as a genome's two strands).
//
// Result: the "solid" k-mers, those that occur at least twice, with their
// exact counts. Check: the number of solid k-mers and a checksum of the
// solid (k-mer, count) pairs (a sum of 64-bit mixes, order-free) must equal
// those of a sequential std::unordered_map count of every read; so must
// the number of k-mer occurrences counted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/plain/report.hpp"

namespace shoal_apps::kmer {

/// The flags of a run (shared by the app and the baseline).
struct kmer_options {
  std::uint64_t k = 21;
  std::string reads;  ///< a FASTA/FASTQ file; empty: generated reads
  std::uint64_t genome_length = 200000;
  std::uint64_t read_count = 40000;
  std::uint64_t read_length = 100;
  double error_rate = 0.01;
  std::uint64_t seed = 1;
  std::string fault = "none";  ///< tests: "count" spoils one solid k-mer's count
  /// The generator's flags, to refuse them next to --reads.
  std::vector<CLI::Option*> generator_flags;
};

/// Declares the flags of kmer_options on `cmd`.
void add_options(CLI::App& cmd, kmer_options& o);

/// The 2-bit code of a canonical k-mer (k <= 31).
using kmer_t = std::uint64_t;

/// Calls fn(canonical k-mer) for every window of `seq` of k bases with no N.
template <class F>
void for_each_kmer(std::string_view seq, int k, F&& fn) {
  const kmer_t mask = (kmer_t{1} << (2 * k)) - 1;
  const int shift = 2 * (k - 1);
  kmer_t fwd = 0, rev = 0;
  int run = 0;  // bases since the last N
  for (const char c : seq) {
    kmer_t b = 0;
    switch (c) {
      case 'A':
        b = 0;
        break;
      case 'C':
        b = 1;
        break;
      case 'G':
        b = 2;
        break;
      case 'T':
        b = 3;
        break;
      default:
        run = 0;
        continue;  // N: no k-mer covers it
    }
    fwd = ((fwd << 2) | b) & mask;
    rev = (rev >> 2) | ((3 - b) << shift);
    if (++run >= k) fn(fwd < rev ? fwd : rev);
  }
}

/// The term of one solid k-mer with its count in the checksum.
std::uint64_t entry_hash(kmer_t kmer, std::uint64_t count) noexcept;
/// The rank or core that owns a k-mer in the baseline (of `parts`).
int kmer_owner(kmer_t kmer, int parts) noexcept;

/// What a count found; parts add up over cores or ranks.
struct kmer_tally {
  std::uint64_t occurrences = 0;  ///< k-mers read (windows without N)
  std::uint64_t solid = 0;        ///< distinct k-mers counted at least twice
  std::uint64_t checksum = 0;     ///< sum of entry_hash over the solid ones
  std::uint64_t singletons = 0;   ///< k-mers counted once that were kept (bloom false positives)
  std::uint64_t zero = 0;         ///< kept k-mers with no occurrence (a bug)
  std::uint64_t full = 0;         ///< k-mers the table had no room for (a sizing bug)
};
kmer_tally operator+(kmer_tally a, const kmer_tally& b) noexcept;
/// Adds one kept k-mer and its count to `t`.
void tally_entry(kmer_tally& t, kmer_t kmer, std::uint64_t count) noexcept;

/// The problem, checked.
class kmer_problem {
 public:
  /// Throws input_error naming the flag or the file (k out of range,
  /// generator flags with --reads, a malformed file, too little memory).
  explicit kmer_problem(const kmer_options& o);

  int k() const noexcept { return k_; }
  std::uint64_t read_count() const noexcept { return read_count_; }
  /// K-mer windows in every read (an upper bound on occurrences: N cuts).
  std::uint64_t windows() const noexcept { return windows_; }
  bool from_file() const noexcept { return !file_reads_.empty() || !options_.reads.empty(); }
  const std::string& fault() const noexcept { return options_.fault; }

  /// Calls fn(bases) for reads [first, last).
  void for_each_read(std::uint64_t first, std::uint64_t last,
                     const std::function<void(std::string_view)>& fn) const;
  /// The first read of part `part` of `parts` (contiguous blocks).
  std::uint64_t part_begin(int part, int parts) const noexcept {
    return read_count_ * static_cast<std::uint64_t>(part) / static_cast<std::uint64_t>(parts);
  }
  /// "40000 generated reads of 100 bases (...), k = 21"
  std::string describe() const;
  /// A digest of the reads taken from --reads, order-sensitive (another
  /// read, base or order gives another digest but with odds of 2^-64).
  std::uint64_t digest() const noexcept;

  /// The sequential reference: every read into a std::unordered_map.
  /// Also gives the distinct k-mers.
  kmer_tally reference(std::uint64_t& distinct) const;
  /// The sequential impl: every k-mer of every read into one vector,
  /// sorted, runs counted.
  kmer_tally count_by_sort() const;

 private:
  std::string make_read(std::uint64_t r) const;

  kmer_options options_;
  int k_;
  std::uint64_t read_count_ = 0;
  std::uint64_t windows_ = 0;
  std::vector<std::string> file_reads_;
};

/// Tests (--inject-fault count, to prove the check fails): adds one to the
/// first solid count it is given; `done` remembers that it did.
inline void spoil_count(const std::string& fault, bool& done, std::uint64_t& count) {
  if (done || fault != "count" || count < 2) return;
  ++count;
  done = true;
}

/// The verdict and the figures into `out` (rank 0): `seconds` for the
/// timed count, `t` summed over every core, `ref` the sequential reference.
void fill_report(report& out, const kmer_problem& p, double seconds, const kmer_tally& t,
                 const kmer_tally& ref, std::uint64_t distinct);

}  // namespace shoal_apps::kmer
