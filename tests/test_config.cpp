// Tests of shoal::config: defaults, flags, environment, precedence, argv
// compaction, every range boundary, malformed input, cross-field rules and
// the exact text of the error messages.
#include "shoal/config.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace {

/// A mutable, null-terminated array of C strings, as main() receives argv
/// and environ.
class c_strings {
 public:
  explicit c_strings(std::vector<std::string> items) : storage_(std::move(items)) {
    for (auto& item : storage_) pointers_.push_back(item.data());
    pointers_.push_back(nullptr);
  }
  c_strings(const c_strings&) = delete;
  c_strings& operator=(const c_strings&) = delete;

  char** data() { return pointers_.data(); }
  int size() const { return static_cast<int>(storage_.size()); }

 private:
  std::vector<std::string> storage_;
  std::vector<char*> pointers_;
};

std::vector<std::string> prefixed(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  return args;
}

struct parse_result {
  shoal::config cfg;
  std::vector<std::string> rest;  // argv left for the application, argv[0] first
};

/// Parses "prog" followed by `args` with the environment `env`.
parse_result parse(std::vector<std::string> args, std::vector<std::string> env = {}) {
  c_strings argv(prefixed(std::move(args)));
  c_strings envp(std::move(env));
  int argc = argv.size();
  parse_result result{shoal::config::parse(argc, argv.data(), envp.data()), {}};
  for (int i = 0; i < argc; ++i) result.rest.emplace_back(argv.data()[i]);
  EXPECT_EQ(argv.data()[argc], nullptr);
  return result;
}

/// The message parse() throws, or "<no error>".
std::string parse_error(std::vector<std::string> args, std::vector<std::string> env = {}) {
  try {
    parse(std::move(args), std::move(env));
  } catch (const shoal::config_error& e) {
    return e.what();
  }
  return "<no error>";
}

/// The message validate() throws, or "<no error>".
std::string validate_error(const shoal::config& cfg) {
  try {
    cfg.validate();
  } catch (const shoal::config_error& e) {
    return e.what();
  }
  return "<no error>";
}

