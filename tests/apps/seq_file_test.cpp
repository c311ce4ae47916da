// The FASTA/FASTQ reader (apps/common/plain/seq_file.hpp) on buffers and
// files, without the runtime: both formats, and one test per refused input,
// each checking that the message names the file and the line.
#include "common/plain/seq_file.hpp"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/plain/input_error.hpp"
#include "common/plain/text_input.hpp"

namespace {

using shoal_apps::input_error;

std::vector<std::string> read(const std::string& text) {
  return shoal_apps::read_seq_buffer(text.data(), text.size(), "r.fq");
}

/// The message of the input_error `text` raises ("" if none).
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const input_error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(text, wanted) \
  EXPECT_NE(error_of(text).find(wanted), std::string::npos) << "got: " << error_of(text)

TEST(SeqFile, FastaMultiLineLowerCaseAndN) {
  const auto s = read(">one first\nACGT\nacgn\n\n;comment\n>two\n>three\nTTTT  \n");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], "ACGTACGN");
  EXPECT_EQ(s[1], "");
  EXPECT_EQ(s[2], "TTTT");
}

TEST(SeqFile, FastqRecordsAndCrlf) {
  const auto s = read("@r1 x\r\nACGT\r\n+\r\nIIII\r\n\n@r2\nggnn\n+r2\n!!~~\n");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], "ACGT");
  EXPECT_EQ(s[1], "GGNN");
}

TEST(SeqFile, FormatFromFirstByte) {
  const std::string text = "\xEF\xBB\xBF@r\nA\n+\n#\n";  // a byte-order mark first
  std::istringstream in(text);
  shoal_apps::seq_reader r(in, "f");
  EXPECT_EQ(r.format(), shoal_apps::seq_format::fastq);
  shoal_apps::seq_record rec;
  ASSERT_TRUE(r.next(rec));
  EXPECT_EQ(rec.name, "r");
  EXPECT_EQ(rec.bases, "A");
  EXPECT_FALSE(r.next(rec));
}

TEST(SeqFile, EmptyFile) {
  EXPECT_ERROR("", "r.fq: empty file");
  EXPECT_ERROR("\n  \n", "r.fq: empty file");
}

TEST(SeqFile, UnknownFirstByte) {
  EXPECT_ERROR("ACGT\n", "r.fq:1: not a FASTA or FASTQ file: the first line starts with 'A'");
  EXPECT_ERROR("\x01\n", "starts with '\\x01'");
}

TEST(SeqFile, MissingPlusLine) {
  EXPECT_ERROR("@r1\nACGT\nIIII\n", "r.fq:3: record 'r1' (line 1): expected the '+' line");
  EXPECT_ERROR("@r1\nA\n+r2\nI\n", "r.fq:3: record 'r1' (line 1): the '+' line names another");
}

TEST(SeqFile, QualityLengthMismatch) {
  EXPECT_ERROR("@a\nA\n+\nI\n@r2\nACGT\n+\nIII\n",
               "r.fq:8: record 'r2' (line 5): 3 quality bytes for 4 bases");
  EXPECT_ERROR("@a\nAC\n+\nI \n", "column 2: quality byte ' '");
}

TEST(SeqFile, TruncatedRecord) {
  EXPECT_ERROR("@r1\n",
               "r.fq:1: truncated record 'r1' (line 1): the file ends where its sequence line");
  EXPECT_ERROR("@r1\nAC\n",
               "r.fq:2: truncated record 'r1' (line 1): the file ends where its '+' line");
  EXPECT_ERROR("@r1\nAC\n+",
               "truncated record 'r1' (line 1): the file ends where its quality line");
  EXPECT_ERROR("@a\nA\n+\nI\nACGT\n",
               "r.fq:5: expected a FASTQ record's '@' header line, got 'ACGT'");
}

TEST(SeqFile, LineOverTheBound) {
  const std::string longest(shoal_apps::max_line_bytes, 'A');
  EXPECT_EQ(read(">x\n" + longest + "\n" + longest).at(0).size(), 2 * longest.size());
  EXPECT_ERROR(">x\n" + longest + "A\n", "r.fq:2: line longer than 65536 bytes");
  EXPECT_ERROR(std::string(shoal_apps::max_line_bytes + 5, '>'), "r.fq:1: line longer");
}

TEST(SeqFile, NotABase) {
  EXPECT_ERROR(">x\nACGT\nACRT\n", "r.fq:3: column 3: 'R' is not a base");
  EXPECT_ERROR("@x\nAC-T\n+\nIIII\n", "r.fq:2: column 3: '-' is not a base");
  EXPECT_ERROR(">x\nAC GT\n", "r.fq:2: column 3: ' ' is not a base");
  EXPECT_ERROR(">x\nAC\xff\n", "'\\xff' is not a base");
}

TEST(SeqFile, OpeningNamesTheFlag) {
  const auto error_opening = [](const std::string& path) {
    try {
      shoal_apps::read_seq_file("--reads", path);
    } catch (const input_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_opening("").find("--reads '': empty file name"), std::string::npos);
  EXPECT_NE(error_opening("/").find("--reads /: is a directory"), std::string::npos);
  EXPECT_NE(error_opening("/no/such/reads.fa").find("--reads /no/such/reads.fa: cannot open"),
            std::string::npos);
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("seq_file_test_" + std::to_string(::getpid()));
  { std::ofstream(p) << ">x\nACGT\n"; }
  EXPECT_EQ(shoal_apps::read_seq_file("--reads", p.string()).at(0), "ACGT");
  { std::ofstream(p) << "@x\nACGT\n+\nII\n"; }
  EXPECT_NE(error_opening(p.string()).find(p.string() + ":4: record 'x' (line 1): 2 quality"),
            std::string::npos);
  std::filesystem::remove(p);
}

}  // namespace
