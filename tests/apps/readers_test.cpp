// The input readers on buffers, without the runtime (the way fuzz targets call
// them): Matrix Market symmetry, the line-length bound, a byte-order mark,
// escaped messages, and the address-space limit in the memory check.
#include <string>

#include <sys/resource.h>

#include <gtest/gtest.h>

#include "common/plain/graph.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/text_input.hpp"
#ifdef SHOAL_READERS_TEST_CHMA
#include "chma/plain/chma_problem.hpp"
#endif

namespace {

using shoal_apps::edge_list;
using shoal_apps::input_error;

edge_list read(const std::string& text) {
  return shoal_apps::read_graph_buffer(text.data(), text.size(), "g");
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

TEST(GraphReader, SymmetricEntriesStandForBothDirections) {
  edge_list g = read("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 1\n3 3\n");
  EXPECT_TRUE(g.symmetric);
  EXPECT_EQ(g.edges.size(), 3u);
  shoal_apps::add_mirrored_edges(g);
  EXPECT_FALSE(g.symmetric);
  ASSERT_EQ(g.edges.size(), 5u);  // the diagonal entry (3, 3) once
  EXPECT_EQ(g.edges[3].u, 0);
  EXPECT_EQ(g.edges[3].v, 1);
  EXPECT_EQ(g.vertices, 3);
}

TEST(GraphReader, GeneralFileIsNotMirrored) {
  edge_list g = read("%%MatrixMarket MATRIX Coordinate Integer General\n2 2 1\n1 2 -7\n");
  shoal_apps::add_mirrored_edges(g);
  EXPECT_EQ(g.edges.size(), 1u);
}

TEST(GraphReader, BannerMustBeExactAndFirst) {
  EXPECT_NE(error_of("%%matrixmarket matrix coordinate pattern general\n2 2 1\n1 2\n")
                .find("g:1: unknown banner '%%matrixmarket'"),
            std::string::npos);
  EXPECT_NE(error_of("0 1\n%%MatrixMarket matrix coordinate pattern general\n")
                .find("g:2: '%%MatrixMarket"),
            std::string::npos);
}

TEST(GraphReader, LineLengthIsBounded) {
  const std::string endless(shoal_apps::max_line_bytes + 10, '\0');
  EXPECT_NE(error_of(endless).find("g:1: line longer than 65536 bytes"), std::string::npos);
  // A line of exactly the bound (its "\r\n" not counted) is still read; one
  // byte more is not.
  const std::string longest = "0 1" + std::string(shoal_apps::max_line_bytes - 3, ' ');
  EXPECT_EQ(read(longest + "\r\n1 2\n").edges.size(), 2u);
  EXPECT_EQ(read(longest).edges.size(), 1u);
  EXPECT_NE(error_of(longest + " \n").find("g:1: line longer"), std::string::npos);
}

TEST(GraphReader, ByteOrderMarkIsSkipped) {
  const edge_list g = read(
      "\xEF\xBB\xBF"
      "0 1\n1 2\n");
  EXPECT_EQ(g.edges.size(), 2u);
  EXPECT_EQ(g.size_origin, "g:2: vertex id 2");
}

TEST(GraphReader, MessagesEscapeAndCutTheBytes) {
  const std::string what = error_of("0 1\n\x01\x02\xff 1\n");
  EXPECT_NE(what.find("got '\\x01\\x02\\xff'"), std::string::npos) << what;
  const std::string huge = error_of("0 " + std::string(5000, '7') + "\n");
  EXPECT_NE(huge.find("... (5000 bytes)"), std::string::npos) << huge;
  EXPECT_LT(huge.size(), 300u);
}

TEST(Printable, KeepsTextAndEscapesTheRest) {
  EXPECT_EQ(shoal_apps::printable("a b\\c"), "a b\\c");
  EXPECT_EQ(shoal_apps::printable(std::string("\x00\n", 2)), "\\x00\\x0a");
  EXPECT_EQ(shoal_apps::printable("abcdef", 3), "abc... (6 bytes)");
}

TEST(CheckMemory, AddressSpaceLimitCounts) {
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  rlimit low = old;
  low.rlim_cur = rlim_t{4} << 30;  // 4 GiB: far above this test's own use
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < low.rlim_cur) GTEST_SKIP();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &low), 0);
  std::string what;
  try {
    shoal_apps::check_memory(3.9 * (1 << 30), 0.8, "claim");
  } catch (const input_error& e) {
    what = e.what();
  }
  setrlimit(RLIMIT_AS, &old);
  const double physical = shoal_apps::physical_bytes();
  if (physical > 0 && 3.9 * (1 << 30) > 0.8 * physical) GTEST_SKIP() << "small machine";
  EXPECT_NE(what.find("claim, more than this process's address-space limit (ulimit -v) of 4 GiB"),
            std::string::npos)
      << what;
}

#ifdef SHOAL_READERS_TEST_CHMA
TEST(PoolReader, ReadsABufferWithBomAndRefusesBinary) {
  const std::string text =
      "\xEF\xBB\xBF"
      "abc\r\nxyz\n";
  EXPECT_EQ(shoal_apps::chma::read_pool_buffer(text.data(), text.size(), "p").size(), 2u);
  const std::string bad = "abc\n\x7f\n";
  try {
    shoal_apps::chma::read_pool_buffer(bad.data(), bad.size(), "p");
    FAIL() << "no input_error";
  } catch (const input_error& e) {
    EXPECT_NE(std::string(e.what()).find("p:2: byte 0x7f at column 1"), std::string::npos);
  }
}
#endif

}  // namespace
