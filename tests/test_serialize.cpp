// Serialization (include/shoal/serialize.hpp) and object channels
// (include/shoal/object_channel.hpp) on one process; the same exchange at 2 x 2
// is tests/mpi/dist_serialize.cpp.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "object_channel_scenarios.hpp"
#include "test_support.hpp"

namespace {

using object_scenarios::labelled_point;
using ::testing::ExitedWithCode;

/// Writes v, checks that size() matched, reads it back.
template <class T>
T round_trip(const T& v) {
  const std::size_t n = shoal::serialized_size(v);
  std::vector<char> bytes(n + 1, '\x7f');
  shoal::byte_writer w(bytes.data());
  shoal::serializer<T>::write(w, v);
  EXPECT_EQ(static_cast<std::size_t>(w.position() - bytes.data()), n);
  shoal::byte_reader r(bytes.data(), bytes.data() + n);
  T back = shoal::serializer<T>::read(r);
  EXPECT_EQ(r.left(), 0U);
  return back;
}

struct plain_pod {
  std::int32_t a;
  double b;
  bool operator==(const plain_pod&) const = default;
};

TEST(serialize, TriviallyCopyableTravelAsTheirBytes) {
  EXPECT_EQ(shoal::serialized_size(std::uint64_t{5}), 8U);
  EXPECT_EQ(round_trip(std::uint64_t{0xdeadbeefcafeULL}), 0xdeadbeefcafeULL);
  EXPECT_EQ(round_trip(-3.25), -3.25);
  EXPECT_EQ(round_trip(plain_pod{7, 1.5}), (plain_pod{7, 1.5}));
}

TEST(serialize, StringsOfLengthZeroOneAndLarge) {
  EXPECT_EQ(shoal::serialized_size(std::string()), 4U);
  EXPECT_EQ(round_trip(std::string()), "");
  EXPECT_EQ(round_trip(std::string("x")), "x");
  std::string big(1 << 20, 'q');
  big[12345] = '\0';  // embedded zero bytes survive
  EXPECT_EQ(round_trip(big), big);
}

TEST(serialize, VectorsOfTriviallyCopyableAndOfStrings) {
  EXPECT_EQ(round_trip(std::vector<int>{}), std::vector<int>{});
  EXPECT_EQ(round_trip(std::vector<int>{1, 2, 3}), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(shoal::serialized_size(std::vector<std::uint16_t>{1, 2, 3}), 4U + 6U);
  const std::vector<std::string> words{"", "a", "bc", std::string(300, 'z')};
  EXPECT_EQ(round_trip(words), words);
}

TEST(serialize, PairsAndTuplesOfSerializableTypes) {
  const std::pair<std::string, std::uint64_t> p{"word", 42};
  EXPECT_EQ(round_trip(p), p);
  const std::tuple<int, std::string, std::vector<double>> t{-1, "t", {0.5, 1.5}};
  EXPECT_EQ(round_trip(t), t);
  const std::pair<std::vector<std::string>, std::tuple<std::string>> nested{{"a", "b"}, {"c"}};
  EXPECT_EQ(round_trip(nested), nested);
}

TEST(serialize, UserTypeWithItsOwnSerializer) {
  labelled_point p{"label", 1.0, -2.0, {3, 4, 5}};
  EXPECT_EQ(round_trip(p), p);
  EXPECT_EQ(round_trip(labelled_point{}), labelled_point{});
}

TEST(serialize, TypesWithoutSerializerAreNotSerializable) {
  static_assert(!shoal::serializable<std::map<int, int>>);
  static_assert(shoal::serializable<std::vector<std::pair<std::string, int>>>);
  static_assert(shoal::serializable<labelled_point>);
}

void read_truncated_string() {
  const char bytes[6] = {10, 0, 0, 0, 'a', 'b'};  // says 10 characters, has 2
  shoal::byte_reader r(bytes, bytes + 6);
  (void)shoal::serializer<std::string>::read(r);
}

TEST(serializeDeathTest, TruncatedRecordNamesWhatWasBeingRead) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      read_truncated_string(), ExitedWithCode(shoal::exit_status::fatal),
      "reading std::string's characters needs 10 more bytes, but its record has only 2 left");
}

// ---- Object channels on one process.

TEST(object_channel, EveryBuiltInAndAUserTypeArriveIntactAndInOrder) {
  shoal_test::run_checked(shoal_test::make_config(2), [] { object_scenarios::exchange(40); });
  const auto& t = object_scenarios::g_totals;
  EXPECT_EQ(t.good, 2 * 40 * 2 * 2);  // two channels, 40 per ordered pair, 2 x 2 pairs
  EXPECT_EQ(t.bad, 0);
  EXPECT_EQ(t.out_of_order, 0);
}

TEST(object_channelDeathTest, ValueLargerThanABufferIsRefusedNamingBothSizes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(2),
                                       [] {
                                         auto ch = shoal::make_object_channel<std::string>(
                                             [](const std::string&) {});
                                         ch.send(1, std::string(20000, 'x'));
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::object_channel::send \\(channel [0-9]+\\): a record of 20008 bytes \\(4-byte "
              "length and 20004 bytes of value\\) does not fit an aggregation buffer of [0-9]+ "
              "bytes; values larger than a buffer are refused, not split");
}

struct lying_size {
  int v = 0;
};

}  // namespace

template <>
struct shoal::serializer<lying_size> {
  static std::size_t size(const lying_size&) { return 2; }  // wrong: write adds 4
  static void write(byte_writer& w, const lying_size& x) { w.put(x.v); }
  static lying_size read(byte_reader& r) { return lying_size{r.get<int>()}; }
};

namespace {

TEST(object_channelDeathTest, SerializerWhoseSizeLiesIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(1),
                                       [] {
                                         auto ch = shoal::make_object_channel<lying_size>(
                                             [](const lying_size&) {});
                                         ch.send(0, lying_size{1});
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "serializer wrote 4 bytes, but its size\\(\\) said 2");
}

TEST(object_channelDeathTest, SendOnADefaultHandleIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(shoal_test::run_to_death(shoal_test::make_config(1),
                                       [] {
                                         shoal::object_channel<std::string> ch;
                                         ch.send(0, "x");
                                       }),
              ExitedWithCode(shoal::exit_status::fatal),
              "shoal::object_channel::send on a default-constructed or closed handle");
}

}  // namespace
