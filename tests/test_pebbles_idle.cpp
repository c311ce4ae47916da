// The idle policy (--idle) and how auto reads the machine
// (src/runtime/idle_choice.hpp): oversubscription is judged from the
// ranks on the node, the cores per rank, the affinity mask and the
// node's CPUs. And how a termination wave judges idle cores' remote
// stealing at the end of a job (src/runtime/wave_verdict.hpp).
#include <algorithm>
#include <cstdlib>
#include <vector>

#include <sched.h>

#include <gtest/gtest.h>

#include "runtime/cpu_binding.hpp"
#include "runtime/idle_choice.hpp"
#include "runtime/wave_verdict.hpp"

namespace {

using shoal::idle_kind;
using shoal::detail::choose_idle;
using shoal::detail::cpu_picture;
using shoal::detail::idle_policy;

TEST(IdleChoice, ExplicitWordsAreKeptWhateverTheMachine) {
  const cpu_picture crowded{16, 2, 2};
  EXPECT_EQ(choose_idle(idle_kind::spin, 2, crowded).policy, idle_policy::spin());
  EXPECT_EQ(choose_idle(idle_kind::yield, 2, crowded).policy, idle_policy::yield());
  EXPECT_EQ(choose_idle(idle_kind::sleep, 1, {1, 8, 8}).policy, idle_policy::sleep());
  EXPECT_EQ(choose_idle(idle_kind::spin, 2, crowded).words, "spin (--idle spin)");
}

TEST(IdleChoice, AutoSleepsWhenTheRanksOfTheNodeOutnumberItsCpus) {
  const auto c = choose_idle(idle_kind::automatic, 2, {12, 2, 2});
  EXPECT_EQ(c.policy, idle_policy::sleep());
  EXPECT_EQ(c.words, "sleep (auto: 12 ranks on this node x 2 cores > 2 CPUs)");
  // 3 ranks of one core on 2 CPUs: one more thread than CPUs is enough.
  EXPECT_EQ(choose_idle(idle_kind::automatic, 1, {3, 2, 2}).policy, idle_policy::sleep());
}

TEST(IdleChoice, AutoSleepsWhenTheRankHasMoreCoresThanItsMask) {
  // mpirun binds each of two ranks to one CPU: 2 cores share it.
  const auto c = choose_idle(idle_kind::automatic, 2, {2, 1, 2});
  EXPECT_EQ(c.policy, idle_policy::sleep());
  EXPECT_EQ(c.words, "sleep (auto: 2 cores > 1 CPUs in this rank's affinity mask)");
}

TEST(IdleChoice, AutoSpinsFirstWhenEveryCoreHasACpu) {
  // 1 x 2 on 2 CPUs, 2 x 1 bound one CPU each, 4 x 4 on 16 CPUs.
  for (const auto& [cores, p] :
       {std::pair{2, cpu_picture{1, 2, 2}}, std::pair{1, cpu_picture{2, 1, 2}},
        std::pair{4, cpu_picture{4, 16, 16}}}) {
    const auto c = choose_idle(idle_kind::automatic, cores, p);
    EXPECT_EQ(c.policy, idle_policy::mixed()) << c.words;
    EXPECT_NE(c.words.find("spin 50 us, yield to 20 ms, then sleep 200 us at most (auto: "),
              std::string::npos);
  }
}

TEST(IdleChoice, RanksOnTheNodeComeFromTheLauncher) {
  ::unsetenv("RANKS_PER_NODE");
  ::unsetenv("MPI_LOCALNRANKS");
  ::unsetenv("SLURM_NTASKS_PER_NODE");
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "12", 1);
  EXPECT_EQ(shoal::detail::this_cpu_picture(16).local_ranks, 12);
  // A job of one process is alone on its node whatever the variable says.
  EXPECT_EQ(shoal::detail::this_cpu_picture(1).local_ranks, 1);
  // Nonsense (more than the job, not a number) is ignored.
  EXPECT_EQ(shoal::detail::this_cpu_picture(4).local_ranks, 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "x", 1);
  EXPECT_EQ(shoal::detail::this_cpu_picture(4).local_ranks, 1);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const cpu_picture p = shoal::detail::this_cpu_picture(4);
  EXPECT_EQ(p.local_ranks, 1);
  EXPECT_GE(p.mask_cpus, 1);
  EXPECT_LE(p.mask_cpus, p.node_cpus);
}

}  // namespace

