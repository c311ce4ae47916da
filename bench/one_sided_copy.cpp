// Cost of storing each shared word exactly once (src/memory/one_sided_copy.hpp)
// against memcpy, for the sizes a direct or shm put moves. Not part of the
// build (no runtime needed); compile and run it by hand:
//   g++ -std=c++20 -O2 -I src bench/one_sided_copy.cpp -o one-sided-copy && ./one-sided-copy
// Prints, per size, the median ns per copy of memcpy, of copy_once and of a
// loop of relaxed atomic 8-byte stores (interleaved rounds, the destination
// in cache: the case where the difference is largest), and their ratios to
// memcpy.
#include "memory/one_sided_copy.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

template <class Copy>
double ns_per_copy(char* dst, const char* src, std::size_t len, int reps, Copy copy) {
  const auto t0 = clock_type::now();
  for (int r = 0; r < reps; ++r) {
    copy(dst, src, len);
    asm volatile("" ::"r"(dst) : "memory");  // keep every copy
  }
  return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / reps;
}

}  // namespace

int main() {
  std::printf("%-9s %12s %12s %7s %12s %7s\n", "bytes", "memcpy_ns", "once_ns", "ratio", "words_ns",
              "ratio");
  for (std::size_t len : {16, 48, 128, 256, 1024, 4096, 16384, 65536, 1048576}) {
    std::vector<char> src(len + 64, 7);
    std::vector<char> dst(len + 64);
    char* d = dst.data() + (64 - reinterpret_cast<std::uintptr_t>(dst.data()) % 64);
    const int reps = static_cast<int>(std::max<std::size_t>(20, (1u << 24) / (len + 64)));
    std::vector<double> a;
    std::vector<double> b;
    std::vector<double> w;
    volatile std::size_t n = len;  // the library call, as in the put path
    for (int round = 0; round < 7; ++round) {
      a.push_back(ns_per_copy(d, src.data(), len, reps,
                              [&](char* t, const char* f, std::size_t) { std::memcpy(t, f, n); }));
      // The plain alternative: one relaxed atomic 8-byte store per word.
      w.push_back(ns_per_copy(d, src.data(), len, reps, [](char* t, const char* f, std::size_t l) {
        for (std::size_t i = 0; i + 8 <= l; i += 8) {
          std::uint64_t x;
          std::memcpy(&x, f + i, 8);
          __atomic_store_n(reinterpret_cast<std::uint64_t*>(t + i), x, __ATOMIC_RELAXED);
        }
      }));
      b.push_back(ns_per_copy(d, src.data(), len, reps, [](char* t, const char* f, std::size_t l) {
        shoal::detail::copy_once(t, f, l, shoal::detail::shared_side::dst);
      }));
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    std::sort(w.begin(), w.end());
    std::printf("%-9zu %12.1f %12.1f %6.2fx %12.1f %6.2fx\n", len, a[3], b[3], b[3] / a[3], w[3],
                w[3] / a[3]);
  }
  return 0;
}
