// Messages and typed channels: exactly-once delivery on the right core,
// per-pair FIFO order, payload integrity, channel close/reopen, flush(),
// handlers that send, and back-pressure under a flood.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal_test::cores_test;
using shoal_test::padded_counter;
constexpr auto relaxed = std::memory_order_relaxed;

// ------------------------------------------------------ closure messages

class closure_messages : public cores_test {
 public:
  /// run() for helpers outside the test bodies.
  template <class F>
  void run_with(const shoal::config& cfg, F&& body) {
    run(cfg, body);
  }
};

struct pair_counts {
  int cores = 0;
  std::vector<padded_counter> count;  // [src * cores + dst]
  std::atomic<std::int64_t> wrong_core{0};
  explicit pair_counts(int n) : cores(n), count(static_cast<std::size_t>(n * n)) {}
};

TEST_P(closure_messages, EveryCoreToEveryCoreRunsOnceThere) {
  constexpr int rounds = 50;
  pair_counts pc(ncores());
  run([&] {
    auto* p = &pc;
    for (int r = 0; r < rounds; ++r) {
      shoal::on_all_cores([p] {
        const int src = shoal::mycore();
        for (int dst = 0; dst < shoal::cores(); ++dst) {
          shoal::send(dst, [p, src, dst] {
            if (shoal::mycore() != dst) p->wrong_core.fetch_add(1);
            p->count[static_cast<std::size_t>(src * p->cores + dst)].value.fetch_add(1, relaxed);
          });
        }
      });
    }
  });
  EXPECT_EQ(pc.wrong_core.load(), 0);
  for (int i = 0; i < ncores() * ncores(); ++i)
    EXPECT_EQ(pc.count[static_cast<std::size_t>(i)].value.load(), rounds) << "pair " << i;
}

struct fifo_state {
  int cores = 0;
  std::vector<std::int64_t> expected;      // [src * cores + dst], touched only on dst
  std::vector<padded_counter> violations;  // per dst
  std::atomic<std::int64_t> handled{0};
  explicit fifo_state(int n)
      : cores(n),
        expected(static_cast<std::size_t>(n * n), 0),
        violations(static_cast<std::size_t>(n)) {}
};

void fifo_round(fifo_state* st, std::int64_t per_pair) {
  const int src = shoal::mycore();
  // Interleave destinations so every pair's buffer fills and flushes many times.
  for (std::int64_t seq = 0; seq < per_pair; ++seq) {
    for (int dst = 0; dst < shoal::cores(); ++dst) {
      shoal::send(dst, [st, src, seq] {
        const int me = shoal::mycore();
        std::int64_t& exp = st->expected[static_cast<std::size_t>(src * st->cores + me)];
        if (exp != seq) st->violations[static_cast<std::size_t>(me)].value.fetch_add(1, relaxed);
        exp = seq + 1;
        st->handled.fetch_add(1, relaxed);
      });
    }
  }
}

void check_fifo(const fifo_state& st, int cores, std::int64_t per_pair) {
  EXPECT_EQ(st.handled.load(), per_pair * cores * cores);
  for (int c = 0; c < cores; ++c)
    EXPECT_EQ(st.violations[static_cast<std::size_t>(c)].value.load(), 0)
        << "out of order on core " << c;
  for (std::int64_t e : st.expected) EXPECT_EQ(e, per_pair);
}

/// Every core sends per_pair messages to every core with `round` under
/// `cfg`; each receiver checks the order per sender.
template <class Round>
void run_fifo(closure_messages& t, const shoal::config& cfg, std::int64_t per_pair, Round round) {
  fifo_state st(cfg.cores);
  t.run_with(cfg, [&] {
    auto* s = &st;
    shoal::on_all_cores([s, per_pair, round] { round(s, per_pair); });
  });
  check_fifo(st, cfg.cores, per_pair);
}

/// 256-byte buffers, 4 per core: constant flushing on size and waiting for
/// free buffers.
shoal::config tiny_buffers(shoal::config cfg) {
  cfg.aggregation_bytes = 256;
  cfg.buffers_per_core = 4;
  return cfg;
}

