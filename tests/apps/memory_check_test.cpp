// The apps' shared memory check (apps/common/plain/memory.hpp): sizes print
// in the largest unit that keeps them >= 1, and a need beyond the allowed
// share of this machine is an input_error naming the claim, the machine's
// memory and the advice.
#include <string>

#include <gtest/gtest.h>

#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"

namespace {

using shoal_apps::check_memory;
using shoal_apps::human_bytes;

TEST(HumanBytes, PicksTheLargestUnitAtLeastOne) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(1024), "1 KiB");
  EXPECT_EQ(human_bytes(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
  EXPECT_EQ(human_bytes(24.0 * (1ULL << 40)), "24 TiB");
}

TEST(CheckMemory, SmallNeedPasses) { EXPECT_NO_THROW(check_memory(1024, 0.5, "claim")); }

TEST(CheckMemory, LargeNeedNamesClaimMachineAndAdvice) {
  if (shoal_apps::physical_bytes() == 0) GTEST_SKIP() << "this machine's memory is unknown";
  try {
    check_memory(1e30, 0.9, "--flag 9: the table needs a lot", "lower --flag");
    FAIL() << "no input_error";
  } catch (const shoal_apps::input_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--flag 9: the table needs a lot, more than this machine's ", 0), 0u)
        << what;
    EXPECT_NE(what.find("iB of memory; lower --flag"), std::string::npos) << what;
  }
}

TEST(CheckMemory, NoAdviceNoSemicolon) {
  if (shoal_apps::physical_bytes() == 0) GTEST_SKIP() << "this machine's memory is unknown";
  try {
    check_memory(1e30, 0.9, "claim");
    FAIL() << "no input_error";
  } catch (const shoal_apps::input_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find(';'), std::string::npos) << what;
    EXPECT_EQ(what.substr(what.size() - 10), " of memory") << what;
  }
}

}  // namespace