int hardware_cores() {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(hardware, 1, 4096);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What a test expects of the fields besides cores and watchdog_s.
struct expected_fields {
  int stack_kb;
  int max_workers_per_core;
  std::int64_t aggregation_bytes;
  std::int64_t flush_us;
  int buffers_per_core;
  std::int64_t heap_mb;
  std::int64_t block_bytes;
  bool stats;
  bool verbose;
};
// The documented defaults, and what the EveryFlag and EveryVariable tests set.
constexpr expected_fields documented_defaults{64, 8192, 16384, 50, 64, 1024, 64, false, false};
constexpr expected_fields every_field_set{256, 100, 4096, 7, 32, 2048, 128, true, true};

void expect_fields(const shoal::config& cfg, const expected_fields& e) {
  EXPECT_EQ(cfg.stack_kb, e.stack_kb);
  EXPECT_EQ(cfg.max_workers_per_core, e.max_workers_per_core);
  EXPECT_EQ(cfg.aggregation_bytes, e.aggregation_bytes);
  EXPECT_EQ(cfg.flush_us, e.flush_us);
  EXPECT_EQ(cfg.buffers_per_core, e.buffers_per_core);
  EXPECT_EQ(cfg.heap_mb, e.heap_mb);
  EXPECT_EQ(cfg.block_bytes, e.block_bytes);
  EXPECT_EQ(cfg.stats, e.stats);
  EXPECT_EQ(cfg.verbose, e.verbose);
}

// ---------------------------------------------------------------- defaults

TEST(ConfigDefaults, MemberDefaultsMatchTheContract) {
  const shoal::config cfg;
  EXPECT_EQ(cfg.cores, 0);
  expect_fields(cfg, documented_defaults);
  EXPECT_EQ(cfg.watchdog_s, 60);
}

TEST(ConfigDefaults, ParseWithNothingGivesResolvedDefaults) {
  const auto r = parse({});
  EXPECT_EQ(r.cfg.cores, hardware_cores());
  EXPECT_GE(r.cfg.cores, 1);
  expect_fields(r.cfg, documented_defaults);
  EXPECT_EQ(r.cfg.watchdog_s, 60);
  EXPECT_EQ(r.rest, std::vector<std::string>{"prog"});
}

TEST(ConfigDefaults, DefaultsValidateBeforeAndAfterResolve) {
  shoal::config cfg;
  EXPECT_NO_THROW(cfg.validate());
  EXPECT_NO_THROW(cfg.resolve().validate());
}

TEST(ConfigDefaults, NullOrEmptyArgvAndEnvpAreAccepted) {
  int argc = 0;
  const auto cfg = shoal::config::parse(argc, nullptr, nullptr);
  EXPECT_EQ(argc, 0);
  EXPECT_EQ(cfg.cores, hardware_cores());

  c_strings argv({"prog"});
  argc = argv.size();
  EXPECT_NO_THROW(shoal::config::parse(argc, argv.data(), nullptr));
  EXPECT_EQ(argc, 1);
}

TEST(ConfigResolve, ReplacesAutoCoresAndIsIdempotent) {
  shoal::config cfg;
  cfg.resolve();
  EXPECT_EQ(cfg.cores, hardware_cores());
  const int first = cfg.cores;
  EXPECT_EQ(cfg.resolve().cores, first);

  shoal::config explicit_cores;
  explicit_cores.cores = 3;
  EXPECT_EQ(explicit_cores.resolve().cores, 3);
}

// ------------------------------------------------------- flags and environment

TEST(ConfigFlags, SeparateAndEqualsFormsAreEquivalent) {
  EXPECT_EQ(parse({"--cores", "3"}).cfg.cores, 3);
  EXPECT_EQ(parse({"--cores=3"}).cfg.cores, 3);
  EXPECT_EQ(parse({"--stack-kb", "128"}).cfg.stack_kb, 128);
  EXPECT_EQ(parse({"--stack-kb=128"}).cfg.stack_kb, 128);
}

TEST(ConfigFlags, EveryFlagSetsItsField) {
  const auto r = parse({"--cores=2", "--stack-kb", "256", "--max-workers-per-core=100",
                        "--aggregation-bytes", "4096", "--flush-us=7", "--buffers-per-core", "32",
                        "--heap-mb=2048", "--block-bytes", "128", "--stats", "--verbose"});
  EXPECT_EQ(r.cfg.cores, 2);
  expect_fields(r.cfg, every_field_set);
  EXPECT_EQ(r.rest, std::vector<std::string>{"prog"});
}

TEST(ConfigFlags, RepeatedFlagKeepsTheLastValue) {
  EXPECT_EQ(parse({"--cores=2", "--cores", "5"}).cfg.cores, 5);
}

TEST(ConfigEnv, EveryVariableSetsItsField) {
  const auto r = parse(
      {}, {"SHOAL_CORES=2", "SHOAL_STACK_KB=256", "SHOAL_MAX_WORKERS_PER_CORE=100",
           "SHOAL_AGGREGATION_BYTES=4096", "SHOAL_FLUSH_US=7", "SHOAL_BUFFERS_PER_CORE=32",
           "SHOAL_HEAP_MB=2048", "SHOAL_BLOCK_BYTES=128", "SHOAL_STATS=1", "SHOAL_VERBOSE=true"});
  EXPECT_EQ(r.cfg.cores, 2);
  expect_fields(r.cfg, every_field_set);
}

TEST(ConfigEnv, OnlyExactNamesMatchAndTheFirstEntryWins) {
  EXPECT_EQ(
      parse({}, {"SHOAL_CORESX=5", "XSHOAL_CORES=5", "SHOAL_CORES", "shoal_cores=5"}).cfg.cores,
      hardware_cores());
  EXPECT_EQ(parse({}, {"SHOAL_CORES=3", "SHOAL_CORES=5"}).cfg.cores, 3);
  EXPECT_EQ(parse({}, {"SHOAL_UNKNOWN_OPTION=abc", "PATH=/bin"}).cfg.cores, hardware_cores());
}

TEST(ConfigEnv, UnknownShoalVariableIsNamedWithTheClosestKnownOne) {
  std::vector<std::string> env{"SHOAL_COREZ=4", "SHOAL_CORES=2", "PATH=/bin", "SHOAL_WATCHDOG=5"};
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const auto warnings = shoal::config::unknown_env(envp.data());
  ASSERT_EQ(warnings.size(), 2U);
  EXPECT_EQ(warnings[0],
            "unknown environment variable SHOAL_COREZ ignored (closest known: SHOAL_CORES; see "
            "--help-shoal)");
  EXPECT_EQ(warnings[1],
            "unknown environment variable SHOAL_WATCHDOG ignored (closest known: "
            "SHOAL_WATCHDOG_S; see --help-shoal)");
  EXPECT_TRUE(shoal::config::unknown_env(nullptr).empty());
}

TEST(ConfigHelp, OnlyCoresDefaultsToHardwareThreads) {
  const std::string help = shoal::config::help();
  EXPECT_NE(help.find("SHOAL_WATCHDOG_S            default 60;"), std::string::npos) << help;
  EXPECT_NE(help.find("SHOAL_JOIN_S                default 30;"), std::string::npos) << help;
  std::size_t count = 0;
  for (std::size_t at = help.find("hardware threads"); at != std::string::npos;
       at = help.find("hardware threads", at + 1))
    ++count;
  EXPECT_EQ(count, 1U) << help;
}

TEST(ConfigEnv, MalformedVariableNamesTheVariable) {
  EXPECT_EQ(parse_error({}, {"SHOAL_CORES=abc"}),
            "SHOAL_CORES (environment): expected an integer in [1, 4096], got 'abc'");
  EXPECT_EQ(parse_error({}, {"SHOAL_CORES="}),
            "SHOAL_CORES (environment): expected an integer in [1, 4096], got ''");
  EXPECT_EQ(parse_error({}, {"SHOAL_BLOCK_BYTES=48"}),
            "SHOAL_BLOCK_BYTES (environment): must be a power of two in [8, 1048576], got '48'");
  EXPECT_EQ(parse_error({}, {"SHOAL_STATS=yes"}),
            "SHOAL_STATS (environment): expected 0, 1, true or false, got 'yes'");
}

TEST(ConfigEnv, MalformedVariableIsAnErrorEvenWhenAFlagOverridesIt) {
  EXPECT_EQ(parse_error({"--cores=2"}, {"SHOAL_CORES=abc"}),
            "SHOAL_CORES (environment): expected an integer in [1, 4096], got 'abc'");
}

TEST(ConfigPrecedence, FlagOverEnvironmentOverDefault) {
  EXPECT_EQ(parse({}).cfg.stack_kb, 64);
  EXPECT_EQ(parse({}, {"SHOAL_STACK_KB=128"}).cfg.stack_kb, 128);
  EXPECT_EQ(parse({"--stack-kb=256"}, {"SHOAL_STACK_KB=128"}).cfg.stack_kb, 256);
  EXPECT_EQ(parse({"--stack-kb", "256"}, {"SHOAL_STACK_KB=128"}).cfg.stack_kb, 256);
  EXPECT_EQ(parse({}, {"SHOAL_CORES=3"}).cfg.cores, 3);
  EXPECT_EQ(parse({"--cores=2"}, {"SHOAL_CORES=3"}).cfg.cores, 2);
  EXPECT_FALSE(parse({"--stats=0"}, {"SHOAL_STATS=1"}).cfg.stats);
  EXPECT_TRUE(parse({"--verbose"}, {"SHOAL_VERBOSE=false"}).cfg.verbose);
}

// --------------------------------------------------------------- booleans

TEST(ConfigBooleans, BareFlagAndExplicitValues) {
  EXPECT_TRUE(parse({"--stats"}).cfg.stats);
  EXPECT_TRUE(parse({"--stats=1"}).cfg.stats);
  EXPECT_TRUE(parse({"--stats=true"}).cfg.stats);
  EXPECT_FALSE(parse({"--stats=0"}).cfg.stats);
  EXPECT_FALSE(parse({"--stats=false"}).cfg.stats);
  EXPECT_TRUE(parse({"--verbose"}).cfg.verbose);
  EXPECT_FALSE(parse({"--verbose=false"}).cfg.verbose);
  EXPECT_FALSE(parse({"--verbose"}).cfg.stats);
  EXPECT_FALSE(parse({}, {"SHOAL_VERBOSE=0"}).cfg.verbose);
}

TEST(ConfigBooleans, ABooleanNeverTakesTheNextArgument) {
  const auto r = parse({"--verbose", "0", "--stats", "false"});
  EXPECT_TRUE(r.cfg.verbose);
  EXPECT_TRUE(r.cfg.stats);
  EXPECT_EQ(r.rest, (std::vector<std::string>{"prog", "0", "false"}));
}

TEST(ConfigBooleans, MalformedValueIsRejected) {
  EXPECT_EQ(parse_error({"--stats=yes"}), "--stats: expected 0, 1, true or false, got 'yes'");
  EXPECT_EQ(parse_error({"--verbose="}), "--verbose: expected 0, 1, true or false, got ''");
  EXPECT_EQ(parse_error({"--stats=TRUE"}), "--stats: expected 0, 1, true or false, got 'TRUE'");
  EXPECT_EQ(parse_error({"--stats=2"}), "--stats: expected 0, 1, true or false, got '2'");
}

// ------------------------------------------------------------ argv handling

TEST(ConfigArgv, CompactionKeepsApplicationArgumentsInOrder) {
  c_strings argv({"prog", "a", "--cores", "2", "b", "--verbose", "--x=1", "c", "--heap-mb=64"});
  char* const original_a = argv.data()[1];
  int argc = argv.size();
  const auto cfg = shoal::config::parse(argc, argv.data(), nullptr);
  EXPECT_EQ(cfg.cores, 2);
  EXPECT_TRUE(cfg.verbose);
  EXPECT_EQ(cfg.heap_mb, 64);
  ASSERT_EQ(argc, 5);
  const std::vector<std::string> rest(argv.data(), argv.data() + argc);
  EXPECT_EQ(rest, (std::vector<std::string>{"prog", "a", "b", "--x=1", "c"}));
  EXPECT_EQ(argv.data()[argc], nullptr);
  EXPECT_EQ(argv.data()[1], original_a) << "the application's strings are kept, not copied";
}

TEST(ConfigArgv, NothingToRemoveLeavesArgvAlone) {
  c_strings argv({"prog", "x", "--y", "z"});
  int argc = argv.size();
  shoal::config::parse(argc, argv.data(), nullptr);
  EXPECT_EQ(argc, 4);
  const std::vector<std::string> rest(argv.data(), argv.data() + argc);
  EXPECT_EQ(rest, (std::vector<std::string>{"prog", "x", "--y", "z"}));
  EXPECT_EQ(argv.data()[argc], nullptr);
}

TEST(ConfigArgv, OnlyShoalFlagsLeavesArgvZero) {
  const auto r = parse({"--cores", "1", "--stats"});
  EXPECT_EQ(r.rest, std::vector<std::string>{"prog"});
}

TEST(ConfigArgv, AThrowLeavesArgcAndArgvUnchanged) {
  c_strings argv({"prog", "--cores", "2", "app", "--block-bytes=48"});
  int argc = argv.size();
  EXPECT_THROW(shoal::config::parse(argc, argv.data(), nullptr), shoal::config_error);
  EXPECT_EQ(argc, 5);
  const std::vector<std::string> all(argv.data(), argv.data() + argc);
  EXPECT_EQ(all, (std::vector<std::string>{"prog", "--cores", "2", "app", "--block-bytes=48"}));

  // A cross-field error is found after the flags were read; argv still stays.
  c_strings argv2({"prog", "--cores=4096", "--heap-mb=1", "--block-bytes=512", "app"});
  argc = argv2.size();
  EXPECT_THROW(shoal::config::parse(argc, argv2.data(), nullptr), shoal::config_error);
  EXPECT_EQ(argc, 5);
  EXPECT_STREQ(argv2.data()[1], "--cores=4096");
}

TEST(ConfigArgv, FlagsThatMerelyBeginWithAShoalNameBelongToTheApplication) {
  const std::vector<std::string> args{"--cores3",    "--stats-file", "out.txt", "--verbosely",
                                      "--cores-x=2", "-cores",       "4",       "--CORES",
                                      "5",           "--help-shoal", "-",       "--=1"};
  const auto r = parse(args);
  EXPECT_EQ(r.cfg.cores, hardware_cores());
  EXPECT_FALSE(r.cfg.stats);
  EXPECT_FALSE(r.cfg.verbose);
  EXPECT_EQ(r.rest, prefixed(args));
}

TEST(ConfigArgv, DoubleDashStopsParsingAndStaysInPlace) {
  const auto r = parse({"a", "--cores", "2", "--", "--cores", "3", "--stats", "b"});
  EXPECT_EQ(r.cfg.cores, 2);
  EXPECT_FALSE(r.cfg.stats);
  EXPECT_EQ(r.rest, (std::vector<std::string>{"prog", "a", "--", "--cores", "3", "--stats", "b"}));

  const auto first = parse({"--", "--cores=abc"});
  EXPECT_EQ(first.rest, (std::vector<std::string>{"prog", "--", "--cores=abc"}));

  const auto last = parse({"--verbose", "--"});
  EXPECT_TRUE(last.cfg.verbose);
  EXPECT_EQ(last.rest, (std::vector<std::string>{"prog", "--"}));
}

TEST(ConfigArgv, MissingValueAtTheEnd) {
  EXPECT_EQ(parse_error({"--cores"}), "--cores: missing value");
  EXPECT_EQ(parse_error({"app", "--block-bytes"}), "--block-bytes: missing value");
  // An explicit empty value is a value, and a malformed one.
  EXPECT_EQ(parse_error({"--cores="}), "--cores: expected an integer in [1, 4096], got ''");
  // The argument after a value flag is its value, even when it looks like a flag.
  EXPECT_EQ(parse_error({"--cores", "--verbose"}),
            "--cores: expected an integer in [1, 4096], got '--verbose'");
  EXPECT_EQ(parse_error({"--cores", "--"}), "--cores: expected an integer in [1, 4096], got '--'");
}

// ------------------------------------------------------- integer syntax

TEST(ConfigIntegers, OnlyTheWholeDecimalStringIsAccepted) {
  for (const std::string bad :
       {"abc", "12abc", "", "-", "+", "+3", " 3", "3 ", "0x10", "1e3", "3.0", "3,0", "--3"}) {
    EXPECT_EQ(parse_error({"--cores", bad}),
              "--cores: expected an integer in [1, 4096], got '" + bad + "'")
        << "value '" << bad << "'";
    EXPECT_EQ(parse_error({"--flush-us=" + bad}),
              "--flush-us: expected an integer in [0, 10000000], got '" + bad + "'")
        << "value '" << bad << "'";
  }
}

TEST(ConfigIntegers, OverflowIsRejectedNotTruncated) {
  for (const std::string big :
       {"99999999999999999999", "-99999999999999999999", "9223372036854775807",
        "9223372036854775808", "4294967298", "4294967297", "2147483648"}) {
    EXPECT_EQ(parse_error({"--cores", big}),
              "--cores: expected an integer in [1, 4096], got '" + big + "'")
        << "value '" << big << "'";
    EXPECT_EQ(parse_error({"--heap-mb", big}),
              "--heap-mb: expected an integer in [1, 16777216], got '" + big + "'")
        << "value '" << big << "'";
  }
}

TEST(ConfigIntegers, LeadingZerosAreDecimal) {
  EXPECT_EQ(parse({"--cores=010"}).cfg.cores, 10);
  EXPECT_EQ(parse({"--flush-us=0"}).cfg.flush_us, 0);
}

TEST(ConfigIntegers, NegativeValuesAreOutOfRange) {
  EXPECT_EQ(parse_error({"--flush-us=-1"}),
            "--flush-us: expected an integer in [0, 10000000], got '-1'");
  EXPECT_EQ(parse_error({"--cores", "-0"}), "--cores: expected an integer in [1, 4096], got '-0'");
}

// ------------------------------------------------------ range boundaries

struct boundary_case {
  std::string flag;      // "--cores"
  std::string env;       // "SHOAL_CORES"
  std::string accepted;  // as the error message spells it
  std::int64_t min;
  std::int64_t max;
  std::vector<std::int64_t> outside;    // just outside, on both sides
  std::vector<std::string> companions;  // keep cross-field rules satisfied at the extremes
  std::int64_t (*get)(const shoal::config&);
  void (*set)(shoal::config&, std::int64_t);
};

std::ostream& operator<<(std::ostream& out, const boundary_case& c) { return out << c.flag; }

class config_boundary : public ::testing::TestWithParam<boundary_case> {
 protected:
  std::vector<std::string> with_companions(std::vector<std::string> args) const {
    const auto& companions = GetParam().companions;
    args.insert(args.begin(), companions.begin(), companions.end());
    return args;
  }
};

TEST_P(config_boundary, BothEndsAreAcceptedAsFlagsAndVariables) {
  const auto& c = GetParam();
  for (const std::int64_t value : {c.min, c.max}) {
    const std::string text = std::to_string(value);
    EXPECT_EQ(c.get(parse(with_companions({c.flag, text})).cfg), value) << text;
    EXPECT_EQ(c.get(parse(with_companions({c.flag + "=" + text})).cfg), value) << text;
    EXPECT_EQ(c.get(parse(with_companions({}), {c.env + "=" + text}).cfg), value) << text;
  }
}

TEST_P(config_boundary, JustOutsideIsRejectedWithTheRange) {
  const auto& c = GetParam();
  for (const std::int64_t value : c.outside) {
    const std::string text = std::to_string(value);
    EXPECT_EQ(parse_error(with_companions({c.flag, text})),
              c.flag + ": expected " + c.accepted + ", got '" + text + "'");
    EXPECT_EQ(parse_error(with_companions({}), {c.env + "=" + text}),
              c.env + " (environment): expected " + c.accepted + ", got '" + text + "'");
  }
}

TEST_P(config_boundary, ValidateRejectsTheSameValuesSetDirectly) {
  const auto& c = GetParam();
  for (const std::int64_t value : c.outside) {
    if (c.flag == "--cores" && value == 0) continue;  // 0 is "auto" in a config object
    auto cfg = parse(with_companions({})).cfg;
    c.set(cfg, value);
    const std::string text = std::to_string(value);
    EXPECT_EQ(validate_error(cfg), c.flag + ": expected " + c.accepted + ", got '" + text + "'");
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryIntegerFlag, config_boundary,
    ::testing::Values(
        boundary_case{"--cores",
                      "SHOAL_CORES",
                      "an integer in [1, 4096]",
                      1,
                      4096,
                      {0, 4097},
                      {},
                      [](const shoal::config& c) -> std::int64_t { return c.cores; },
                      [](shoal::config& c, std::int64_t v) { c.cores = static_cast<int>(v); }},
        boundary_case{"--stack-kb",
                      "SHOAL_STACK_KB",
                      "a multiple of 4 in [32, 1048576]",
                      32,
                      1048576,
                      {31, 16, 28, 1048577, 1048580},
                      {},
                      [](const shoal::config& c) -> std::int64_t { return c.stack_kb; },
                      [](shoal::config& c, std::int64_t v) { c.stack_kb = static_cast<int>(v); }},
        boundary_case{
            "--max-workers-per-core",
            "SHOAL_MAX_WORKERS_PER_CORE",
            "an integer in [1, 1000000]",
            1,
            1000000,
            {0, 1000001},
            {},
            [](const shoal::config& c) -> std::int64_t { return c.max_workers_per_core; },
            [](shoal::config& c, std::int64_t v) { c.max_workers_per_core = static_cast<int>(v); }},
        boundary_case{"--aggregation-bytes",
                      "SHOAL_AGGREGATION_BYTES",
                      "an integer in [256, 67108864]",
                      256,
                      67108864,
                      {255, 67108865},
                      {"--buffers-per-core=4", "--network-bytes=67108864"},
                      [](const shoal::config& c) -> std::int64_t { return c.aggregation_bytes; },
                      [](shoal::config& c, std::int64_t v) { c.aggregation_bytes = v; }},
        boundary_case{"--network-bytes",
                      "SHOAL_NETWORK_BYTES",
                      "an integer in [4096, 67108864]",
                      4096,
                      67108864,
                      {4095, 67108865},
                      {"--aggregation-bytes=4096"},
                      [](const shoal::config& c) -> std::int64_t { return c.network_bytes; },
                      [](shoal::config& c, std::int64_t v) { c.network_bytes = v; }},
        boundary_case{"--flush-us",
                      "SHOAL_FLUSH_US",
                      "an integer in [0, 10000000]",
                      0,
                      10000000,
                      {-1, 10000001},
                      {},
                      [](const shoal::config& c) -> std::int64_t { return c.flush_us; },
                      [](shoal::config& c, std::int64_t v) { c.flush_us = v; }},
        boundary_case{
            "--buffers-per-core",
            "SHOAL_BUFFERS_PER_CORE",
            "an integer in [4, 1000000]",
            4,
            1000000,
            {3, 1000001},
            {"--aggregation-bytes=256"},
            [](const shoal::config& c) -> std::int64_t { return c.buffers_per_core; },
            [](shoal::config& c, std::int64_t v) { c.buffers_per_core = static_cast<int>(v); }},
        boundary_case{"--heap-mb",
                      "SHOAL_HEAP_MB",
                      "an integer in [1, 16777216]",
                      1,
                      16777216,
                      {0, 16777217},
                      {"--cores=1"},
                      [](const shoal::config& c) -> std::int64_t { return c.heap_mb; },
                      [](shoal::config& c, std::int64_t v) { c.heap_mb = v; }},
        boundary_case{"--block-bytes",
                      "SHOAL_BLOCK_BYTES",
                      "a power of two in [8, 1048576]",
                      8,
                      1048576,
                      {7, 4, 1048577, 2097152},
                      {"--cores=1"},
                      [](const shoal::config& c) -> std::int64_t { return c.block_bytes; },
                      [](shoal::config& c, std::int64_t v) { c.block_bytes = v; }},
        boundary_case{
            "--watchdog-s",
            "SHOAL_WATCHDOG_S",
            "an integer in [0, 86400]",
            0,
            86400,
            {86401},
            {},
            [](const shoal::config& c) -> std::int64_t { return c.watchdog_s; },
            [](shoal::config& c, std::int64_t v) { c.watchdog_s = static_cast<int>(v); }}),
    [](const ::testing::TestParamInfo<boundary_case>& info) {
      std::string name;
      for (const char ch : info.param.flag) {
        if (ch != '-') name += ch;
      }
      return name;
    });

// ------------------------------------------------------ extra value rules

TEST(ConfigRules, BlockBytesMustBeAPowerOfTwo) {
  EXPECT_EQ(parse_error({"--block-bytes", "48"}),
            "--block-bytes: must be a power of two in [8, 1048576], got '48'");
  for (const std::int64_t bad : {12, 100, 1000, 1048575, 524289}) {
    const std::string text = std::to_string(bad);
    EXPECT_EQ(parse_error({"--cores=1", "--block-bytes=" + text}),
              "--block-bytes: must be a power of two in [8, 1048576], got '" + text + "'");
  }
  for (std::int64_t value = 8; value <= 1048576; value *= 2) {
    EXPECT_EQ(parse({"--cores=1", "--block-bytes", std::to_string(value)}).cfg.block_bytes, value);
  }
}

TEST(ConfigRules, StackKbMustBeAMultipleOfFour) {
  EXPECT_EQ(parse_error({"--stack-kb", "34"}),
            "--stack-kb: must be a multiple of 4 in [32, 1048576], got '34'");
  EXPECT_EQ(parse_error({"--stack-kb=1048575"}),
            "--stack-kb: must be a multiple of 4 in [32, 1048576], got '1048575'");
  EXPECT_EQ(parse({"--stack-kb", "36"}).cfg.stack_kb, 36);
  // 16 KiB overflowed in the apps (gups): refused, naming the minimum.
  EXPECT_EQ(parse_error({"--stack-kb", "16"}),
            "--stack-kb: expected a multiple of 4 in [32, 1048576], got '16'");
  EXPECT_EQ(parse({"--stack-kb", "1048572"}).cfg.stack_kb, 1048572);
}

// ------------------------------------------------------------ cross-field

TEST(ConfigCrossField, HeapMustGiveEveryCoreABlock) {
  // 1 MiB / 4096 cores = 256 bytes per core: a 256-byte block fits, 512 does not.
  EXPECT_EQ(parse({"--heap-mb=1", "--cores=4096", "--block-bytes=256"}).cfg.block_bytes, 256);
  EXPECT_EQ(parse_error({"--heap-mb=1", "--cores=4096", "--block-bytes=512"}),
            "--heap-mb: 1 MiB gives each of the 4096 cores less than one block of 512 bytes; "
            "raise --heap-mb or lower --cores");

  shoal::config cfg;
  cfg.cores = 4096;
  cfg.heap_mb = 1;
  cfg.block_bytes = 1024;
  EXPECT_EQ(validate_error(cfg),
            "--heap-mb: 1 MiB gives each of the 4096 cores less than one block of 1024 bytes; "
            "raise --heap-mb or lower --cores");
}

TEST(ConfigCrossField, BufferPoolIsAtMostOneGiBPerCore) {
  // 16384 x 65536 bytes is exactly 1 GiB.
  EXPECT_NO_THROW(parse({"--buffers-per-core=16384", "--aggregation-bytes=65536"}));
  EXPECT_EQ(parse_error({"--buffers-per-core=16385", "--aggregation-bytes=65536"}),
            "--buffers-per-core x --aggregation-bytes: 16385 x 65536 bytes = 1073807360 bytes "
            "exceeds 1 GiB per core");
  EXPECT_EQ(parse_error({"--aggregation-bytes=67108864"}),
            "--buffers-per-core x --aggregation-bytes: 64 x 67108864 bytes = 4294967296 bytes "
            "exceeds 1 GiB per core");
}

TEST(ConfigCrossField, StackReserveIsAtMost64TiBPerCore) {
  // 1048576 KiB x 65536 workers is exactly 64 TiB.
  EXPECT_NO_THROW(parse({"--stack-kb=1048576", "--max-workers-per-core=65536"}));
  EXPECT_EQ(parse_error({"--stack-kb=1048576", "--max-workers-per-core=65537"}),
            "--stack-kb x --max-workers-per-core: 1048576 KiB x 65537 workers = 68720525312 KiB "
            "of stack reserve exceeds 64 TiB per core");
  EXPECT_EQ(parse_error({"--stack-kb=1048576", "--max-workers-per-core=1000000"}),
            "--stack-kb x --max-workers-per-core: 1048576 KiB x 1000000 workers = "
            "1048576000000 KiB of stack reserve exceeds 64 TiB per core");
}

TEST(ConfigCrossField, RangesAreCheckedBeforeCrossFieldRules) {
  shoal::config cfg;
  cfg.cores = -1;
  cfg.block_bytes = 1 << 20;
  EXPECT_EQ(validate_error(cfg), "--cores: expected an integer in [1, 4096], got '-1'");
}

TEST(ConfigValidate, AutoCoresIsCheckedAsResolved) {
  shoal::config cfg;
  cfg.block_bytes = 1 << 20;
  cfg.heap_mb = 1;
  // With the resolved core count, 1 MiB gives a 1 MiB block only to a single core.
  const std::string error = validate_error(cfg);
  if (hardware_cores() == 1) {
    EXPECT_EQ(error, "<no error>");
  } else {
    EXPECT_EQ(error, "--heap-mb: 1 MiB gives each of the " + std::to_string(hardware_cores()) +
                         " cores less than one block of 1048576 bytes; "
                         "raise --heap-mb or lower --cores");
  }
  EXPECT_EQ(cfg.cores, 0) << "validate() does not modify the object";
}

TEST(ConfigValidate, ErrorsAreConfigErrors) {
  EXPECT_THROW(parse({"--cores", "abc"}), shoal::config_error);
  EXPECT_THROW(
      {
        try {
          parse({"--block-bytes", "48"});
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "--block-bytes: must be a power of two in [8, 1048576], got '48'");
          throw;
        }
      },
      shoal::config_error);
}

// ------------------------------------------------- describe() and help()

TEST(ConfigCrossField, NetworkBufferHoldsOneAggregationBuffer) {
  EXPECT_NO_THROW(parse({"--aggregation-bytes=65536", "--network-bytes=65536"}));
  EXPECT_NO_THROW(parse({"--aggregation-bytes=4033", "--network-bytes=4096"}));
  EXPECT_EQ(parse_error({"--aggregation-bytes=4097", "--network-bytes=4096"}),
            "--network-bytes: 4096 bytes cannot hold one aggregation buffer of 4160 bytes "
            "(--aggregation-bytes 4097 rounded up to 64); raise --network-bytes or lower "
            "--aggregation-bytes (checked on one process too, so that the same flags work under "
            "mpirun)");
}

TEST(ConfigDescribe, OneLinePerFieldWithItsValue) {
  const auto cfg = parse({"--cores=2", "--stack-kb=128", "--stats"}).cfg;
  const auto lines = lines_of(cfg.describe());
  const std::vector<std::pair<std::string, std::string>> expected{
      {"--cores", "2"},
      {"--stack-kb", "128"},
      {"--max-workers-per-core", "8192"},
      {"--aggregation-bytes", "16384"},
      {"--flush-us", "50"},
      {"--buffers-per-core", "64"},
      {"--network-bytes", "65536"},
      {"--heap-mb", "1024"},
      {"--block-bytes", "64"},
      {"--watchdog-s", "60"},
      {"--join-s", "30"},
      {"--stats", "true"},
      {"--verbose", "false"},
      {"--progress-thread", "false"},
      {"--transport", "auto"},
      {"--one-sided", "auto"},
      {"--idle", "auto"},
      {"--node-messages", "shm"},
      {"--bind", "auto"}};
  ASSERT_EQ(lines.size(), expected.size());
  const std::size_t value_column = lines[0].find_last_of(' ') + 1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& [flag, value] = expected[i];
    EXPECT_EQ(lines[i].substr(0, 2 + flag.size() + 1), "  " + flag + " ") << lines[i];
    EXPECT_EQ(lines[i].substr(value_column), value) << lines[i];
    EXPECT_EQ(lines[i].find_last_of(' ') + 1, value_column) << "values are aligned: " << lines[i];
  }
}

