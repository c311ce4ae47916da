#include "comm/stream_copy.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace shoal::detail {

bool copy_streams(const void* to, std::size_t n) {
#if defined(__SSE2__)
  return reinterpret_cast<std::uintptr_t>(to) % 16 == 0 && n >= kStreamMinBytes;
#else
  (void)to;
  (void)n;
  return false;
#endif
}

void copy_streaming(void* to, const void* from, std::size_t n) {
#if defined(__SSE2__)
  if (copy_streams(to, n)) {
    auto* dst = static_cast<char*>(to);
    const auto* src = static_cast<const char*>(from);
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
    }
    std::memcpy(dst + i, src + i, n - i);
    _mm_sfence();  // the streamed stores are weakly ordered: done before the send
    return;
  }
#endif
  std::memcpy(to, from, n);
}

}  // namespace shoal::detail
