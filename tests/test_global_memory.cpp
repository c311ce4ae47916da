// Global memory: global_ptr (2D and linear), the block-cyclic distribution,
// global_alloc/global_free, delegate operations, async delegates under load,
// and forall over arrays and index ranges.
#include <atomic>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "test_support.hpp"

namespace {

using shoal_test::cores_test;
using shoal_test::padded_counter;
constexpr auto relaxed = std::memory_order_relaxed;

// ------------------------------------------------------------- global_ptr

class global_ptrs : public cores_test {};

TEST_P(global_ptrs, TwoDimensionalPointers) {
  bool ok_core = false;
  bool ok_local = false;
  bool ok_arith = false;
  bool ok_compare = false;
  bool ok_remote_core = false;
  std::int64_t distance = 0;
  run([&] {
    std::int64_t data[10] = {};
    auto p = shoal::make_global(&data[0]);
    ok_core = p.core() == shoal::mycore() && !p.is_linear();
    ok_local = p.local() == &data[0];
    auto q = p + 7;
    ok_arith = q.local() == &data[7] && (q - 2).local() == &data[5] && q.core() == p.core();
    ++q;
    --q;
    q -= 3;
    distance = q - p;
    ok_compare = p < q && q > p && p != q && p == shoal::make_global(&data[0]) && p + 4 == q &&
                 static_cast<bool>(p) && !static_cast<bool>(shoal::global_ptr<int>());
    // A 2D pointer made for another core names that core.
    const int other = shoal::cores() - 1;
    auto r = shoal::global_ptr<std::int64_t>::make_2d(other, &data[3]);
    ok_remote_core = r.core() == other && r.local() == &data[3];
  });
  EXPECT_TRUE(ok_core);
  EXPECT_TRUE(ok_local);
  EXPECT_TRUE(ok_arith);
  EXPECT_EQ(distance, 4);
  EXPECT_TRUE(ok_compare);
  EXPECT_TRUE(ok_remote_core);
}

TEST_P(global_ptrs, LinearArrayDistributionIsBlockCyclic) {
  constexpr std::int64_t n = 1000;
  std::vector<int> owner(n, -1);
  std::vector<std::int64_t> address(n, 0);
  std::int64_t block_bytes = 0;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(n);
    block_bytes = shoal::current_config().block_bytes;
    for (std::int64_t i = 0; i < n; ++i) {
      owner[static_cast<std::size_t>(i)] = (a + i).core();
      address[static_cast<std::size_t>(i)] = static_cast<std::int64_t>((a + i).linear_address());
    }
    shoal::global_free(a);
  });
  EXPECT_EQ(block_bytes, 64);
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(owner[static_cast<std::size_t>(i)], (i * 8 / block_bytes) % ncores())
        << "element " << i;
    if (i > 0) {
      EXPECT_EQ(address[static_cast<std::size_t>(i)] - address[static_cast<std::size_t>(i - 1)], 8);
    }
  }
}

TEST_P(global_ptrs, LinearLocalAddressesAreDistinctAndPerCoreContiguous) {
  // local() of elements owned by one core lie in that core's segment: the
  // elements of consecutive blocks of a core are consecutive there.
  constexpr std::int64_t n = 4096;
  std::vector<std::uintptr_t> local(n);
  std::vector<int> owner(n);
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(n);
    for (std::int64_t i = 0; i < n; ++i) {
      local[static_cast<std::size_t>(i)] = reinterpret_cast<std::uintptr_t>((a + i).local());
      owner[static_cast<std::size_t>(i)] = (a + i).core();
    }
    shoal::global_free(a);
  });
  std::set<std::uintptr_t> distinct(local.begin(), local.end());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(n)) << "two elements share an address";
  for (int c = 0; c < ncores(); ++c) {
    std::uintptr_t prev = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      if (owner[static_cast<std::size_t>(i)] != c) continue;
      if (prev != 0) {
        EXPECT_EQ(local[static_cast<std::size_t>(i)] - prev, 8u) << "element " << i;
      }
      prev = local[static_cast<std::size_t>(i)];
    }
  }
}