TEST(ConfigHelp, ListsEveryFlagVariableDefaultAndRange) {
  const std::string help = shoal::config::help();
  for (const char* text : {"--cores",
                           "SHOAL_CORES",
                           "hardware threads",
                           "an integer in [1, 4096]",
                           "--stack-kb",
                           "SHOAL_STACK_KB",
                           "a multiple of 4 in [32, 1048576]",
                           "--max-workers-per-core",
                           "SHOAL_MAX_WORKERS_PER_CORE",
                           "8192",
                           "--aggregation-bytes",
                           "SHOAL_AGGREGATION_BYTES",
                           "16384",
                           "an integer in [256, 67108864]",
                           "--flush-us",
                           "SHOAL_FLUSH_US",
                           "an integer in [0, 10000000]",
                           "--buffers-per-core",
                           "SHOAL_BUFFERS_PER_CORE",
                           "an integer in [4, 1000000]",
                           "--heap-mb",
                           "SHOAL_HEAP_MB",
                           "an integer in [1, 16777216]",
                           "--block-bytes",
                           "SHOAL_BLOCK_BYTES",
                           "a power of two in [8, 1048576]",
                           "--watchdog-s N",
                           "SHOAL_WATCHDOG_S",
                           "60; an integer in [0, 86400]",
                           "naming each core's wait (0 = off)",
                           "--stats",
                           "SHOAL_STATS",
                           "--verbose",
                           "SHOAL_VERBOSE"}) {
    EXPECT_NE(help.find(text), std::string::npos) << "help lacks '" << text << "'";
  }
}

}  // namespace

