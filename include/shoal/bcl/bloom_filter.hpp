// bloom_filter<T>: BCL's distributed blocked Bloom filter (thesis section
// 6.2): many 64-bit Bloom filters spread over every core. A value hashes to
// one 64-bit word and to k bits inside it, so an insert is ONE remote
// fetch_or and a find ONE remote read, and insert can say, atomically,
// whether the value was already present (k separate atomics could not).
//
//   auto f = shoal::bcl::bloom_filter<std::uint64_t>::make(/*words=*/1 << 20, /*k=*/3);
//   if (f.insert(x) == shoal::bcl::bloom_insert::already_present) ...   // any core
//   shoal::rflush(); shoal::barrier();
//   bool maybe = f.find(y);                  // false: y was never inserted
//   f.destroy();                             // once, when no core uses it any more
//
// Layout: one global_alloc of `words` u64, block-cyclic over the cores
// (word i on core (i * 8 / --block-bytes) mod cores()); the handle is 24
// bytes: copy it to every core.
//
// Semantics. insert(v) sets v's k bits in its word with one fetch_or and
// returns already_present when all k were set before (that is, v or values
// whose bits cover v's were inserted earlier: a false positive is possible,
// a false negative never), otherwise added. Concurrent inserts of one value
// from many cores: exactly one is told added (the first fetch_or sets every
// bit). find(v) is true when all k bits are set: never false for a value
// whose insert returned before the find started (and, under rma, was
// followed by the barrier that ends the insert phase); true for a value
// never inserted with the false-positive rate below.
//
// False positives. With n values in W words, a word holds j values with
// probability Poisson(j; n / W) and j values set a bit with probability
// 1 - (1 - 1/64)^(k j), so the rate is about
//   sum_j Poisson(j; n / W) (1 - (1 - 1/64)^(k j))^k,
// higher than an unblocked filter's (1 - e^(-k n / (64 W)))^k because loads
// vary between words (BCL measured that a blocked filter needs about ln(1/p)
// times the words for the same rate p). tests/bcl_bloom_filter_checks.hpp
// measures it against this formula.
//
// Costs (A, R: bench/results/one_sided.txt):
//   insert             A  (one fetch_or on one word)
//   find               R  (one rget of one word)
//   make               a global_alloc (round trip to rank 0) and a delegate to every
//                      core (zeroes its words)
//   destroy            a global_free
//
// Path (bcl/path.hpp, SHOAL_BCL_PATH): insert and find run one-sided (the
// costs above) or as one delegate to the word's core (D each), which does
// the fetch_or or the read with CPU instructions. make() picks for the
// filter (every copy of the handle follows it), inserts and finds apart:
// forced, or under auto one-sided when A (R) is below D, which it is on
// every backend measured so far (bench/results/bcl_costs.md): a method of
// one operation has nothing to save by delegating. insert_path() and
// find_path() say what it picked; --verbose too.
//
// Concurrency. Inserts are atomic with each other on every backend. A find
// during inserts sees each insert before or after it under direct, shm and
// am; under rma a read racing an atomic on the same word is not defined by
// MPI, so there keep finds out of insert phases (rflush, barrier between)
// or rely on insert's own answer.
//
// Errors (the job ends naming the filter and the cause): 0 words; k outside
// 1..10; any use of a destroyed or default handle (copies made before
// destroy() cannot know).
#pragma once

#include "shoal/bcl/hash_bytes.hpp"
#include "shoal/bcl/path.hpp"
#include "shoal/delegate.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <fmt/format.h>

namespace shoal::bcl {

/// What an insert found.
enum class bloom_insert { added, already_present };

template <class T>
requires std::is_trivially_copyable_v<T>
class bloom_filter {
  static_assert(std::has_unique_object_representations_v<T>,
                "bloom_filter hashes values by their bytes: T must have no padding and no "
                "floating-point members");

 public:
  static constexpr int max_bits_per_value = 10;  // 6 bits of one 64-bit hash each

  /// A handle to nothing (every operation but valid() ends the job).
  bloom_filter() = default;

  /// Makes a filter of `words` 64-bit blocks, k = `bits_per_value` bits set
  /// per value. Any task; blocking (see the costs).
  static bloom_filter make(std::uint64_t words, int bits_per_value = 3) {
    SHOAL_CHECK_ON_CORE("shoal::bcl::bloom_filter::make");
    if (words == 0) shoal::detail::fatal_user("bloom_filter::make: a filter of 0 words");
    if (bits_per_value < 1 || bits_per_value > max_bits_per_value)
      shoal::detail::fatal_user(
          fmt::format("bloom_filter::make: {} bits per value; k must be 1 to {}", bits_per_value,
                      max_bits_per_value));
    bloom_filter f;
    f.words_ = words;
    f.k_ = bits_per_value;
    f.base_ = global_alloc<std::uint64_t>(static_cast<std::int64_t>(words));
    // Each core clears its own blocks (reused heap memory is not zero):
    // they are contiguous in its segment from its first block on.
    const auto bb = static_cast<std::uint64_t>(shoal::detail::g_info.block_bytes);
    const auto n = static_cast<std::uint64_t>(cores());
    const std::uint64_t bytes = ((words * 8 + bb - 1) / bb + n - 1) / n * bb;
    const path_mode mode = path_setting();
    for (int c = 0; c < cores(); ++c) {
      const global_ptr<std::uint64_t> first = f.base_ + static_cast<std::int64_t>(c * bb / 8);
      delegate::call(c, [first, bytes, mode] {
        path_same_everywhere(mode);  // every rank's SHOAL_BCL_PATH
        std::memset(first.local(), 0, bytes);
      });
    }
    f.choose_paths(mode);
    return f;
  }