TEST_P(closure_messages, PerPairFifoOrder) { run_fifo(*this, config(), 50'000, fifo_round); }

TEST_P(closure_messages, PerPairFifoOrderWithTinyBuffersAndBackPressure) {
  // Every 24 messages a sender waits for a receiver; when the receiver's
  // thread has no CPU (more cores than CPUs, or a parallel ctest) that wait
  // lasts an OS time slice, so keep the count modest.
  run_fifo(*this, tiny_buffers(config()), 2'000, fifo_round);
}

// The handler of fifo_round, for a closure that also carries `pad` bytes.
template <std::size_t Pad>
void fifo_round_mixed_send(fifo_state* st, int src, int dst, std::int64_t seq) {
  std::uint8_t pad[Pad] = {};
  pad[0] = static_cast<std::uint8_t>(seq);
  shoal::send(dst, [st, src, seq, pad] {
    const int me = shoal::mycore();
    std::int64_t& exp = st->expected[static_cast<std::size_t>(src * st->cores + me)];
    const bool intact = pad[0] == static_cast<std::uint8_t>(seq);
    if (exp != seq || !intact)
      st->violations[static_cast<std::size_t>(me)].value.fetch_add(1, relaxed);
    exp = seq + 1;
    st->handled.fetch_add(1, relaxed);
  });
}

// Like fifo_round, with three closure types (and sizes) in runs of 1 to 7
// messages, so that runs of one type start and end inside buffers and across
// buffer boundaries.
void fifo_round_mixed(fifo_state* st, std::int64_t per_pair) {
  const int src = shoal::mycore();
  for (std::int64_t seq = 0; seq < per_pair; ++seq) {
    for (int dst = 0; dst < shoal::cores(); ++dst) {
      const std::int64_t run = seq / (1 + seq % 7);
      if (run % 3 == 0) {
        fifo_round_mixed_send<1>(st, src, dst, seq);
      } else if (run % 3 == 1) {
        fifo_round_mixed_send<20>(st, src, dst, seq);
      } else {
        fifo_round_mixed_send<60>(st, src, dst, seq);
      }
    }
  }
}

TEST_P(closure_messages, PerPairFifoOrderAcrossClosureTypes) {
  run_fifo(*this, config(), 20'000, fifo_round_mixed);
}

TEST_P(closure_messages, PerPairFifoOrderAcrossClosureTypesWithTinyBuffers) {
  run_fifo(*this, tiny_buffers(config()), 2'000, fifo_round_mixed);
}

template <std::size_t N>
struct blob {
  std::uint8_t bytes[N];
};

TEST_P(closure_messages, ClosuresOfManySizesArriveIntact) {
  // Payloads of 1..240 bytes plus two pointers: 17..256-byte closures.
  std::atomic<std::int64_t> ok{0};
  std::atomic<std::int64_t> bad{0};
  std::int64_t sent = 0;
  run([&] {
    auto* o = &ok;
    auto* b = &bad;
    auto send_blob = [&](auto tag) {
      constexpr std::size_t n = decltype(tag)::value;
      for (int dst = 0; dst < shoal::cores(); ++dst) {
        blob<n> data;
        for (std::size_t i = 0; i < n; ++i)
          data.bytes[i] = static_cast<std::uint8_t>(i * 7 + n + dst);
        shoal::send(dst, [o, b, data] {
          constexpr std::size_t len = sizeof(data.bytes);
          bool good = true;
          for (std::size_t i = 0; i < len; ++i)
            good &= data.bytes[i] == static_cast<std::uint8_t>(i * 7 + len + shoal::mycore());
          (good ? o : b)->fetch_add(1);
        });
        ++sent;
      }
    };
    for (int rep = 0; rep < 20; ++rep) {
      send_blob(std::integral_constant<std::size_t, 1>{});
      send_blob(std::integral_constant<std::size_t, 3>{});
      send_blob(std::integral_constant<std::size_t, 12>{});
      send_blob(std::integral_constant<std::size_t, 13>{});
      send_blob(std::integral_constant<std::size_t, 64>{});
      send_blob(std::integral_constant<std::size_t, 100>{});
      send_blob(std::integral_constant<std::size_t, 239>{});
      send_blob(std::integral_constant<std::size_t, 240>{});
    }
  });
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(ok.load(), sent);
}

// A handler at depth d sends the next hop to the next core, up to depth 20.
struct cascade_state {
  static constexpr int max_depth = 20;
  padded_counter hops[max_depth + 1];
  std::atomic<std::int64_t> wrong_core{0};
  std::atomic<std::int64_t> tree_nodes{0};
};

void cascade_hop(cascade_state* c, int depth, int expect_core) {
  if (shoal::mycore() != expect_core) c->wrong_core.fetch_add(1);
  c->hops[depth].value.fetch_add(1, relaxed);
  if (depth == cascade_state::max_depth) return;
  const int next = (shoal::mycore() + 1) % shoal::cores();
  shoal::send(next, [c, depth, next] { cascade_hop(c, depth + 1, next); });
}

void tree_node(cascade_state* c, int depth) {
  c->tree_nodes.fetch_add(1, relaxed);
  if (depth == 12) return;
  for (int k = 1; k <= 2; ++k) {
    const int next = (shoal::mycore() + k) % shoal::cores();
    shoal::send(next, [c, depth] { tree_node(c, depth + 1); });
  }
}

TEST_P(closure_messages, HandlersThatSendCascadeToDepth20) {
  constexpr int chains_per_core = 1000;
  cascade_state cs;
  run([&] {
    auto* c = &cs;
    shoal::on_all_cores([c] {
      const int me = shoal::mycore();
      for (int i = 0; i < chains_per_core; ++i) shoal::send(me, [c, me] { cascade_hop(c, 0, me); });
    });
    shoal::send(0, [c] { tree_node(c, 0); });
    // run() returns at quiescence: every hop has run by then.
  });
  EXPECT_EQ(cs.wrong_core.load(), 0);
  for (int d = 0; d <= cascade_state::max_depth; ++d)
    EXPECT_EQ(cs.hops[d].value.load(), static_cast<std::int64_t>(chains_per_core) * ncores())
        << "depth " << d;
  EXPECT_EQ(cs.tree_nodes.load(), (1 << 13) - 1);
}

TEST_P(closure_messages, FlushDeliversWhileTheSenderKeepsWorking) {
  // With --flush-us at 10 s and the sender never idle, only flush() can
  // deliver the message in time.
  shoal::config cfg = config();
  cfg.flush_us = 10'000'000;
  std::atomic<bool> flag{false};
  bool seen = false;
  std::int64_t work = 0;
  double seconds = -1;
  run(cfg, [&] {
    const auto start = std::chrono::steady_clock::now();
    auto* f = &flag;
    shoal::send(shoal::cores() - 1, [f] { f->store(true); });
    shoal::flush();
    seen = shoal_test::yield_until(
        [&] {
          ++work;  // keeps this core busy
          return flag.load();
        },
        std::chrono::milliseconds(5000));
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  EXPECT_TRUE(seen) << "the flushed message was not handled within 5 s";
  EXPECT_LT(seconds, 5.0);
  EXPECT_GT(work, 0);
}

TEST_P(closure_messages, AgeFlushDeliversWhileTheSenderKeepsWorking) {
  std::atomic<bool> flag{false};
  bool seen = false;
  run([&] {
    auto* f = &flag;
    shoal::send(shoal::cores() - 1, [f] { f->store(true); });
    // No flush(): the default 50 us age limit must get it out.
    seen = shoal_test::yield_until([&] { return flag.load(); }, std::chrono::milliseconds(5000));
  });
  EXPECT_TRUE(seen);
}

TEST_P(closure_messages, FloodingASlowCoreStaysUnderAMemoryBound) {
  constexpr std::int64_t n = 2'000'000;
  constexpr std::int64_t bound = std::int64_t{64} << 20;
  std::atomic<std::int64_t> handled{0};
  std::int64_t rss_before = 0;
  std::int64_t rss_peak = 0;
  bool all_handled = false;
  shoal::init(config());
  const auto before = shoal::stats_total();
  shoal_test::run_once([&] {
    auto* h = &handled;
    const int slow = shoal::cores() - 1;
    rss_before = shoal_test::rss_bytes();
    for (std::int64_t i = 0; i < n; ++i) {
      shoal::send(slow, [h] {
        shoal_test::spin_for_ns(200);
        h->fetch_add(1, relaxed);
      });
      if ((i & 0xffff) == 0) rss_peak = std::max(rss_peak, shoal_test::rss_bytes());
    }
    rss_peak = std::max(rss_peak, shoal_test::rss_bytes());
    all_handled = shoal_test::yield_until([&] { return handled.load() == n; },
                                          std::chrono::milliseconds(60000));
    rss_peak = std::max(rss_peak, shoal_test::rss_bytes());
  });
  const auto after = shoal::stats_total();
  shoal::finalize();
  EXPECT_TRUE(all_handled);
  EXPECT_EQ(handled.load(), n);
  EXPECT_LT(rss_peak - rss_before, bound)
      << "RSS grew from " << rss_before << " to " << rss_peak << " bytes";
  if (ncores() >= 2) {
    EXPECT_GT(after.backpressure_waits - before.backpressure_waits, 0u)
        << "a producer far faster than its consumer never waited for a buffer";
  }
  EXPECT_EQ(after.overflow_buffers - before.overflow_buffers, 0u)
      << "task sends must wait for buffers, not allocate overflow ones";
}

TEST_P(closure_messages, HandlerFloodUsesOverflowBuffersAndLosesNothing) {
  // Handlers cannot wait for buffers: one handler per core sends 100,000
  // messages to core 0, far more than the pools hold. They take overflow
  // buffers (counted in stats), and deliveries that find core 0's inbound
  // ring full wait in the sender's pending list.
  constexpr std::int64_t per_core = 100'000;
  shoal::config cfg = config();
  cfg.buffers_per_core = 4;
  cfg.aggregation_bytes = 1024;
  std::atomic<std::int64_t> handled{0};
  shoal::init(cfg);
  shoal_test::run_once([&] {
    auto* h = &handled;
    for (int c = 0; c < shoal::cores(); ++c) {
      shoal::send(c, [h] {
        for (std::int64_t i = 0; i < per_core; ++i)
          shoal::send(0, [h] { h->fetch_add(1, relaxed); });
      });
    }
  });
  const auto st = shoal::stats_total();
  shoal::finalize();
  EXPECT_EQ(handled.load(), per_core * ncores());
  EXPECT_GT(st.overflow_buffers, 0u);
}

TEST_P(closure_messages, ChannelHandlersMaySendOnChannels) {
  // A typed channel whose handler forwards each value to the next core
  // until its hop count runs out.
  constexpr std::int64_t per_core = 20'000;
  constexpr std::uint32_t hops = 6;
  struct msg {
    std::uint32_t hops_left;
    std::uint32_t origin;
  };
  struct state {
    shoal::channel<msg> ch;
    std::atomic<std::int64_t> arrived{0};
    std::atomic<std::int64_t> wrong{0};
  };
  state st;
  run([&] {
    state* s = &st;
    st.ch = shoal::make_channel<msg>([s](const msg& m) {
      if (m.hops_left == 0) {
        s->arrived.fetch_add(1, relaxed);
        const auto expected =
            static_cast<int>((m.origin + hops) % static_cast<std::uint32_t>(shoal::cores()));
        if (shoal::mycore() != expected) s->wrong.fetch_add(1);
        return;
      }
      s->ch.send((shoal::mycore() + 1) % shoal::cores(), msg{m.hops_left - 1, m.origin});
    });
    shoal::on_all_cores([s] {
      const auto me = static_cast<std::uint32_t>(shoal::mycore());
      for (std::int64_t i = 0; i < per_core; ++i) s->ch.send(shoal::mycore(), msg{hops, me});
    });
  });
  // Close after the run: run() returned at quiescence, nothing is in flight.
  shoal::init(config());
  shoal_test::run_once([&] { st.ch.close(); });
  shoal::finalize();
  EXPECT_EQ(st.arrived.load(), per_core * ncores());
  EXPECT_EQ(st.wrong.load(), 0);
}

TEST_P(closure_messages, StatsCountEveryMessageAndPacket) {
  constexpr std::int64_t per_core = 10'000;
  std::atomic<std::int64_t> handled{0};
  shoal::init(config());
  shoal_test::run_once([&] {
    auto* h = &handled;
    for (std::int64_t i = 0; i < per_core; ++i)
      for (int c = 0; c < shoal::cores(); ++c) shoal::send(c, [h] { h->fetch_add(1, relaxed); });
  });
  const auto st = shoal::stats_total();
  const auto per = shoal::stats_per_core();
  const auto fields = shoal::stats_fields();
  const std::string table = shoal::stats_table();
  shoal::finalize();
  const auto n = static_cast<std::uint64_t>(per_core * ncores());
  EXPECT_EQ(handled.load(), per_core * ncores());
  EXPECT_EQ(st.messages_sent, n);
  EXPECT_EQ(st.messages_received, n);
  // An 8-byte closure each, plus one 8-byte run header per buffer: every
  // buffer holds closures of this one type only.
  EXPECT_EQ(st.bytes_sent, n * 8 + st.packets_sent * 8);
  EXPECT_EQ(st.bytes_received, st.bytes_sent);
  EXPECT_EQ(st.packets_sent, st.packets_received);
  EXPECT_GT(st.packets_sent, 0u);
  EXPECT_EQ(st.overflow_buffers, 0u);
  ASSERT_EQ(per.size(), static_cast<std::size_t>(ncores()));
  EXPECT_EQ(per[0].messages_sent, n) << "only core 0 sent";
  for (int c = 0; c < ncores(); ++c)
    EXPECT_EQ(per[static_cast<std::size_t>(c)].messages_received,
              static_cast<std::uint64_t>(per_core))
        << c;
  ASSERT_FALSE(fields.empty());
  EXPECT_EQ(fields[0].first, "messages_sent");
  EXPECT_EQ(fields[0].second, static_cast<double>(n));
  // Header, one row per core, total.
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), ncores() + 2);
  EXPECT_NE(table.find("total"), std::string::npos);
}

// Buffer sizes that are not a multiple of 64 still give aligned buffers and
// intact 8-byte payloads.
TEST_P(closure_messages, OddAggregationBufferSizeKeepsPayloadsIntact) {
  shoal::config c = config();
  c.aggregation_bytes = 300;
  constexpr std::int64_t per_core = 20'000;
  std::vector<std::int64_t> sums(static_cast<std::size_t>(ncores()), 0);
  std::int64_t* s = sums.data();
  run(c, [&] {
    shoal::on_all_cores([s] {
      const int to = (shoal::mycore() + 1) % shoal::cores();
      for (std::int64_t i = 0; i < per_core; ++i) {
        const std::uint64_t value = 0x0101010101010101ULL * static_cast<std::uint64_t>(i % 200);
        shoal::send(
            to, [s, value] { s[shoal::mycore()] += static_cast<std::int64_t>(value % 1000003); });
      }
      shoal::flush();
    });
    shoal::delegate::call(0, [] { return 0; });  // round trip: everything sent has run
  });
  std::int64_t expected = 0;
  for (std::int64_t i = 0; i < per_core; ++i)
    expected += static_cast<std::int64_t>(
        (0x0101010101010101ULL * static_cast<std::uint64_t>(i % 200)) % 1000003);
  for (std::int64_t got : sums) EXPECT_EQ(got, expected);
}

SHOAL_TEST_CORES(closure_messages);

// ------------------------------------------------------------ channels

struct value16 {
  std::uint64_t key;
  std::uint64_t check;  // key * 3 + 1
};
static_assert(sizeof(value16) == 16);

struct value12 {
  std::uint32_t key;
  std::uint32_t check;  // ~key
  std::uint32_t more;   // key ^ 0x5a5a5a5a
};
static_assert(sizeof(value12) == 12 && alignof(value12) == 4);

struct value1 {
  std::uint8_t key;
};

template <class T>
struct codec;
template <>
struct codec<std::uint64_t> {
  static std::uint64_t make(std::uint64_t k) { return k * 0x9e3779b97f4a7c15ULL; }
  static std::uint64_t key(std::uint64_t v) { return v * 0xf1de83e19937733dULL; }  // inverse
  static bool good(std::uint64_t) { return true; }
};
template <>
struct codec<value16> {
  static value16 make(std::uint64_t k) { return {k, k * 3 + 1}; }
  static std::uint64_t key(const value16& v) { return v.key; }
  static bool good(const value16& v) { return v.check == v.key * 3 + 1; }
};
template <>
struct codec<value12> {
  static value12 make(std::uint64_t k) {
    const auto x = static_cast<std::uint32_t>(k);
    return {x, ~x, x ^ 0x5a5a5a5aU};
  }
  static std::uint64_t key(const value12& v) { return v.key; }
  static bool good(const value12& v) {
    return v.check == ~v.key && v.more == (v.key ^ 0x5a5a5a5aU);
  }
};
template <>
struct codec<value1> {
  static value1 make(std::uint64_t k) { return {static_cast<std::uint8_t>(k)}; }
  static std::uint64_t key(const value1& v) { return v.key; }
  static bool good(const value1&) { return true; }
};

struct channel_tally {
  std::vector<padded_counter> count;  // per receiving core
  std::vector<padded_counter> sum;    // of keys, per receiving core
  std::atomic<std::int64_t> corrupt{0};
  shoal::global_completion_event* gce = nullptr;
  explicit channel_tally(int cores)
      : count(static_cast<std::size_t>(cores)), sum(static_cast<std::size_t>(cores)) {}
};

template <class T>
void channel_exchange(int cores, std::int64_t per_pair) {
  channel_tally tally(cores);
  shoal_test::run_checked(shoal_test::make_config(cores), [&] {
    shoal::global_completion_event gce;
    tally.gce = &gce;
    channel_tally* t = &tally;
    auto ch = shoal::make_channel<T>([t](const T& v) {
      if (!codec<T>::good(v)) t->corrupt.fetch_add(1);
      const int me = shoal::mycore();
      t->count[static_cast<std::size_t>(me)].value.fetch_add(1, relaxed);
      t->sum[static_cast<std::size_t>(me)].value.fetch_add(
          static_cast<std::int64_t>(codec<T>::key(v)), relaxed);
      t->gce->complete();
    });
    shoal::on_all_cores([ch, t, per_pair] {
      const auto src = static_cast<std::uint64_t>(shoal::mycore());
      for (std::int64_t i = 0; i < per_pair; ++i) {
        for (int dst = 0; dst < shoal::cores(); ++dst) {
          // Keys are small enough for every payload type.
          const std::uint64_t key =
              (src * 7 + static_cast<std::uint64_t>(i) + static_cast<std::uint64_t>(dst)) % 251;
          t->gce->enroll();
          ch.send(dst, codec<T>::make(key));
        }
      }
    });
    gce.wait();
    ch.close();
  });
  EXPECT_EQ(tally.corrupt.load(), 0);
  for (int dst = 0; dst < cores; ++dst) {
    std::int64_t expected_sum = 0;
    for (int src = 0; src < cores; ++src)
      for (std::int64_t i = 0; i < per_pair; ++i)
        expected_sum += static_cast<std::int64_t>((static_cast<std::uint64_t>(src) * 7 +
                                                   static_cast<std::uint64_t>(i) +
                                                   static_cast<std::uint64_t>(dst)) %
                                                  251);
    EXPECT_EQ(tally.count[static_cast<std::size_t>(dst)].value.load(), per_pair * cores)
        << "core " << dst;
    EXPECT_EQ(tally.sum[static_cast<std::size_t>(dst)].value.load(), expected_sum)
        << "core " << dst;
  }
}

class typed_channels : public cores_test {};

TEST_P(typed_channels, Uint64ValuesDeliveredExactlyOnce) {
  channel_exchange<std::uint64_t>(ncores(), 100'000);
}
TEST_P(typed_channels, SixteenByteStructDeliveredIntact) {
  channel_exchange<value16>(ncores(), 100'000);
}
TEST_P(typed_channels, TwelveByteStructDeliveredIntact) {
  channel_exchange<value12>(ncores(), 100'000);
}
TEST_P(typed_channels, OneByteValuesDeliveredExactlyOnce) {
  channel_exchange<value1>(ncores(), 50'000);
}

TEST_P(typed_channels, PerPairFifoOrder) {
  constexpr std::uint64_t per_pair = 100'000;
  struct state {
    std::vector<std::uint64_t> next;  // [src * cores + dst], touched on dst only
    std::vector<padded_counter> violations;
    int cores;
    shoal::global_completion_event* gce;
  };
  state st{std::vector<std::uint64_t>(static_cast<std::size_t>(ncores() * ncores()), 0),
           std::vector<padded_counter>(static_cast<std::size_t>(ncores())), ncores(), nullptr};
  run([&] {
    shoal::global_completion_event gce;
    st.gce = &gce;
    state* s = &st;
    // Value: src in the top byte, sequence number below.
    auto ch = shoal::make_channel<std::uint64_t>([s](const std::uint64_t& v) {
      const auto src = static_cast<int>(v >> 56);
      const std::uint64_t seq = v & ((std::uint64_t{1} << 56) - 1);
      const int me = shoal::mycore();
      std::uint64_t& next = s->next[static_cast<std::size_t>(src * s->cores + me)];
      if (seq != next) s->violations[static_cast<std::size_t>(me)].value.fetch_add(1, relaxed);
      next = seq + 1;
      s->gce->complete();
    });
    shoal::on_all_cores([ch, s] {
      const auto src = static_cast<std::uint64_t>(shoal::mycore());
      for (std::uint64_t i = 0; i < per_pair; ++i) {
        for (int dst = 0; dst < shoal::cores(); ++dst) {
          s->gce->enroll();
          ch.send(dst, (src << 56) | i);
        }
      }
    });
    gce.wait();
    ch.close();
  });
  for (auto v : st.next) EXPECT_EQ(v, per_pair);
  for (const auto& v : st.violations) EXPECT_EQ(v.value.load(), 0);
}

struct close_state {
  std::atomic<std::int64_t> a{0};
  std::atomic<std::int64_t> b{0};
  shoal::global_completion_event* gce = nullptr;
};

TEST_P(typed_channels, CloseAndReopenRoutesToTheNewHandler) {
  constexpr int n = 10'000;
  close_state cs;
  bool open_before = false;
  bool open_after = true;
  std::uint32_t id_a = 0;
  std::uint32_t id_b = 0;
  run([&] {
    shoal::global_completion_event gce;
    cs.gce = &gce;
    close_state* c = &cs;
    auto ch_a = shoal::make_channel<std::int64_t>([c](const std::int64_t& v) {
      c->a.fetch_add(v);
      c->gce->complete();
    });
    open_before = static_cast<bool>(ch_a);
    id_a = ch_a.id();
    for (int i = 0; i < n; ++i) {
      gce.enroll();
      ch_a.send(i % shoal::cores(), 1);
    }
    gce.wait();
    ch_a.close();
    open_after = static_cast<bool>(ch_a);

    auto ch_b = shoal::make_channel<std::int64_t>([c](const std::int64_t& v) {
      c->b.fetch_add(v);
      c->gce->complete();
    });
    id_b = ch_b.id();
    for (int i = 0; i < n; ++i) {
      gce.enroll();
      ch_b.send(i % shoal::cores(), 2);
    }
    gce.wait();
    ch_b.close();
  });
  EXPECT_TRUE(open_before);
  EXPECT_FALSE(open_after);
  EXPECT_NE(id_a, 0u);
  EXPECT_NE(id_b, 0u);
  EXPECT_EQ(cs.a.load(), n);
  EXPECT_EQ(cs.b.load(), 2 * n) << "the reopened channel's messages went to the old handler";
}

TEST_P(typed_channels, IdsAreRecycledAndManyMayBeOpenAtOnce) {
  constexpr int cycles = 1000;  // far more than the 255 channel ids
  constexpr int open_at_once = 100;
  std::atomic<std::int64_t> total{0};
  std::int64_t expected = 0;
  run([&] {
    shoal::global_completion_event gce;
    struct ctx {
      std::atomic<std::int64_t>* total;
      shoal::global_completion_event* gce;
    };
    ctx cx{&total, &gce};
    ctx* c = &cx;
    for (int i = 0; i < cycles; ++i) {
      auto ch = shoal::make_channel<std::int32_t>([c](const std::int32_t& v) {
        c->total->fetch_add(v);
        c->gce->complete();
      });
      gce.enroll();
      ch.send(i % shoal::cores(), i);
      expected += i;
      gce.wait();
      ch.close();
    }
    std::vector<shoal::channel<std::int32_t>> chans;
    for (int k = 0; k < open_at_once; ++k) {
      const std::int32_t mult = k + 1;
      chans.push_back(shoal::make_channel<std::int32_t>([c, mult](const std::int32_t& v) {
        c->total->fetch_add(static_cast<std::int64_t>(v) * mult);
        c->gce->complete();
      }));
    }
    for (int k = 0; k < open_at_once; ++k) {
      for (int dst = 0; dst < shoal::cores(); ++dst) {
        gce.enroll();
        chans[static_cast<std::size_t>(k)].send(dst, 3);
        expected += std::int64_t{3} * (k + 1);
      }
    }
    gce.wait();
    for (auto& ch : chans) ch.close();
  });
  EXPECT_EQ(total.load(), expected);
}

SHOAL_TEST_CORES(typed_channels);

}  // namespace