TEST(ConfigTransport, FlagEnvironmentAndDefault) {
  EXPECT_EQ(parse({}).cfg.transport, shoal::transport_kind::automatic);
  EXPECT_EQ(parse({"--transport", "local"}).cfg.transport, shoal::transport_kind::local);
  EXPECT_EQ(parse({"--transport=mpi"}).cfg.transport, shoal::transport_kind::mpi);
  EXPECT_EQ(parse({}, {"SHOAL_TRANSPORT=local"}).cfg.transport, shoal::transport_kind::local);
  EXPECT_EQ(parse({"--transport", "mpi"}, {"SHOAL_TRANSPORT=local"}).cfg.transport,
            shoal::transport_kind::mpi);
}

TEST(ConfigTransport, UnknownWordIsRejectedWithTheChoices) {
  try {
    (void)parse({"--transport", "tcp"});
    FAIL() << "--transport tcp was accepted";
  } catch (const shoal::config_error& e) {
    EXPECT_STREQ(e.what(), "--transport: expected one of auto, local, mpi, got 'tcp'");
  }
  EXPECT_NE(shoal::config::help().find("--transport WORD"), std::string::npos);
}

TEST(ConfigIdle, FlagEnvironmentDefaultAndUnknownWord) {
  EXPECT_EQ(parse({}).cfg.idle, shoal::idle_kind::automatic);
  EXPECT_EQ(parse({"--idle", "sleep"}).cfg.idle, shoal::idle_kind::sleep);
  EXPECT_EQ(parse({"--idle=spin"}).cfg.idle, shoal::idle_kind::spin);
  EXPECT_EQ(parse({}, {"SHOAL_IDLE=yield"}).cfg.idle, shoal::idle_kind::yield);
  try {
    (void)parse({"--idle", "nap"});
    FAIL() << "--idle nap was accepted";
  } catch (const shoal::config_error& e) {
    EXPECT_STREQ(e.what(), "--idle: expected one of auto, spin, yield, sleep, got 'nap'");
  }
  EXPECT_NE(shoal::config::help().find("--idle WORD"), std::string::npos);
}