  /// How insert and find reach the filter's words (bcl/path.hpp).
  bcl::path insert_path() const noexcept { return insert_path_; }
  bcl::path find_path() const noexcept { return find_path_; }

  bool valid() const noexcept { return static_cast<bool>(base_); }
  std::uint64_t words() const noexcept { return words_; }
  int bits_per_value() const noexcept { return k_; }

  /// Sets v's bits; says whether they were all set already. One fetch_or.
  bloom_insert insert(const T& v) {
    check("insert");
    const auto [word, mask] = place(v);
    const std::uint64_t old =
        insert_path_ == bcl::path::delegate
            ? delegate::call(word.core(),
                             [word, mask] {
                               return std::atomic_ref<std::uint64_t>(*word.local()).fetch_or(mask);
                             })
            : fetch_or(word, mask);
    return (old & mask) == mask ? bloom_insert::already_present : bloom_insert::added;
  }

  /// True when v may have been inserted; false when it certainly was not.
  /// One rget.
  bool find(const T& v) {
    check("find");
    const auto [word, mask] = place(v);
    const std::uint64_t bits =
        find_path_ == bcl::path::delegate
            ? delegate::call(word.core(),
                             [word] {
                               return std::atomic_ref<std::uint64_t>(*word.local())
                                   .load(std::memory_order_relaxed);
                             })
            : rget(word);
    return (bits & mask) == mask;
  }

  /// Frees the filter. Once, when no core uses it; this handle becomes
  /// invalid (copies do not know).
  void destroy() {
    check("destroy");
    global_free(base_);
    *this = bloom_filter();
  }

 private:
  struct placement {
    global_ptr<std::uint64_t> word;
    std::uint64_t mask;
  };
  placement place(const T& v) const noexcept {
    const std::uint64_t w = shoal::detail::bcl_hash_bytes(&v, sizeof v) % words_;
    const std::uint64_t bits = shoal::detail::bcl_hash_bytes(&v, sizeof v, 1);
    std::uint64_t mask = 0;
    for (int i = 0; i < k_; ++i) mask |= std::uint64_t{1} << ((bits >> (6 * i)) & 63);
    return {base_ + static_cast<std::int64_t>(w), mask};
  }
  void check(const char* op) const {
    SHOAL_CHECK_ON_CORE("shoal::bcl::bloom_filter");
    if (!valid())
      shoal::detail::fatal_user(fmt::format(
          "bloom_filter::{} on a filter that was destroyed or never made (default-constructed)",
          op));
  }

  void choose_paths(path_mode mode) {
    std::string why = "forced by SHOAL_BCL_PATH";
    if (mode == path_mode::automatic) {
      const op_costs c = path_costs(base_ + static_cast<std::int64_t>(path_probe_word()));
      insert_path_ = choose_path(mode, c.A, c.D);
      find_path_ = choose_path(mode, c.R, c.D);
      why = fmt::format("auto, costs {}: insert A = {:.0f} ns, find R = {:.0f} ns, D = {:.0f} ns",
                        c.source, c.A, c.R, c.D);
    } else {
      insert_path_ = find_path_ = choose_path(mode, 0, 0);
    }
    if (shoal::current_config().verbose)
      fmt::print(stderr,
                 "shoal: bcl bloom_filter({} words, k {}) made on core {}: insert path {}, "
                 "find path {} ({})\n",
                 words_, k_, mycore(), path_name(insert_path_), path_name(find_path_), why);
  }
  // A word of the probe core (path_probe_core), or word 0 when the filter
  // has none there.
  std::uint64_t path_probe_word() const {
    const auto per_block = static_cast<std::uint64_t>(shoal::detail::g_info.block_bytes) / 8;
    const auto w = static_cast<std::uint64_t>(path_probe_core()) * per_block;
    return w < words_ ? w : 0;
  }

  global_ptr<std::uint64_t> base_;  // linear: word i of the filter
  std::uint64_t words_ = 0;
  int k_ = 0;
  bcl::path insert_path_ = bcl::path::onesided;
  bcl::path find_path_ = bcl::path::onesided;
};

}  // namespace shoal::bcl
