// Worker stacks under AddressSanitizer (issue 18). ASan keeps a shadow of every
// stack frame's redzones; it must be told when a core switches between
// worker stacks (fiber_sanitizer.hpp), or frames unwound by an exception
// inside a task, and stacks unmapped with live frames on them, leave stale
// poison that a later frame or worker record trips over ("stack-buffer-
// overflow" in code that is correct, as in the issue's forall report).
// These tests are ordinary runtime tests in any build; in an ASan build they
// fail with a sanitizer report when the annotations are missing.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "tasks/scheduler.hpp"
#include "test_support.hpp"

namespace {

using shoal_test::cores_test;

// Recurses `depth` frames, each holding an addressable array (so ASan puts
// redzones around it), then throws from the innermost one.
[[gnu::noinline]] int throw_from_depth(int depth) {
  volatile char pad[96];
  pad[depth % 96] = static_cast<char>(depth);
  if (depth == 0) throw std::runtime_error("thrown from the bottom of a task's frames");
  return throw_from_depth(depth - 1) + pad[depth % 96];
}

// Writes a large local buffer as one range where the unwound frames lay; ASan
// checks the whole range, so any stale redzone in it is reported.
[[gnu::noinline]] int touch_big_frame() {
  char buf[16384];
  std::memset(buf, 1, sizeof buf);
  const volatile char* v = buf;
  return v[sizeof buf - 1];
}

// Throws through `depth` frames, catches, then reuses the same stack range.
int throw_catch_then_reuse(int depth) {
  int caught = 0;
  try {
    caught += throw_from_depth(depth);
  } catch (const std::runtime_error&) {
    caught = 1;
  }
  return caught + touch_big_frame() - 1;
}

class fiber_stacks : public cores_test {};

TEST_P(fiber_stacks, FramesUnwoundByACaughtExceptionLeaveTheStackUsable) {
  constexpr int tasks = 64;
  std::vector<int> results(tasks, 0);
  run([&] {
    int* r = results.data();
    shoal::completion_event done(tasks);
    shoal::completion_event* d = &done;
    for (int i = 0; i < tasks; ++i) {
      shoal::spawn<shoal::stealable>([r, d, i] {
        r[i] = throw_catch_then_reuse(8 + i % 24);
        d->complete();
      });
    }
    done.wait();
  });
  for (int i = 0; i < tasks; ++i) EXPECT_EQ(results[static_cast<std::size_t>(i)], 1) << i;
}

// The shape of the report: forall over a global array whose
// iterations suspend, in runtimes started one after another in one process
// with different stack sizes, so each runtime's stacks are mapped where the
// previous one's frames (and exception-unwound frames) were.
TEST_P(fiber_stacks, ForallInRuntimesStartedOneAfterAnother) {
  constexpr std::int64_t n = 4096;
  for (const int stack_kb : {64, 80, 48, 96, 64}) {
    shoal::config cfg = config();
    cfg.stack_kb = stack_kb;
    std::int64_t sum = 0;
    run(cfg, [&] {
      std::int64_t* s = &sum;
      auto a = shoal::global_alloc<std::int64_t>(n);
      shoal::forall(
          a, n,
          [](std::int64_t i, std::int64_t& x) {
            x = i + throw_catch_then_reuse(static_cast<int>(i % 16));
            if (i % 64 == 0) shoal::yield();
          },
          64);
      std::int64_t total = 0;
      for (std::int64_t i = 0; i < n; ++i) total += shoal::delegate::read(a + i);
      *s = total;
      shoal::global_free(a);
    });
    EXPECT_EQ(sum, n * (n - 1) / 2 + n) << "stack_kb " << stack_kb;
  }
}

// What one call on the service stack did: where its frame lay and what it summed.
struct service_call {
  const char* frame = nullptr;
  std::int64_t sum = 0;
  int nested = 0;
};

// Needs 256 KiB of stack, 8 times what the workers below have.
[[gnu::noinline]] void use_big_frame(void* arg) {
  auto* c = static_cast<service_call*>(arg);
  char buf[256 * 1024];
  std::memset(buf, 3, sizeof buf);
  const volatile char* v = buf;
  c->frame = buf;
  c->sum = 0;
  for (std::size_t i = 0; i < sizeof buf; i += 4096) c->sum += v[i];
  // A call from the service stack runs where it is (directly).
  shoal::detail::this_scheduler().run_off_worker_stack(
      [](void* p) { ++static_cast<service_call*>(p)->nested; }, c);
}

// scheduler::run_off_worker_stack (how a worker drives the network: MPICH's
// MPI_Test overflowed a 64 KiB worker stack): from workers with 32 KiB
// stacks that yield between calls, a function needing 256 KiB runs, on a
// stack that is not the calling worker's, and a call made from there runs
// in place.
TEST_P(fiber_stacks, ServiceStackHoldsWhatAWorkerStackCannot) {
  constexpr int tasks = 32;
  std::vector<service_call> calls(tasks);
  std::vector<int> outside(tasks, 0);
  shoal::config cfg = config();
  cfg.stack_kb = 32;
  run(cfg, [&] {
    service_call* c = calls.data();
    int* out = outside.data();
    shoal::completion_event done(tasks);
    shoal::completion_event* d = &done;
    for (int i = 0; i < tasks; ++i) {
      shoal::spawn<shoal::stealable>([c, out, d, i] {
        auto& s = shoal::detail::this_scheduler();
        const auto* w = s.running();
        for (int round = 0; round < 3; ++round) {
          s.run_off_worker_stack(use_big_frame, &c[i]);
          shoal::yield();
        }
        out[i] = c[i].frame < w->stack_lo || c[i].frame >= w->stack_lo + w->stack_bytes;
        d->complete();
      });
    }
    done.wait();
  });
  for (int i = 0; i < tasks; ++i) {
    const auto& c = calls[static_cast<std::size_t>(i)];
    EXPECT_EQ(c.sum, 3 * 64) << i;
    EXPECT_EQ(c.nested, 3) << i;
    EXPECT_EQ(outside[static_cast<std::size_t>(i)], 1) << i;
  }
}

SHOAL_TEST_CORES(fiber_stacks);

}  // namespace