// --bind (src/runtime/cpu_binding.hpp): when a launcher's mask is widened.
namespace {

using shoal::bind_kind;
using shoal::detail::choose_binding;

const std::vector<int> two_cpus{0, 1};
const std::vector<int> eight_cpus{0, 1, 2, 3, 4, 5, 6, 7};

TEST(BindChoice, KeepNeverChangesTheMask) {
  const auto c = choose_binding(bind_kind::keep, 2, {1, 1, 2}, 0, two_cpus);
  EXPECT_TRUE(c.cpus.empty());
  EXPECT_EQ(c.words, "kept (--bind keep)");
}

TEST(BindChoice, AutoWidensAOneCpuMaskOfALonelyRank) {
  // mpirun -np 1 --cores 2: Open MPI bound the rank to one core.
  const auto c = choose_binding(bind_kind::automatic, 2, {1, 1, 2}, 0, two_cpus);
  EXPECT_EQ(c.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(c.words, "CPUs 0-1 (auto: 2 cores > 1 CPUs in the launcher's mask; local rank 0 of 1)");
  // Alone on its node, an unknown local rank is 0.
  EXPECT_EQ(choose_binding(bind_kind::automatic, 2, {1, 1, 2}, -1, two_cpus).cpus,
            (std::vector<int>{0, 1}));
}

TEST(BindChoice, AutoGivesEachRankOfTheNodeItsOwnBlock) {
  for (int r = 0; r < 4; ++r) {
    const auto c = choose_binding(bind_kind::automatic, 2, {4, 1, 8}, r, eight_cpus);
    EXPECT_EQ(c.cpus, (std::vector<int>{2 * r, 2 * r + 1})) << c.words;
  }
  // Online CPUs need not be numbered from 0 without gaps.
  const auto c = choose_binding(bind_kind::automatic, 2, {2, 1, 4}, 1, {0, 2, 4, 6});
  EXPECT_EQ(c.cpus, (std::vector<int>{4, 6}));
  EXPECT_NE(c.words.find("CPUs 4,6 "), std::string::npos) << c.words;
}

TEST(BindChoice, AutoKeepsTheMaskWhenItIsWideEnoughOrTheNodeIsFull) {
  EXPECT_TRUE(choose_binding(bind_kind::automatic, 2, {1, 2, 2}, 0, two_cpus).cpus.empty());
  EXPECT_TRUE(choose_binding(bind_kind::automatic, 1, {2, 1, 2}, 1, two_cpus).cpus.empty());
  // 2 ranks x 2 cores on 2 CPUs: oversubscribed whatever the masks.
  const auto full = choose_binding(bind_kind::automatic, 2, {2, 1, 2}, 1, two_cpus);
  EXPECT_TRUE(full.cpus.empty());
  EXPECT_EQ(full.words,
            "kept (auto: 2 ranks on this node x 2 cores > 2 online CPUs: oversubscribed either "
            "way)");
  // Several ranks on the node but this one's index unknown (or nonsense).
  for (int r : {-1, 4})
    EXPECT_NE(choose_binding(bind_kind::automatic, 2, {4, 1, 8}, r, eight_cpus)
                  .words.find("index on its node is not known"),
              std::string::npos);
}

TEST(BindChoice, LocalRankComesFromTheLauncher) {
  ::unsetenv("MPI_LOCALRANKID");
  ::unsetenv("SLURM_LOCALID");
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(shoal::detail::this_local_rank(8), 3);
  EXPECT_EQ(shoal::detail::this_local_rank(1), 0);  // a job of one process
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3x", 1);
  EXPECT_EQ(shoal::detail::this_local_rank(8), -1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "9", 1);
  EXPECT_EQ(shoal::detail::this_local_rank(8), -1);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::setenv("SLURM_LOCALID", "1", 1);
  EXPECT_EQ(shoal::detail::this_local_rank(8), 1);
  ::unsetenv("SLURM_LOCALID");
}

TEST(BindChoice, OnlineCpusIncludesThisProcessesCpu) {
  const std::vector<int> online = shoal::detail::online_cpus();
  ASSERT_FALSE(online.empty());
  const int here = sched_getcpu();
  EXPECT_NE(std::find(online.begin(), online.end(), here), online.end()) << here;
}

}  // namespace

namespace {

using shoal::detail::judge_wave;
using shoal::detail::wave_fields;
using shoal::detail::wave_verdict;
namespace w = shoal::detail;

// A wave of a 16-rank job: every root done, nothing queued, every rank
// quiet and every batch received, unless a test says otherwise.
struct wave_sums {
  std::uint64_t v[wave_fields] = {0, 500, 500, 16, 0, 0, 0, 7};
};

TEST(TerminationWaves, StealChatterAloneStopsRemoteStealing) {
  // Roots done, nothing anywhere to steal, but idle cores' steal requests
  // keep ranks busy and counts moving: stealing must stop, or the job can
  // wait for ever for a wave with no request in flight.
  wave_sums now, before;
  now.v[w::wave_not_quiet] = 16;
  now.v[w::wave_sent] = 9000;
  now.v[w::wave_received] = 8990;
  before.v[w::wave_sent] = 8000;
  EXPECT_EQ(judge_wave(now.v, before.v, true, 16), wave_verdict::stop_stealing);
  // Off, the same wave is no reason to start again: look again.
  EXPECT_EQ(judge_wave(now.v, before.v, false, 16), wave_verdict::go_on);
}

TEST(TerminationWaves, StealingStaysOnWhileThereIsSomethingToSteal) {
  wave_sums now, before;
  now.v[w::wave_not_quiet] = 3;
  now.v[w::wave_movable] = 40;  // tasks queued somewhere
  EXPECT_EQ(judge_wave(now.v, before.v, true, 16), wave_verdict::go_on);
  now.v[w::wave_movable] = 0;
  now.v[w::wave_busy] = 1;  // a rank computing may spawn more
  EXPECT_EQ(judge_wave(now.v, before.v, true, 16), wave_verdict::go_on);
  now.v[w::wave_busy] = 0;
  now.v[w::wave_roots_done] = 15;  // a root still runs
  EXPECT_EQ(judge_wave(now.v, before.v, true, 16), wave_verdict::go_on);
}

TEST(TerminationWaves, WorkAppearingAgainRestartsStealing) {
  wave_sums now, before;
  now.v[w::wave_not_quiet] = 2;
  now.v[w::wave_movable] = 5;
  EXPECT_EQ(judge_wave(now.v, before.v, false, 16), wave_verdict::start_stealing);
  now.v[w::wave_movable] = 0;
  now.v[w::wave_busy] = 1;
  EXPECT_EQ(judge_wave(now.v, before.v, false, 16), wave_verdict::start_stealing);
}

TEST(TerminationWaves, TheEndNeedsStealingOffAndTwoAgreeingWaves) {
  wave_sums now, before;
  // Finished, but stealing still on: stop it first (a request may travel).
  EXPECT_EQ(judge_wave(now.v, before.v, true, 16), wave_verdict::stop_stealing);
  // Off and the same counts as the wave before: over.
  EXPECT_EQ(judge_wave(now.v, before.v, false, 16), wave_verdict::finished);
  // Off but the wave before differs (a batch moved in between): once more.
  before.v[w::wave_sent] = 499;
  EXPECT_EQ(judge_wave(now.v, before.v, false, 16), wave_verdict::go_on);
  // The wave before marked as not agreeing (after the switch): once more.
  wave_sums marked;
  marked.v[w::wave_not_quiet] = 1;
  EXPECT_EQ(judge_wave(now.v, marked.v, false, 16), wave_verdict::go_on);
  // Busy and progress are not compared.
  wave_sums moved = now;
  moved.v[w::wave_progress] = 99;
  EXPECT_EQ(judge_wave(moved.v, now.v, false, 16), wave_verdict::finished);
  // A batch in flight is never the end.
  wave_sums flight = now;
  flight.v[w::wave_received] = 499;
  EXPECT_EQ(judge_wave(flight.v, flight.v, false, 16), wave_verdict::go_on);
}

TEST(TerminationWaves, QuietWithStarvedTasksIsReported) {
  wave_sums now;
  now.v[w::wave_roots_done] = 12;  // roots wait on the starved tasks
  now.v[w::wave_starved] = 3;
  EXPECT_EQ(judge_wave(now.v, now.v, true, 16), wave_verdict::starved);
  wave_sums before = now;
  before.v[w::wave_received] = 400;
  EXPECT_EQ(judge_wave(now.v, before.v, true, 16), wave_verdict::go_on);
}

}  // namespace