TEST_P(global_ptrs, ArithmeticAcrossBlockBoundaries) {
  bool ok = true;
  std::vector<int> cores_seen;
  run([&] {
    auto a = shoal::global_alloc<std::int32_t>(1000);  // 16 per 64-byte block
    auto p = a + 15;                                   // last of block 0
    auto q = p + 1;                                    // first of block 1
    ok &= p.core() == 0;
    ok &= q.core() == 1 % shoal::cores();
    ok &= q - p == 1 && (q - 1) == p && (a + 16) == q;
    ok &= (a + 16 * shoal::cores()).core() == 0;  // wraps around to core 0
    ok &= (a + 999) - a == 999;
    ok &= (a + 999) - 999 == a;
    auto r = a + 500;
    r -= 250;
    ok &= r == a + 250;
    for (int k = 0; k < 8; ++k) cores_seen.push_back((a + 16 * k + 3).core());
    shoal::global_free(a);
  });
  EXPECT_TRUE(ok);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(cores_seen[static_cast<std::size_t>(k)], k % ncores());
}

TEST_P(global_ptrs, ToStringFmtAndStream) {
  std::string null_text, linear_text, linear_fmt, linear_stream, twod_text, twod_fmt;
  std::uint64_t linear_addr = 0;
  std::uintptr_t raw = 0;
  int linear_core = -1;
  run([&] {
    null_text = shoal::global_ptr<int>().to_string();
    auto a = shoal::global_alloc<std::int64_t>(64);
    auto p = a + 9;  // second block: core 1 % cores
    linear_addr = p.linear_address();
    linear_core = p.core();
    linear_text = p.to_string();
    linear_fmt = fmt::format("{}", p);
    std::ostringstream os;
    os << p;
    linear_stream = os.str();
    int x = 0;
    auto g = shoal::make_global(&x);
    raw = reinterpret_cast<std::uintptr_t>(&x);
    twod_text = g.to_string();
    twod_fmt = fmt::format("{}", g);
    shoal::global_free(a);
  });
  EXPECT_EQ(null_text, "global_ptr(null)");
  EXPECT_EQ(linear_core, 1 % ncores());
  EXPECT_EQ(linear_text,
            fmt::format("global_ptr(linear {:#x} on core {})", linear_addr, 1 % ncores()));
  EXPECT_EQ(linear_fmt, linear_text);
  EXPECT_EQ(linear_stream, linear_text);
  EXPECT_EQ(twod_text, fmt::format("global_ptr(core 0, {:#x})", raw));
  EXPECT_EQ(twod_fmt, twod_text);
}

TEST_P(global_ptrs, ReinterpretKeepsTheAddress) {
  bool ok = false;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(16);
    auto b = (a + 3).reinterpret<std::int32_t>();
    ok = b.bits() == (a + 3).bits() && (b + 2).reinterpret<std::int64_t>() == a + 4 &&
         shoal::global_ptr<std::int64_t>::from_bits(a.bits()) == a;
    shoal::global_free(a);
  });
  EXPECT_TRUE(ok);
}

SHOAL_TEST_CORES(global_ptrs);

class block_size : public cores_test {};

TEST_P(block_size, ConfiguredBlockSizeChangesTheDistribution) {
  constexpr std::int64_t n = 1000;
  shoal::config cfg = config();
  cfg.block_bytes = 128;
  std::vector<int> owner(n, -1);
  std::vector<int> home(n, -1);
  run(cfg, [&] {
    auto a = shoal::global_alloc<std::int64_t>(n);
    for (std::int64_t i = 0; i < n; ++i) owner[static_cast<std::size_t>(i)] = (a + i).core();
    int* h = home.data();
    // Grain 1: one task per block run (see forall_loops.DefaultGrainRunsOnlyHomeElements).
    shoal::forall(
        a, n, [h](std::int64_t i, std::int64_t&) { h[i] = shoal::mycore(); }, 1);
    shoal::global_free(a);
  });
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(owner[static_cast<std::size_t>(i)], (i * 8 / 128) % ncores()) << i;
    EXPECT_EQ(home[static_cast<std::size_t>(i)], owner[static_cast<std::size_t>(i)]) << i;
  }
}

SHOAL_TEST_CORES(block_size);

// ---------------------------------------------------- global_alloc / free

class global_heap_alloc : public cores_test {};

