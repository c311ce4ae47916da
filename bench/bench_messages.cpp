// Cross-core messages with 16-byte payloads (cores=2).
//
// messages/<kind>/<flush>/<direction>
//   kind: channel_16B  a typed channel of a 16-byte struct (bare values in
//                      the buffer, one header per batch);
//         closure_16B  shoal::send of a lambda capturing 16 bytes (8-byte
//                      header + 16 bytes per message).
//   flush: aggregated  default configuration, buffers go when full;
//          flush_each  shoal::flush() after every send (one message per
//                      buffer: the unaggregated path).
//   direction: one_way    core 0 sends to core 1;
//              both_ways  cores 0 and 1 send to each other at the same time
//                         (on_all_cores).
// The receiving handler counts messages in a per-core counter; a sender
// flushes, then polls its destination's counter with blocking
// delegate::call round trips until all of its messages have run. The clock
// covers the first send to the last handler observed.
// msgs_per_s_per_core = messages sent by one core / elapsed. Target: at
// least 20 M/s per sending core (aggregated).
#include "shoal_bench.hpp"

namespace {

using namespace shoal_bench;

struct payload {
  std::uint64_t a;
  std::uint64_t b;
};
static_assert(sizeof(payload) == 16);

// What each core received; written only by its own core.
struct alignas(64) receive_counter {
  std::int64_t count = 0;
  std::uint64_t sum = 0;
};
receive_counter g_recv[2];

inline void on_receive(std::uint64_t a, std::uint64_t b) {
  receive_counter& r = g_recv[shoal::mycore()];
  ++r.count;
  r.sum += a ^ b;
}

enum class kind { channel, closure };
enum class flush_mode { aggregated, flush_each };

// Sends `n` messages to `dest`, then waits until `dest` has run them all.
template <kind K, flush_mode F>
void send_and_wait(shoal::channel<payload> ch, int dest, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const auto a = static_cast<std::uint64_t>(i);
    const std::uint64_t b = a * 0x9e3779b97f4a7c15ULL;
    if constexpr (K == kind::channel) {
      ch.send(dest, payload{a, b});
    } else {
      const auto msg = [a, b] { on_receive(a, b); };
      static_assert(sizeof(msg) == 16);
      shoal::send(dest, msg);
    }
    if constexpr (F == flush_mode::flush_each) shoal::flush();
  }
  shoal::flush();
  // Streams are not ordered with each other, so poll until the count is there.
  while (shoal::delegate::call(dest, [] { return g_recv[shoal::mycore()].count; }) < n) {
  }
}

std::int64_t messages_per_iteration(flush_mode f) {
  return f == flush_mode::aggregated ? 4'000'000 : 250'000;
}

template <flush_mode F>
void report(benchmark::State& state, double sending_cores, double total_msgs, double total_secs,
            const stats_snapshot& before) {
  if (total_secs <= 0) return;
  state.counters["msgs_per_s_per_core"] = total_msgs / sending_cores / total_secs;
  state.counters["msgs_per_s_total"] = total_msgs / total_secs;
  stats_snapshot::take().report_since(before, state);
  if constexpr (F == flush_mode::aggregated)
    state.SetLabel("target >= 20M msgs/s per sending core");
}

enum class direction { one_way, both_ways };

// one_way: core 0 sends n messages to core 1. both_ways: each core sends n to
// the other at the same time.
template <kind K, flush_mode F, direction D>
void bm_messages(benchmark::State& state) {
  constexpr int senders = D == direction::both_ways ? 2 : 1;
  const std::int64_t n = messages_per_iteration(F);
  shoal::config cfg;
  cfg.cores = 2;
  runtime_scope rt(cfg);
  const stats_snapshot before = stats_snapshot::take();
  double total_secs = 0;
  double total_msgs = 0;
  for (auto _ : state) {
    g_recv[0] = {};
    g_recv[1] = {};
    const double secs = run_timed([&] {
      auto ch = shoal::make_channel<payload>([](const payload& v) { on_receive(v.a, v.b); });
      const auto t0 = clock::now();
      if constexpr (D == direction::both_ways) {
        shoal::on_all_cores([ch, n] { send_and_wait<K, F>(ch, 1 - shoal::mycore(), n); });
      } else {
        send_and_wait<K, F>(ch, 1, n);
      }
      const double s = seconds_since(t0);
      ch.close();
      return s;
    });
    const bool all_arrived = g_recv[1].count == n && (senders == 1 || g_recv[0].count == n);
    if (!all_arrived) {
      state.SkipWithError("a core did not receive every message");
      break;
    }
    state.SetIterationTime(secs);
    total_secs += secs;
    total_msgs += senders * static_cast<double>(n);
  }
  report<F>(state, senders, total_msgs, total_secs, before);
}

#define SHOAL_MESSAGE_BENCH(d, k, f, name)                              \
  BENCHMARK_TEMPLATE(bm_messages, kind::k, flush_mode::f, direction::d) \
      ->Name("messages/" name)                                          \
      ->UseManualTime()                                                 \
      ->Unit(benchmark::kMillisecond)

SHOAL_MESSAGE_BENCH(one_way, channel, aggregated, "channel_16B/aggregated/one_way");
SHOAL_MESSAGE_BENCH(one_way, closure, aggregated, "closure_16B/aggregated/one_way");
SHOAL_MESSAGE_BENCH(one_way, channel, flush_each, "channel_16B/flush_each/one_way");
SHOAL_MESSAGE_BENCH(one_way, closure, flush_each, "closure_16B/flush_each/one_way");
SHOAL_MESSAGE_BENCH(both_ways, channel, aggregated, "channel_16B/aggregated/both_ways");
SHOAL_MESSAGE_BENCH(both_ways, closure, aggregated, "closure_16B/aggregated/both_ways");

}  // namespace

int main(int argc, char** argv) {
  return shoal_bench::run_benchmarks(argc, argv,
                                     {{"/aggregated/", "msgs_per_s_per_core", ">=", 20e6},
                                      {"/flush_each/", "msgs_per_s_per_core", "info", 0}});
}
