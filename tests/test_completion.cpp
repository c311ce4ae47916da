// Job-wide completion on one process: finish(f) over task trees (every spawn
// mode, messages, handlers), nested scopes, completion_ref, id reuse, and
// the misuse messages. The same behaviours across processes are in
// tests/mpi/dist_completion.cpp.
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "finish_tree.hpp"
#include "test_support.hpp"

namespace {

using shoal_test::cores_test;
using i64 = std::int64_t;

using finish_tree::g_nodes;

using finish_tree::node;
using finish_tree::tree_nodes;

class finish_scopes : public cores_test {};

// 5,000 trees, each counted exactly when finish returns (the hand-counted
// completion_event version of this was wrong in 1-2 of 5,000 runs).
TEST_P(finish_scopes, CountsEveryNodeOfATreeEveryTime) {
  static constexpr int depth = 4;
  static constexpr int reps = 5000;
  i64 wrong = 0;
  i64 first_wrong = -1;
  run([&] {
    for (int r = 0; r < reps; ++r) {
      g_nodes.store(0);
      shoal::finish([] { node(depth, true); });
      const i64 seen = g_nodes.load();
      if (seen != tree_nodes(depth)) {
        if (wrong++ == 0) first_wrong = seen;
      }
    }
  });
  EXPECT_EQ(wrong, 0) << "first wrong count " << first_wrong << " of " << tree_nodes(depth);
}

TEST_P(finish_scopes, NestedScopesWaitForTheirOwnWork) {
  i64 inner_seen = -1;
  i64 outer_seen = -1;
  std::atomic<i64> slow_done{0};
  run([&] {
    g_nodes.store(0);
    auto* slow = &slow_done;
    shoal::finish([slow, &inner_seen] {
      // Outer work that outlives the inner scope.
      shoal::spawn<shoal::stealable>([slow] {
        for (int k = 0; k < 200; ++k) shoal::yield();
        slow->store(1);
      });
      shoal::finish([] { node(5, true); });
      inner_seen = g_nodes.load();
    });
    outer_seen = slow_done.load();
  });
  EXPECT_EQ(inner_seen, tree_nodes(5));
  EXPECT_EQ(outer_seen, 1);
}

constexpr i64 n = 1000;  // cells of CountsDelegatesAndOnAllCores

TEST_P(finish_scopes, CountsDelegatesAndOnAllCores) {
  i64 sum = -1;
  run([&] {
    const auto a = shoal::global_alloc<i64>(n);
    shoal::forall(a, n, [](i64, i64& x) { x = 0; });
    shoal::completion_ref nobody_waits(0);  // default_gce(): not waited here
    shoal::finish([a, nobody_waits] {
      shoal::on_all_cores([a, nobody_waits] {
        for (i64 i = 0; i < n; ++i)
          shoal::send((a + i).core(), [a, i, nobody_waits] {
            shoal::delegate::async_add(a + (i * 7) % n, i64{1}, nobody_waits);
          });
      });
    });
    sum = 0;
    for (i64 i = 0; i < n; ++i) sum += *(a + i).local();
    shoal::global_free(a);
  });
  EXPECT_EQ(sum, n * ncores());
}

TEST_P(finish_scopes, AnExceptionLeavesTheScopeAndIsCaught) {
  bool caught = false;
  i64 after = -1;
  run([&] {
    g_nodes.store(0);
    try {
      shoal::finish([] { throw std::runtime_error("boom"); });
    } catch (const std::runtime_error&) {
      caught = true;
    }
    // Back outside any scope: this tree is counted by a fresh finish only.
    shoal::finish([] { node(2, true); });
    after = g_nodes.load();
  });
  EXPECT_TRUE(caught);
  EXPECT_EQ(after, tree_nodes(2));
}

SHOAL_TEST_CORES(finish_scopes);

class completion_refs : public cores_test {};

TEST_P(completion_refs, IdsAreReusedBeyondTheTable) {
  static constexpr int rounds = 2 * static_cast<int>(shoal::detail::max_events) + 10;
  i64 wrong = 0;
  run([&] {
    const auto cell = shoal::global_alloc<i64>(shoal::cores());
    for (int k = 0; k < rounds; ++k) {
      shoal::global_completion_event e;
      const auto at = cell + (k % shoal::cores());
      shoal::delegate::async_write(at, i64{k}, e);
      e.wait();
      if (*at.local() != k) ++wrong;
    }
    shoal::global_free(cell);
  });
  EXPECT_EQ(wrong, 0);
}

TEST_P(completion_refs, EventMadeBeforeRunIsUsableInside) {
  i64 sum = -1;
  shoal::init(config());
  {
    shoal::global_completion_event e;  // rank 0, before run()
    const shoal::completion_ref ref = e;
    shoal::run([&] {
      const auto a = shoal::global_alloc<i64>(64);
      shoal::forall(a, 64, [](i64, i64& x) { x = 0; });
      shoal::on_all_cores([a, ref] {
        for (i64 i = 0; i < 64; ++i) shoal::delegate::async_add(a + i, i64{1}, ref);
      });
      e.wait();
      sum = 0;
      for (i64 i = 0; i < 64; ++i) sum += *(a + i).local();
      shoal::global_free(a);
    });
  }
  shoal::finalize();
  EXPECT_EQ(sum, 64 * ncores());
}

SHOAL_TEST_CORES(completion_refs);

class completion_misuse : public shoal_test::death_test {};

/// Two cores: a handler can run on a core other than the root's.
template <class F>
void run_to_death(F body) {
  shoal_test::run_to_death(shoal_test::make_config(2), body);
}

TEST_F(completion_misuse, FinishInAHandlerIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                shoal::send(1, [] { shoal::finish([] {}); });
              }),
              ::testing::ExitedWithCode(shoal::exit_status::fatal), "shoal::finish outside a task");
}

TEST_F(completion_misuse, WaitInAHandlerIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                shoal::send(1, [] { shoal::default_gce().wait(); });
              }),
              ::testing::ExitedWithCode(shoal::exit_status::fatal), "global_completion_event::wait\\(\\) outside a task");
}

TEST_F(completion_misuse, TooManyEventsAliveIsNamed) {
  EXPECT_EXIT(run_to_death([] {
                std::vector<std::unique_ptr<shoal::global_completion_event>> all;
                for (std::uint32_t k = 0; k < shoal::detail::max_events; ++k)
                  all.push_back(std::make_unique<shoal::global_completion_event>());
              }),
              ::testing::ExitedWithCode(shoal::exit_status::fatal), "too many global_completion_events .* at most 4095");
}

TEST_F(completion_misuse, EnrollOutsideACoreIsNamed) {
  EXPECT_EXIT(
      {
        shoal::init(shoal_test::make_config(1));
        shoal::default_gce().enroll();
      },
      ::testing::ExitedWithCode(shoal::exit_status::fatal), "enrolled or completed outside a shoal core");
}

}  // namespace
