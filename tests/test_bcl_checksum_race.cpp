// The checksum_queue hang's cause, checked directly: the copy behind direct
// and shm puts (src/memory/one_sided_copy.hpp) must store every byte of the
// shared side exactly once. glibc's memcpy does not (its small sizes store
// overlapping head and tail pieces), and a pop's "slot free" mark written
// between the two stores of one word was lost to the second.
//
// The instrument counts store instructions per byte without guessing at
// the code: the destination page is read-only, each store faults, the
// SIGSEGV handler poisons the destination bytes (the source's bytes
// complemented), opens the page and single-steps the store (x86 trap
// flag); the SIGTRAP handler counts the bytes that now hold the source's
// value as stored by that instruction, puts the poison it did not
// overwrite back, and closes the page again. x86-64 Linux only.
//
// Each case runs on the test's own thread with no shoal runtime (whose
// SIGSEGV handler reports stack overflows). Tests of the queue itself:
// test_bcl_queues.cpp (ChecksumConcurrentPushPopEachValueOnce).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "../src/memory/one_sided_copy.hpp"

namespace {

#if defined(__x86_64__) && defined(__linux__)

constexpr std::size_t region_max = 1024;

// State shared with the signal handlers (one instrumented copy at a time).
struct watch {
  char* page = nullptr;  // the watched page
  std::size_t page_bytes = 0;
  char* dst = nullptr;  // the destination range inside it
  std::size_t len = 0;
  const char* src = nullptr;
  std::array<char, 1 << 16> before{};    // the page as it was before the store
  std::array<int, region_max> stores{};  // per destination byte
  int stray = 0;                         // bytes outside the range that changed
  int steps = 0;                         // store instructions seen
};
watch g_w;

void on_segv(int, siginfo_t* info, void* uc) {
  auto* a = static_cast<char*>(info->si_addr);
  if (a < g_w.page || a >= g_w.page + g_w.page_bytes) {
    signal(SIGSEGV, SIG_DFL);  // not ours: crash as usual
    return;
  }
  std::memcpy(g_w.before.data(), g_w.page, g_w.page_bytes);
  mprotect(g_w.page, g_w.page_bytes, PROT_READ | PROT_WRITE);
  for (std::size_t i = 0; i < g_w.len; ++i) g_w.dst[i] = static_cast<char>(~g_w.src[i]);
  static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_EFL] |= 0x100;  // trap after one instruction
}

void on_trap(int, siginfo_t*, void* uc) {
  ++g_w.steps;
  for (std::size_t i = 0; i < g_w.page_bytes; ++i) {
    char* b = g_w.page + i;
    const bool in_range = b >= g_w.dst && b < g_w.dst + g_w.len;
    if (in_range) {
      const std::size_t k = static_cast<std::size_t>(b - g_w.dst);
      if (*b == g_w.src[k]) {
        ++g_w.stores[k];  // this instruction stored it; keep the value
        continue;
      }
      if (*b != static_cast<char>(~g_w.src[k])) ++g_w.stray;  // a value from nowhere
      *b = g_w.before[i];  // untouched: the poison goes, the earlier content comes back
    } else if (*b != g_w.before[i]) {
      ++g_w.stray;
      *b = g_w.before[i];
    }
  }
  mprotect(g_w.page, g_w.page_bytes, PROT_READ);
  static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_EFL] &= ~0x100;
}