TEST_P(global_heap_alloc, FreedRangesAreReusedAndCoalesced) {
  std::uint64_t a1 = 0, a2 = 0, b = 0, c = 0, d = 0, e = 0, f = 0;
  bool distinct = false;
  run([&] {
    auto x = shoal::global_alloc<std::int64_t>(1000);
    a1 = x.bits();
    shoal::global_free(x);
    auto y = shoal::global_alloc<std::int64_t>(1000);
    a2 = y.bits();  // same size again: same place
    auto z = shoal::global_alloc<std::int64_t>(1000);
    auto w = shoal::global_alloc<std::int64_t>(1000);
    distinct = y != z && z != w && y != w;
    b = z.bits();
    shoal::global_free(y);
    shoal::global_free(z);
    // y and z coalesce: an array of both sizes fits where y was.
    auto big = shoal::global_alloc<std::int64_t>(2000);
    c = big.bits();
    auto small = shoal::global_alloc<std::int64_t>(10);
    d = small.bits();
    shoal::global_free(big);
    shoal::global_free(small);
    shoal::global_free(w);
    auto again = shoal::global_alloc<std::int64_t>(1);
    e = again.bits();
    shoal::global_free(again);
    auto zero = shoal::global_alloc<std::int64_t>(0);  // allowed; still a distinct allocation
    f = zero.bits();
    shoal::global_free(zero);
  });
  EXPECT_EQ(a1, a2);
  EXPECT_TRUE(distinct);
  EXPECT_NE(b, a1);
  EXPECT_EQ(c, a1) << "freed neighbours did not coalesce";
  EXPECT_NE(d, c);
  EXPECT_EQ(e, a1) << "after freeing everything the heap starts over";
  EXPECT_EQ(f, a1);
}

TEST_P(global_heap_alloc, AllocationsDoNotOverlap) {
  constexpr int arrays = 20;
  std::int64_t corrupt = 0;
  run([&] {
    std::vector<shoal::global_ptr<std::int64_t>> as;
    for (int k = 0; k < arrays; ++k) {
      const std::int64_t n = 100 + 37 * k;
      auto a = shoal::global_alloc<std::int64_t>(n);
      shoal::forall(a, n, [k](std::int64_t i, std::int64_t& x) { x = k * 100000 + i; });
      as.push_back(a);
    }
    std::atomic<std::int64_t> bad{0};
    for (int k = 0; k < arrays; ++k) {
      const std::int64_t n = 100 + 37 * k;
      auto* b = &bad;
      shoal::forall(as[static_cast<std::size_t>(k)], n, [k, b](std::int64_t i, std::int64_t& x) {
        if (x != k * 100000 + i) b->fetch_add(1);
      });
    }
    corrupt = bad.load();
    for (auto a : as) shoal::global_free(a);
  });
  EXPECT_EQ(corrupt, 0);
}

SHOAL_TEST_CORES(global_heap_alloc);

// -------------------------------------------------------------- delegates

class delegates : public cores_test {};

TEST_P(delegates, ReadWriteCasFetchAddCallOnEveryCore) {
  struct result {
    std::int64_t read_back = 0, old1 = 0, old2 = 0, final_value = 0;
    bool cas_ok = false, cas_fail = true;
    int call_core = -1;
  };
  std::vector<result> results(static_cast<std::size_t>(ncores()));
  int local_calls = 0;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(8 * shoal::cores());
    for (int c = 0; c < shoal::cores(); ++c) {
      const auto p = a + 8 * c;  // first element of block c: on core c
      auto& r = results[static_cast<std::size_t>(c)];
      shoal::delegate::write(p, std::int64_t{100 + c});
      r.read_back = shoal::delegate::read(p);
      r.old1 = shoal::delegate::fetch_add(p, std::int64_t{5});
      r.cas_ok = shoal::delegate::compare_and_swap(p, std::int64_t{105 + c}, std::int64_t{7});
      r.cas_fail = shoal::delegate::compare_and_swap(p, std::int64_t{105 + c}, std::int64_t{8});
      r.old2 = shoal::delegate::fetch_add(p, std::int64_t{-2});
      r.final_value = shoal::delegate::read(p);
      r.call_core = shoal::delegate::call(p.core(), [] { return shoal::mycore(); });
    }
    // A void call and a call on the calling core (no message).
    int* lc = &local_calls;
    shoal::delegate::call(0, [lc] { ++*lc; });
    shoal::delegate::call(shoal::cores() - 1, [] {});
    shoal::global_free(a);
  });
  for (int c = 0; c < ncores(); ++c) {
    const auto& r = results[static_cast<std::size_t>(c)];
    EXPECT_EQ(r.read_back, 100 + c);
    EXPECT_EQ(r.old1, 100 + c);
    EXPECT_TRUE(r.cas_ok);
    EXPECT_FALSE(r.cas_fail);
    EXPECT_EQ(r.old2, 7);
    EXPECT_EQ(r.final_value, 5);
    EXPECT_EQ(r.call_core, c);
  }
  EXPECT_EQ(local_calls, 1);
}

