// Scenarios for keyed target channels (keyed_target_channel.hpp): the
// target is a function of the value, and records travel as the bare value.
// Run on one process by tests/test_routing.cpp and across processes by
// tests/mpi/dist_pebbles.cpp (1 x 2, 2 x 2, 3 x 2, 4 x 1, 8 x 1).
#pragma once

#include "pebbles_scenarios.hpp"

namespace pebbles {

/// Value v is for target v - 1 (check_sums' values: t + 1 to target t).
struct target_before {
  u64 operator()(const i64& v) const noexcept { return static_cast<u64>(v - 1); }
};

/// What this process's cores handed to other processes during the phase
/// (network_traffic's messages and bytes), summed over the job by
/// check_keyed_sums on global core 0.
inline i64 g_net_messages = 0, g_net_bytes = 0;

/// check_sums on a keyed channel: every core sends t + 1 (target t, by the
/// key) for every t of [0, 997); each lands where the distribution says,
/// exactly once per sending core, through `route`'s hops. Also publishes
/// the forwarded values and the phase's network messages and bytes.
template <class Job, class Route = shoal::direct_routing>
void check_keyed_sums(Job job, int cores, kind k, bool short_circuit = true, Route route = {},
                      std::uint32_t max_in_flight = 0) {
  const u64 n = 997;
  job([n, k, short_circuit, route, max_in_flight] {
    const any_distribution d{k, n, shoal::cores()};
    auto ch = shoal::make_keyed_target_channel<i64>(
        d, target_before{}, placed{d},
        {.max_in_flight = max_in_flight, .short_circuit = short_circuit}, route);
    shoal::on_all_cores([ch, n] {
      const bool first = shoal::mycore() % shoal::local_cores() == 0;
      shoal::barrier();  // nothing of on_all_cores' launch counted below
      const shoal::network_traffic before = shoal::local_network_traffic();
      for (u64 t = 0; t < n; ++t) ch.send(static_cast<i64>(t + 1));
      ch.end_phase();
      const shoal::network_traffic after = shoal::local_network_traffic();
      const i64 m =
          shoal::allreduce_sum(first ? static_cast<i64>(after.messages - before.messages) : i64{0});
      const i64 b =
          shoal::allreduce_sum(first ? static_cast<i64>(after.bytes - before.bytes) : i64{0});
      if (shoal::mycore() == 0) {
        g_net_messages = m;
        g_net_bytes = b;
      }
      publish_forwarded(ch);
    });
    close_handle(ch);
  });
  expect_sums(cores, n);
}

/// A cascade value whose target is a function of its seed.
struct keyed_cascade_value {
  std::int32_t ttl;
  std::uint32_t pad;
  u64 seed;
};
inline constexpr u64 keyed_cascade_targets = 500;
struct seed_target {
  u64 operator()(const keyed_cascade_value& v) const noexcept {
    return v.seed % keyed_cascade_targets;
  }
};
template <class Route>
inline thread_local shoal::keyed_target_channel<keyed_cascade_value, shoal::block_distribution,
                                                seed_target, Route>
    t_keyed_cascade;

/// check_cascade on a keyed channel: handlers send on (ttl - 1, mix(seed))
/// while they run, so routed hops forward in handler context; every value
/// is handled once before end_phase returns.
template <class Job, class Route = shoal::direct_routing>
void check_keyed_cascade(Job job, int cores, Route route = {}) {
  constexpr int starts = 200, ttl = 12;
  job([route] {
    shoal::block_distribution d(keyed_cascade_targets, shoal::cores());
    auto ch = shoal::make_keyed_target_channel<keyed_cascade_value>(
        d, seed_target{},
        [](u64 local, const keyed_cascade_value& v) {
          ++t_state.handled;
          const shoal::target_location at =
              shoal::block_distribution(keyed_cascade_targets, shoal::cores())
                  .locate(v.seed % keyed_cascade_targets);
          if (at.core != shoal::mycore() || at.local != local) ++t_state.misplaced;
          if (v.ttl > 0) t_keyed_cascade<Route>.send({v.ttl - 1, 0, mix(v.seed)});
        },
        {}, route);
    shoal::on_all_cores([ch] { t_keyed_cascade<Route> = ch; });  // before any value arrives
    shoal::on_all_cores([ch] {
      for (int i = 0; i < starts; ++i)
        ch.send({ttl, 0, mix(static_cast<u64>(shoal::mycore() * 7919 + i))});
      ch.end_phase();
      publish();
    });
    shoal::on_all_cores([] { t_keyed_cascade<Route> = {}; });
    close_handle(ch);
  });
  if (!g_check_here) return;
  EXPECT_EQ(g_handled, static_cast<i64>(cores) * starts * (ttl + 1));
  EXPECT_EQ(g_misplaced, 0);
}

}  // namespace pebbles
