// Snapshots of the runtime counters: the difference of two snapshots counts
// exactly what ran between them.
#include <cstdint>
#include <string>

#include "test_support.hpp"

namespace {

class stats_snapshots : public shoal_test::cores_test {};

constexpr std::int64_t sends_per_core = 500;

void send_round() {
  shoal::on_all_cores([] {
    for (std::int64_t i = 0; i < sends_per_core; ++i)
      shoal::delegate::post((shoal::mycore() + 1) % shoal::cores(), [] {},
                                  shoal::default_gce());
    shoal::default_gce().wait();
  });
}

TEST_P(stats_snapshots, DifferenceCountsOnlyThePhaseBetween) {
  shoal::init(config());
  shoal::run([] { send_round(); });
  const shoal::core_stats before = shoal::stats_total();
  shoal::run([] { send_round(); });
  shoal::core_stats phase = shoal::stats_total();
  phase -= before;
  const std::int64_t remote = GetParam() > 1 ? sends_per_core * GetParam() : 0;
  // Messages of on_all_cores itself come on top of the delegates.
  EXPECT_GE(static_cast<std::int64_t>(phase.messages_received), remote);
  EXPECT_LT(static_cast<std::int64_t>(phase.messages_received), remote + 4 * GetParam() + 4);
  EXPECT_LE(phase.messages_received, before.messages_received + 4u * GetParam() + 4u);
  bool found = false;
  for (const auto& [name, value] : shoal::stats_fields(phase))
    if (name == "messages_received") found = value == static_cast<double>(phase.messages_received);
  EXPECT_TRUE(found);
  shoal::finalize();
}

SHOAL_TEST_CORES(stats_snapshots);

}  // namespace