TEST_P(delegates, DelegatesOnTwoDimensionalPointers) {
  std::int64_t seen = 0;
  std::int64_t after = 0;
  run([&] {
    // A counter living on the last core's stack, reached through a 2D pointer.
    auto pf_pair = shoal::make_promise_pair<std::uint64_t>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    shoal::send(shoal::cores() - 1, [p] {
      shoal::spawn([p] {
        std::int64_t counter = 41;
        p.set_value(shoal::make_global(&counter).bits());
        // Stay alive until core 0 has written 50 through the pointer.
        while (counter != 50) shoal::yield();
      });
    });
    const auto g = shoal::global_ptr<std::int64_t>::from_bits(f.get());
    seen = shoal::delegate::fetch_add(g, std::int64_t{1});
    shoal::delegate::write(g, std::int64_t{50});
    after = 50;
  });
  EXPECT_EQ(seen, 41);
  EXPECT_EQ(after, 50);
}

// 10^7 (10^6 at four cores on this two-core machine) fire-and-forget adds
// to random elements of a 2^16 array from every core.
struct histogram_case {
  int cores;
  std::int64_t updates;
};

class async_add_histogram : public ::testing::TestWithParam<histogram_case> {
 protected:
  void TearDown() override {  // NOLINT(readability-identifier-naming): gtest
    if (shoal::initialized()) shoal::finalize();
  }
};

constexpr std::int64_t table_size = 1 << 16;

std::uint64_t seed_of(int core) {
  return 0x1234567ULL + static_cast<std::uint64_t>(core) * 1000003ULL;
}

TEST_P(async_add_histogram, MatchesASequentialHistogram) {
  const histogram_case hc = GetParam();
  const std::int64_t per_core = hc.updates / hc.cores;
  std::vector<std::int64_t> got(table_size, -1);
  shoal_test::run_checked(
      shoal_test::make_config(hc.cores),
      [&] {
        auto table = shoal::global_alloc<std::int64_t>(table_size);
        // One process: local() of any element is valid on every core of it.
        for (std::int64_t i = 0; i < table_size; ++i) *(table + i).local() = 0;
        shoal::on_all_cores([table, per_core] {
          shoal_test::splitmix64 rng(seed_of(shoal::mycore()));
          for (std::int64_t k = 0; k < per_core; ++k) {
            const std::uint64_t r = rng.next();
            const auto index = static_cast<std::int64_t>(r & (table_size - 1));
            const auto inc = static_cast<std::int64_t>((r >> 32) % 7) + 1;
            shoal::delegate::async_add(table + index, inc);
          }
        });
        shoal::default_gce().wait();
        for (std::int64_t i = 0; i < table_size; ++i)
          got[static_cast<std::size_t>(i)] = *(table + i).local();
        shoal::global_free(table);
      },
      std::chrono::seconds(240));
  std::vector<std::int64_t> expected(table_size, 0);
  for (int c = 0; c < hc.cores; ++c) {
    shoal_test::splitmix64 rng(seed_of(c));
    for (std::int64_t k = 0; k < per_core; ++k) {
      const std::uint64_t r = rng.next();
      expected[r & (table_size - 1)] += static_cast<std::int64_t>((r >> 32) % 7) + 1;
    }
  }
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < table_size; ++i)
    if (got[static_cast<std::size_t>(i)] != expected[static_cast<std::size_t>(i)]) ++wrong;
  EXPECT_EQ(wrong, 0) << "elements differing from the sequential histogram";
}

INSTANTIATE_TEST_SUITE_P(Updates, async_add_histogram,
                         ::testing::Values(histogram_case{1, 10'000'000},
                                           histogram_case{2, 10'000'000},
                                           histogram_case{4, 1'000'000}),
                         [](const ::testing::TestParamInfo<histogram_case>& info) {
                           return "cores" + std::to_string(info.param.cores) + "_updates" +
                                  std::to_string(info.param.updates);
                         });