/// Per destination byte, how many store instructions wrote it when
/// `copy(dst, src, len)` ran with dst at `offset` in a fresh page.
template <class Copy>
std::vector<int> stores_per_byte(std::size_t offset, std::size_t len, std::size_t src_offset,
                                 Copy copy) {
  const auto page_bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* mem = mmap(nullptr, page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(mem, MAP_FAILED);
  std::vector<char> src_buf(len + 16);
  for (std::size_t i = 0; i < src_buf.size(); ++i) src_buf[i] = static_cast<char>(i * 37 + 11);
  g_w.page = static_cast<char*>(mem);
  g_w.page_bytes = page_bytes;
  g_w.dst = g_w.page + offset;
  g_w.len = len;
  g_w.src = src_buf.data() + src_offset;
  g_w.stores.fill(0);
  g_w.stray = 0;
  g_w.steps = 0;
  struct sigaction sa {
  }, old_segv{}, old_trap{};
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sa.sa_sigaction = on_segv;
  sigaction(SIGSEGV, &sa, &old_segv);
  sa.sa_sigaction = on_trap;
  sigaction(SIGTRAP, &sa, &old_trap);
  mprotect(mem, page_bytes, PROT_READ);
  copy(g_w.dst, g_w.src, len);
  mprotect(mem, page_bytes, PROT_READ | PROT_WRITE);
  sigaction(SIGSEGV, &old_segv, nullptr);
  sigaction(SIGTRAP, &old_trap, nullptr);
  EXPECT_EQ(std::memcmp(g_w.dst, g_w.src, len), 0) << "the copy is wrong";
  EXPECT_EQ(g_w.stray, 0) << "a store outside the range, or of a foreign value";
  munmap(mem, page_bytes);
  return {g_w.stores.begin(), g_w.stores.begin() + static_cast<std::ptrdiff_t>(len)};
}

int most(const std::vector<int>& v) {
  int m = 0;
  for (int x : v) m = std::max(m, x);
  return m;
}
int fewest(const std::vector<int>& v) {
  int m = 1 << 30;
  for (int x : v) m = std::min(m, x);
  return m;
}

// The instrument itself: two explicit stores of one word count 2, one
// counts 1 (so a count of 1 below means something).
TEST(bcl_checksum_race, InstrumentCountsStores) {
  const auto twice = [](char* d, const char* s, std::size_t) {
    std::uint64_t w;
    std::memcpy(&w, s, 8);
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(d), w, __ATOMIC_RELAXED);
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(d), w, __ATOMIC_RELAXED);
  };
  const std::vector<int> two = stores_per_byte(64, 8, 0, twice);
  EXPECT_EQ(fewest(two), 2);
  EXPECT_EQ(most(two), 2);
  const auto once = [](char* d, const char* s, std::size_t) {
    std::uint64_t w;
    std::memcpy(&w, s, 8);
    __atomic_store_n(reinterpret_cast<std::uint64_t*>(d), w, __ATOMIC_RELAXED);
  };
  EXPECT_EQ(most(stores_per_byte(64, 8, 0, once)), 1);
  EXPECT_EQ(g_w.steps, 1);
}

// What the queue's push did before the fix: one 16-byte slot {value, check}
// put with the C library's memcpy. On glibc x86-64 every byte of it is stored
// twice; the check only reports it (another libc may differ), and shows
// the instrument sees a library copy's stores.
TEST(bcl_checksum_race, LibcMemcpyOfOneSlot) {
  volatile std::size_t n = 16;  // not a constant: the library call, not an inlined store
  const std::vector<int> c = stores_per_byte(
      64, 16, 0, [&](char* d, const char* s, std::size_t) { std::memcpy(d, s, n); });
  std::printf("memcpy of 16 bytes: each byte stored %d..%d times\n", fewest(c), most(c));
  EXPECT_GE(fewest(c), 1);
}

// The fix: the copy of direct and shm puts stores each destination byte
// exactly once, for lengths 1..520 (the AVX body from 256), every
// destination alignment within a 16-byte line, and a misaligned source too. With memcpy in its
// place this fails (glibc stores overlapping pieces twice).
TEST(bcl_checksum_race, EachWordStoredOnce) {
  int cases = 0;
  for (std::size_t len :
       {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 100, 128, 200, 256, 300, 520})
    for (std::size_t offset = 64; offset < 64 + 16; offset += 1)
      for (std::size_t src_offset : {0, 3}) {
        const std::vector<int> c =
            stores_per_byte(offset, len, src_offset, [](char* d, const char* s, std::size_t l) {
              shoal::detail::copy_once(d, s, l, shoal::detail::shared_side::dst);
            });
        ASSERT_EQ(fewest(c), 1) << "len " << len << " offset " << offset;
        ASSERT_EQ(most(c), 1) << "len " << len << " offset " << offset << " src " << src_offset;
        ++cases;
      }
  EXPECT_EQ(cases, 22 * 16 * 2);
}

#endif

// Gets (shared side = source) copy the right bytes at every alignment:
// every length to 70, then lengths through the AVX body (256 and up) at
// every offset within a 32-byte line.
TEST(bcl_checksum_race, GetsCopyEveryAlignment) {
  alignas(32) std::array<char, 1100> from{};
  for (std::size_t i = 0; i < from.size(); ++i) from[i] = static_cast<char>(i * 13 + 5);
  std::vector<std::size_t> lengths;
  for (std::size_t len = 0; len <= 70; ++len) lengths.push_back(len);
  for (std::size_t len : {255, 256, 257, 263, 288, 300, 511, 512, 520, 777, 1000})
    lengths.push_back(len);
  for (std::size_t len : lengths)
    for (std::size_t off = 0; off < 32; ++off)
      for (std::size_t to_off : {0, 5}) {
        std::array<char, 1040> to{};
        shoal::detail::copy_once(to.data() + to_off, from.data() + off, len,
                                 shoal::detail::shared_side::src);
        ASSERT_EQ(std::memcmp(to.data() + to_off, from.data() + off, len), 0) << len << " " << off;
        for (std::size_t i = 0; i < to_off; ++i) ASSERT_EQ(to[i], 0);
        for (std::size_t i = to_off + len; i < to.size(); ++i) ASSERT_EQ(to[i], 0);
      }
}

}  // namespace
