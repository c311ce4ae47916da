// copy_streaming(): the network buffer copy gives the same bytes as memcpy
// and writes nothing outside its destination, on both of its paths (the
// streaming one for aligned copies of a page or more, memcpy otherwise),
// at every size around the 64-byte block and the page threshold and at
// every alignment of source and destination.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "comm/stream_copy.hpp"

namespace {

using shoal::detail::copy_streaming;
using shoal::detail::copy_streams;
using shoal::detail::kStreamMinBytes;

constexpr std::size_t kGuard = 128;
constexpr unsigned char kFill = 0xA5;

// Copies n bytes from offset src_off of a patterned source to offset
// dst_off of a guarded, 64-byte aligned destination; checks the copy and
// that every guard byte (before and after) is untouched.
void check_copy(std::size_t n, std::size_t src_off, std::size_t dst_off) {
  std::vector<unsigned char> src(n + src_off + 64);
  for (std::size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<unsigned char>((i * 131 + 7) ^ (i >> 8));
  std::vector<unsigned char> raw(n + dst_off + 2 * kGuard + 64, kFill);
  auto base = reinterpret_cast<std::uintptr_t>(raw.data());
  unsigned char* aligned = raw.data() + ((64 - base % 64) % 64);
  unsigned char* dst = aligned + kGuard + dst_off;
  copy_streaming(dst, src.data() + src_off, n);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(dst[i], src[src_off + i])
        << "byte " << i << " of " << n << " (src +" << src_off << ", dst +" << dst_off << ")";
  for (unsigned char* p = raw.data(); p < dst; ++p)
    ASSERT_EQ(*p, kFill) << "wrote " << (dst - p) << " bytes before the destination, n " << n;
  for (unsigned char* p = dst + n; p < raw.data() + raw.size(); ++p)
    ASSERT_EQ(*p, kFill) << "wrote " << (p - dst - n) << " bytes past the destination, n " << n;
}

TEST(StreamCopy, SameBytesAsMemcpyAtEverySizeAndAlignment) {
  const std::size_t sizes[] = {0,
                               1,
                               63,
                               64,
                               65,
                               kStreamMinBytes - 64,
                               kStreamMinBytes - 1,
                               kStreamMinBytes,
                               kStreamMinBytes + 1,
                               kStreamMinBytes + 63,
                               kStreamMinBytes + 64,
                               16384,
                               16384 + 13,
                               65472};
  const std::size_t offsets[] = {0, 1, 8, 15, 16, 48};
  for (std::size_t n : sizes)
    for (std::size_t s : offsets)
      for (std::size_t d : offsets) check_copy(n, s, d);
}

TEST(StreamCopy, StreamsOnlyAlignedCopiesOfAPageOrMore) {
  alignas(64) static unsigned char buf[2 * kStreamMinBytes];
#if defined(__SSE2__)
  EXPECT_TRUE(copy_streams(buf, kStreamMinBytes));
  EXPECT_TRUE(copy_streams(buf + 16, 2 * kStreamMinBytes - 16));
#else
  EXPECT_FALSE(copy_streams(buf, kStreamMinBytes));
#endif
  EXPECT_FALSE(copy_streams(buf, kStreamMinBytes - 1));
  EXPECT_FALSE(copy_streams(buf + 8, kStreamMinBytes));
  EXPECT_FALSE(copy_streams(buf + 1, kStreamMinBytes));
}

}  // namespace
