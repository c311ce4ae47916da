// Object-channel flow control (object_channel_options::max_in_flight),
// shared by tests/test_object_channel_flow.cpp (one process) and
// tests/mpi/dist_object_channel_flow.cpp (1 x 2, 2 x 2, 3 x 2).
//
// A flood into a slow receiver: every core but core 0 sends `per_sender`
// strings of 0 to 600 bytes to core 0, whose handler spins about a
// microsecond per record, so the senders outrun it. After each send a
// sender learns the backlog it has at core 0: in one process from a shared
// counter (sent - handled, exact), across processes every 64 sends by
// asking core 0 for the count it handled from this core (delegate::call; a
// lower bound of handled, so an upper bound of the backlog). With a bound n
// the backlog never exceeds n; without one it grows to at least a batch.
// The receiver checks each string's contents and each source's order.
#pragma once

#include "shoal/delegate.hpp"
#include "shoal/object_channel.hpp"
#include "shoal/shoal.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

namespace flow_scenario {

inline constexpr int max_cores = 64;

/// What core 0 saw (its process only) and what the senders saw.
struct totals {
  std::atomic<std::int64_t> good{0};
  std::atomic<std::int64_t> bad{0};
  std::atomic<std::int64_t> out_of_order{0};
  std::atomic<std::int64_t> max_backlog{0};                  // over this process's senders
  std::int64_t handled_from[max_cores] = {};                 // on core 0 only
  std::atomic<std::int64_t> shared_backlog[max_cores] = {};  // one process: sent - handled
};
inline totals g;

inline void reset() {
  g.good = 0;
  g.bad = 0;
  g.out_of_order = 0;
  g.max_backlog = 0;
  for (int c = 0; c < max_cores; ++c) {
    g.handled_from[c] = 0;
    g.shared_backlog[c] = 0;
  }
}

/// Record i of source s: [s][i] then (i * 37) % 601 letters of s and i.
inline std::string record(int s, std::int64_t i) {
  std::string v(8 + static_cast<std::size_t>((i * 37) % 601), '\0');
  const auto a = static_cast<std::uint32_t>(s);
  const auto b = static_cast<std::uint32_t>(i);
  std::memcpy(v.data(), &a, 4);
  std::memcpy(v.data() + 4, &b, 4);
  for (std::size_t k = 8; k < v.size(); ++k) v[k] = static_cast<char>('a' + (k + a + b) % 26);
  return v;
}

struct slow_receiver {
  void operator()(const std::string& v) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
    while (std::chrono::steady_clock::now() < until) {
    }
    std::uint32_t s = 0;
    std::uint32_t i = 0;
    if (v.size() >= 8) {
      std::memcpy(&s, v.data(), 4);
      std::memcpy(&i, v.data() + 4, 4);
    }
    if (v.size() < 8 || s >= max_cores || v != record(static_cast<int>(s), i)) {
      ++g.bad;
      return;
    }
    if (static_cast<std::int64_t>(i) != g.handled_from[s]) ++g.out_of_order;
    ++g.handled_from[s];
    g.shared_backlog[s].fetch_sub(1, std::memory_order_relaxed);
    ++g.good;
  }
};

inline void note_backlog(std::int64_t b) {
  std::int64_t m = g.max_backlog.load();
  while (b > m && !g.max_backlog.compare_exchange_weak(m, b)) {
  }
}

/// The flood (root task). `one_process`: read the shared counter after
/// every send; otherwise ask core 0 every 64 sends.
inline void flood(std::uint32_t bound, std::int64_t per_sender, bool one_process) {
  reset();
  auto ch = shoal::make_object_channel<std::string>(slow_receiver{}, {.max_in_flight = bound});
  shoal::on_all_cores([ch, per_sender, one_process] {
    const int me = shoal::mycore();
    if (me != 0) {
      for (std::int64_t i = 0; i < per_sender; ++i) {
        if (one_process) g.shared_backlog[me].fetch_add(1, std::memory_order_relaxed);
        ch.send(0, record(me, i));
        if (one_process) {
          note_backlog(g.shared_backlog[me].load(std::memory_order_relaxed));
        } else if (i % 64 == 63) {
          const std::int64_t handled =
              shoal::delegate::call(0, [me] { return g.handled_from[me]; });
          note_backlog(i + 1 - handled);
        }
      }
    }
    shoal::barrier();
  });
  ch.close();
}

}  // namespace flow_scenario