TEST_P(delegates, AsyncWriteAndOwnGce) {
  constexpr std::int64_t n = 10'000;
  std::int64_t mismatches = -1;
  run([&] {
    shoal::global_completion_event gce;
    auto a = shoal::global_alloc<std::int64_t>(n);
    for (std::int64_t i = 0; i < n; ++i) shoal::delegate::async_write(a + i, i * i, gce);
    gce.wait();
    std::atomic<std::int64_t> bad{0};
    auto* b = &bad;
    shoal::forall(a, n, [b](std::int64_t i, std::int64_t& x) {
      if (x != i * i) b->fetch_add(1);
    });
    mismatches = bad.load();
    shoal::global_free(a);
  });
  EXPECT_EQ(mismatches, 0);
}

TEST_P(delegates, CompareAndSwapCounterUnderContention) {
  constexpr int tasks_per_core = 16;
  constexpr int increments = 25;
  std::int64_t final_value = -1;
  std::atomic<std::int64_t> retries{0};
  run([&] {
    auto counter = shoal::global_alloc<std::int64_t>(1);  // lives on core 0
    shoal::delegate::write(counter, std::int64_t{0});
    auto* rt = &retries;
    shoal::on_all_cores([counter, rt] {
      shoal::completion_event done(tasks_per_core);
      auto* d = &done;
      for (int t = 0; t < tasks_per_core; ++t) {
        shoal::spawn([counter, rt, d] {
          for (int k = 0; k < increments; ++k) {
            for (;;) {
              const std::int64_t v = shoal::delegate::read(counter);
              if (shoal::delegate::compare_and_swap(counter, v, v + 1)) break;
              rt->fetch_add(1, relaxed);
            }
          }
          d->complete();
        });
      }
      done.wait();
    });
    final_value = shoal::delegate::read(counter);
    shoal::global_free(counter);
  });
  EXPECT_EQ(final_value, std::int64_t{tasks_per_core} * increments * ncores());
  RecordProperty("cas_retries", std::to_string(retries.load()));
}

SHOAL_TEST_CORES(delegates);

// ----------------------------------------------------------------- forall

class forall_loops : public cores_test {};

TEST_P(forall_loops, EachElementOnceOnItsHomeCore) {
  constexpr std::int64_t n = 100'003;  // not a multiple of a block
  std::vector<std::atomic<std::uint8_t>> touched(n);
  std::vector<int> ran_on(n, -1);
  std::vector<int> home(n, -2);
  std::atomic<std::int64_t> wrong_element{0};
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(n);
    for (std::int64_t i = 0; i < n; ++i) home[static_cast<std::size_t>(i)] = (a + i).core();
    struct ctx {
      std::atomic<std::uint8_t>* touched;
      int* ran_on;
      std::atomic<std::int64_t>* wrong;
      shoal::global_ptr<std::int64_t> base;
    };
    ctx cx{touched.data(), ran_on.data(), &wrong_element, a};
    const ctx* c = &cx;
    shoal::forall(
        a, n,
        [c](std::int64_t i, std::int64_t& x) {
          c->touched[i].fetch_add(1, relaxed);
          c->ran_on[i] = shoal::mycore();
          if (&x != (c->base + i).local()) c->wrong->fetch_add(1);
        },
        100);
    shoal::global_free(a);
  });
  std::int64_t not_once = 0;
  std::int64_t not_home = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    not_once += touched[static_cast<std::size_t>(i)].load() != 1;
    not_home += ran_on[static_cast<std::size_t>(i)] != home[static_cast<std::size_t>(i)];
  }
  EXPECT_EQ(not_once, 0);
  EXPECT_EQ(not_home, 0);
  EXPECT_EQ(wrong_element.load(), 0);
}

TEST_P(forall_loops, DefaultGrainRunsOnlyHomeElements) {
  // Minimal form of the grain-merging bug: with more cores than one, the
  // default grain (1024) merges the runs of several blocks of one core into
  // one index range [first, last) that also spans other cores' blocks.
  constexpr std::int64_t n = 64;  // 8 blocks of 8 elements
  std::vector<std::atomic<int>> calls(n);
  std::atomic<std::int64_t> off_home{0};
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(n);
    struct ctx {
      std::atomic<int>* calls;
      std::atomic<std::int64_t>* off_home;
      shoal::global_ptr<std::int64_t> base;
    };
    ctx cx{calls.data(), &off_home, a};
    const ctx* c = &cx;
    shoal::forall(a, n, [c](std::int64_t i, std::int64_t&) {
      c->calls[i].fetch_add(1);
      if ((c->base + i).core() != shoal::mycore()) c->off_home->fetch_add(1);
    });
    shoal::global_free(a);
  });
  std::string counts;
  for (const auto& k : calls) counts += std::to_string(k.load());
  EXPECT_EQ(counts, std::string(n, '1')) << "calls per element";
  EXPECT_EQ(off_home.load(), 0) << "iterations run off the element's home core";
}

