// The copy behind direct and shm rget/rput of more than one word: every
// naturally aligned 8-byte word of the shared side is stored (put) or
// loaded (get) by exactly one instruction.
//
// Why not memcpy: glibc's memcpy stores some bytes twice. Its small-size
// paths copy a head and a tail that overlap (16 to 31 bytes: a 16-byte
// store at the start and another ending at the end; exactly 16 bytes: the
// same 16 bytes twice), and larger sizes end with an overlapping tail
// store. When another core writes a word between the two stores of it, the
// second store undoes that write. checksum_queue hung on exactly this: a pop
// marked a slot free between a push's two stores of the slot's check word,
// the second store brought the old check back, and the next round's push
// waited for ever on a slot that never became free again
// (tests/test_bcl_checksum_race.cpp shows memcpy's double store and checks
// that this copy has none).
//
// How: the bytes before the shared side's first 8-aligned word and after
// its last are moved one byte each (at most 7 at either end); the aligned
// body goes, on x86-64, 32 bytes at a time with aligned AVX loads/stores on
// the shared side where the CPU has AVX and 256 bytes or more remain, then
// 16 bytes at a time with aligned SSE2 ones (each covers whole words and
// stores each byte once; aligned 16-byte accesses are single-copy atomic
// on CPUs with AVX, as Intel and AMD document; a 32-byte one is atomic per
// aligned 8-byte word in practice, and a word torn by it would only fail a
// checksum and be read again), with a relaxed atomic 8-byte store/load for
// an odd word. Elsewhere the body is a loop of relaxed atomic 8-byte
// stores/loads (the builtins std::atomic_ref uses), one per word. The private side (the caller's
// buffer) may have any alignment.
//
// Cost against memcpy (bench/one_sided_copy.cpp, destination in cache,
// medians of 7 interleaved rounds, 3 runs at load 10-15 on 2 threads):
// 0.6-0.9x at 16-48 bytes, 1.6-2.8x from 128 bytes to 16 KiB (2 to 130 ns
// more), 0.8-1.3x from 64 KiB to 1 MiB. A loop of relaxed 8-byte atomic
// stores alone (the other way to store each word once) was 3.6-8x slower
// than memcpy from 128 bytes up: the vector stores keep most of memcpy's
// width.
// The copy is not a synchronisation: ordering comes from rflush()'s fence.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define SHOAL_ONE_SIDED_COPY_SSE2 1
#endif

namespace shoal::detail {

/// Which side of a copy is the shared memory whose words must be touched once.
enum class shared_side { dst, src };

namespace copy_once_impl {
inline void byte(char* to, const char* from) {
  // Atomic byte accesses keep the compiler from merging the loop into a
  // memcpy call (which could store bytes twice again).
  __atomic_store_n(to, __atomic_load_n(from, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
inline void word(char* to, const char* from, shared_side shared) {
  std::uint64_t w;
  if (shared == shared_side::src) {
    w = __atomic_load_n(reinterpret_cast<const std::uint64_t*>(from), __ATOMIC_RELAXED);
    std::memcpy(to, &w, 8);  // private side: any alignment, one 8-byte store
  } else {
    std::memcpy(&w, from, 8);
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(to), w, __ATOMIC_RELAXED);
  }
}
#ifdef SHOAL_ONE_SIDED_COPY_SSE2
// Long bodies on CPUs with AVX: 32 bytes a store (four whole words, each byte
// stored once), from the first 32-aligned word of the shared side. Returns
// where it stopped (a multiple of 32 bytes before `end`).
__attribute__((target("avx"))) inline std::size_t body_avx(char* to, const char* from,
                                                           std::size_t at, std::size_t end,
                                                           shared_side shared) {
  const char* anchor = shared == shared_side::dst ? to : from;
  for (; at < end && reinterpret_cast<std::uintptr_t>(anchor + at) % 32 != 0; at += 8)
    word(to + at, from + at, shared);
  if (shared == shared_side::dst) {
    for (; at + 32 <= end; at += 32)
      _mm256_store_si256(reinterpret_cast<__m256i*>(to + at),
                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + at)));
  } else {
    for (; at + 32 <= end; at += 32)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + at),
                          _mm256_load_si256(reinterpret_cast<const __m256i*>(from + at)));
  }
  return at;
}
inline bool has_avx() {
  static const bool yes = __builtin_cpu_supports("avx");
  return yes;
}
#endif
}  // namespace copy_once_impl

/// Copies `len` bytes from `from` to `to` (not overlapping); the `shared`
/// side's aligned words are each accessed by exactly one instruction.
inline void copy_once(char* to, const char* from, std::size_t len, shared_side shared) {
  using namespace copy_once_impl;
  const char* anchor = shared == shared_side::dst ? to : from;
  std::size_t head = (8 - reinterpret_cast<std::uintptr_t>(anchor) % 8) % 8;
  if (head > len) head = len;
  for (std::size_t i = 0; i < head; ++i) byte(to + i, from + i);
  std::size_t at = head;
  const std::size_t body_end = head + (len - head) / 8 * 8;
#ifdef SHOAL_ONE_SIDED_COPY_SSE2
  if (body_end - at >= 256 && has_avx()) at = body_avx(to, from, at, body_end, shared);
  if (at < body_end && reinterpret_cast<std::uintptr_t>(anchor + at) % 16 != 0) {
    word(to + at, from + at, shared);
    at += 8;
  }
  if (shared == shared_side::dst) {
    for (; at + 16 <= body_end; at += 16)
      _mm_store_si128(reinterpret_cast<__m128i*>(to + at),
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + at)));
  } else {
    for (; at + 16 <= body_end; at += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to + at),
                       _mm_load_si128(reinterpret_cast<const __m128i*>(from + at)));
  }
#endif
  for (; at < body_end; at += 8) word(to + at, from + at, shared);
  for (; at < len; ++at) byte(to + at, from + at);
}

}  // namespace shoal::detail
