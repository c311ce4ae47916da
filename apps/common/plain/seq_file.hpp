// Reading DNA sequences from a FASTA or FASTQ file (`shoal kmer --reads`),
// streaming: one record at a time, each line at most max_line_bytes (64 KiB,
// text_input.hpp), so a file of any size, or /dev/zero, reads in bounded
// memory. No shoal: the plain-MPI baseline and the fuzz target use it too.
//
// Format, from the first byte of the file (after a UTF-8 byte-order mark):
//   '>'  FASTA: a header line ">name ...", then any number of sequence lines
//        (a sequence may span lines; blank lines are skipped; a header with
//        no sequence is a record of length 0). ';' lines are comments.
//   '@'  FASTQ: records of exactly four lines: "@name ...", the sequence on
//        one line, a '+' line (empty after '+', or repeating the name), the
//        quality on one line, as long as the sequence, each byte in '!'..'~'.
//        Multi-line FASTQ is not read (it is rare and ambiguous: '@' is a
//        quality byte). Blank lines between records are skipped.
// Bases: A, C, G, T and N, in either case. Lower case is folded to upper
// case (soft-masking means nothing to k-mer counting); N (an unknown base)
// is kept, and a k-mer counter skips every k-mer that covers one. Any other
// byte (IUPAC codes such as R or Y, digits, '-' gaps, spaces) is refused, so
// that a wrong file is not counted as if it were DNA.
//
// Every error is an input_error "<file>:<line>: <what>" (the record's first
// line named where it helps): an empty file, a first byte that is neither
// '>' nor '@', a FASTQ record without its '+' line, a quality line of
// another length than the sequence, a record cut off by the end of the
// file, a line over the length bound, a byte that is not a base. Opening
// (open_input) refuses '', a directory and a missing file, naming the flag.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "common/plain/text_input.hpp"

namespace shoal_apps {

enum class seq_format { fasta, fastq };

/// One record: its name (the header line after '>' or '@', up to the first
/// space) and its bases (upper case, A C G T N only).
struct seq_record {
  std::string name;
  std::string bases;
  std::int64_t line = 0;  ///< the header's line number
};

/// Reads records one at a time from `in`; `name` (the file) starts every
/// message.
class seq_reader {
 public:
  /// Reads the first line to learn the format; throws input_error for an
  /// empty file or an unknown first byte.
  seq_reader(std::istream& in, std::string name);

  seq_format format() const noexcept { return format_; }

  /// The next record into `r`; false at the end of the file.
  bool next(seq_record& r);

 private:
  bool next_fasta(seq_record& r);
  bool next_fastq(seq_record& r);
  /// Appends the bases of `line` (line `number`) to `out`, checked and
  /// folded to upper case.
  void append_bases(std::string_view line, std::string& out) const;
  /// The next line that is not blank (false at the end).
  bool next_nonblank(std::string_view& line);

  line_reader lines_;
  seq_format format_ = seq_format::fasta;
  std::string pending_;  ///< FASTA: the header read ahead of its record
  bool has_pending_ = false;
};

/// Every record's bases from the file `path` (the value of `flag`), in file
/// order. Throws input_error (see the header).
std::vector<std::string> read_seq_file(std::string_view flag, const std::string& path);

/// The same on bytes in memory (tests and the fuzz target); `name` is the
/// file name in messages.
std::vector<std::string> read_seq_buffer(const char* data, std::size_t size,
                                         const std::string& name);

}  // namespace shoal_apps