TEST_P(forall_loops, UnalignedBaseAndSmallCounts) {
  // Starting mid-block and covering fewer elements than there are cores.
  struct range {
    std::int64_t offset;
    std::int64_t n;
  };
  const std::vector<range> ranges{{3, 1}, {3, 2}, {5, 13}, {7, 1000},
                                  {8, 8}, {0, 1}, {0, 0},  {11, 4085}};
  std::vector<std::int64_t> bad(ranges.size(), -1);
  run([&] {
    constexpr std::int64_t total = 4096;
    auto a = shoal::global_alloc<std::int32_t>(total);
    for (std::size_t r = 0; r < ranges.size(); ++r) {
      std::vector<std::atomic<std::uint8_t>> hits(total);
      std::atomic<std::int64_t> off_home{0};
      struct ctx {
        std::atomic<std::uint8_t>* hits;
        std::atomic<std::int64_t>* off_home;
        shoal::global_ptr<std::int32_t> base;
      };
      const auto base = a + ranges[r].offset;
      ctx cx{hits.data(), &off_home, base};
      const ctx* c = &cx;
      shoal::forall(
          base, ranges[r].n,
          [c](std::int64_t i, std::int32_t&) {
            c->hits[i].fetch_add(1, relaxed);
            if ((c->base + i).core() != shoal::mycore()) c->off_home->fetch_add(1);
          },
          3);
      std::int64_t b = off_home.load();
      for (std::int64_t i = 0; i < total; ++i)
        b += hits[static_cast<std::size_t>(i)].load() != (i < ranges[r].n ? 1 : 0);
      bad[r] = b;
    }
    shoal::global_free(a);
  });
  for (std::size_t r = 0; r < ranges.size(); ++r)
    EXPECT_EQ(bad[r], 0) << "offset " << ranges[r].offset << " n " << ranges[r].n;
}

constexpr std::int64_t suspend_n = 3000;

TEST_P(forall_loops, BodiesMaySuspend) {
  constexpr std::int64_t n = suspend_n;
  std::int64_t sum = -1;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(n);
    auto b = shoal::global_alloc<std::int64_t>(n);
    shoal::forall(
        b, n, [](std::int64_t i, std::int64_t& x) { x = i; }, 1);
    // Each body does a blocking read of an element on another core.
    shoal::forall(
        a, n,
        [b](std::int64_t i, std::int64_t& x) {
          x = shoal::delegate::read(b + (suspend_n - 1 - i)) * 2;
        },
        4);
    std::atomic<std::int64_t> s{0};
    auto* sp = &s;
    shoal::forall(
        a, n, [sp](std::int64_t, std::int64_t& x) { sp->fetch_add(x); }, 1);
    sum = s.load();
    shoal::global_free(a);
    shoal::global_free(b);
  });
  EXPECT_EQ(sum, n * (n - 1));
}

constexpr std::int64_t range_begin = -500;
constexpr std::int64_t range_end = 100'000;

TEST_P(forall_loops, IndexRangeEachOnceSpreadOverCores) {
  constexpr std::int64_t begin = range_begin;
  constexpr std::int64_t end = range_end;
  std::vector<std::atomic<std::uint8_t>> hits(end - begin);
  std::vector<padded_counter> per_core(static_cast<std::size_t>(ncores()));
  run([&] {
    auto* h = hits.data();
    auto* pc = per_core.data();
    shoal::forall(
        begin, end,
        [h, pc](std::int64_t i) {
          h[i - range_begin].fetch_add(1, relaxed);
          pc[shoal::mycore()].value.fetch_add(1, relaxed);
        },
        64);
    shoal::forall(7, 7, [h](std::int64_t) { h[0].fetch_add(100); });  // empty
  });
  std::int64_t not_once = 0;
  for (const auto& h : hits) not_once += h.load() != 1;
  EXPECT_EQ(not_once, 0);
  std::int64_t total = 0;
  for (const auto& c : per_core) {
    total += c.value.load();
    // Core c gets the c-th share (it may be stolen within the process, but
    // every core starts its own share, so no core is left without work).
  }
  EXPECT_EQ(total, end - begin);
}

SHOAL_TEST_CORES(forall_loops);

}  // namespace