TEST(ConfigNodeMessages, FlagEnvironmentDefaultAndUnknownWord) {
  EXPECT_EQ(parse({}).cfg.node_messages, shoal::node_messages_kind::shm);
  EXPECT_EQ(parse({"--node-messages", "mpi"}).cfg.node_messages, shoal::node_messages_kind::mpi);
  EXPECT_EQ(parse({"--node-messages=shm"}).cfg.node_messages, shoal::node_messages_kind::shm);
  EXPECT_EQ(parse({}, {"SHOAL_NODE_MESSAGES=mpi"}).cfg.node_messages,
            shoal::node_messages_kind::mpi);
  // The flag wins over the environment.
  EXPECT_EQ(parse({"--node-messages", "shm"}, {"SHOAL_NODE_MESSAGES=mpi"}).cfg.node_messages,
            shoal::node_messages_kind::shm);
  for (const char* bad : {"auto", "", "SHM"}) {
    try {
      (void)parse({"--node-messages", bad});
      FAIL() << "--node-messages '" << bad << "' was accepted";
    } catch (const shoal::config_error& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--node-messages: expected one of shm, mpi, got '") + bad + "'");
    }
  }
  EXPECT_NE(shoal::config::help().find("--node-messages WORD"), std::string::npos);
}

TEST(ConfigWord, NamesEachValueOfAWordOptionAndRefusesTheRest) {
  EXPECT_EQ(shoal::config::word("one-sided", 5), "node");
  EXPECT_EQ(shoal::config::word("one-sided", 0), "auto");
  EXPECT_EQ(shoal::config::word("node-messages", 1), "mpi");
  EXPECT_EQ(shoal::config::word("idle", static_cast<int>(shoal::idle_kind::sleep)), "sleep");
  const auto refused = [](std::string_view option, int value, const std::string& message) {
    try {
      (void)shoal::config::word(option, value);
      ADD_FAILURE() << option << " " << value << " was named";
    } catch (const shoal::config_error& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  refused("node-messages", 2, "--node-messages: no word for value 2 (0 to 1)");
  refused("one-sided", -1, "--one-sided: no word for value -1 (0 to 5)");
  refused("cores", 0, "--cores: not an option that takes a word");
  refused("", 0, "--: not an option that takes a word");
}

TEST(ConfigBind, FlagEnvironmentDefaultAndUnknownWord) {
  EXPECT_EQ(parse({}).cfg.bind, shoal::bind_kind::automatic);
  EXPECT_EQ(parse({"--bind", "keep"}).cfg.bind, shoal::bind_kind::keep);
  EXPECT_EQ(parse({"--bind=auto"}).cfg.bind, shoal::bind_kind::automatic);
  EXPECT_EQ(parse({}, {"SHOAL_BIND=keep"}).cfg.bind, shoal::bind_kind::keep);
  for (const char* bad : {"none", "", "KEEP"}) {
    try {
      (void)parse({"--bind", bad});
      FAIL() << "--bind '" << bad << "' was accepted";
    } catch (const shoal::config_error& e) {
      EXPECT_NE(std::string(e.what()).find("--bind"), std::string::npos) << e.what();
    }
  }
  EXPECT_NE(shoal::config::help().find("--bind WORD"), std::string::npos);
}
