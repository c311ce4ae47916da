// The one-sided layer (one_sided.hpp) under mpirun with each backend forced:
//
//   mpirun -np R one_sided_job --cores C --one-sided direct|shm|rma|am [--misuse WHAT]
//
// Runs every check of one_sided_checks.hpp in one job and prints, on rank 0,
// "one_sided <backend>: <k> checks, <w> wrong values: PASSED|FAILED" (exit 1
// when any failed). --misuse null|range|align|remote-2d|plain-cross|plain-null makes one wrong
// call that must end the job with a clear message (tests/one_sided.cmake);
// --cycles N runs N - 1 shorter jobs first, each with its own init/finalize.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fast_queue_checks.hpp"
#include "mpi/check_tally.hpp"
#include "one_sided_checks.hpp"

namespace {

using namespace one_sided_checks;

// Cores whose process runs another one-sided backend than rank 0's
// (--one-sided node and auto decide on every rank alike, also when one
// rank's shared mapping fails). Counted by delegates to core 0, which
// work whatever the backends.
std::atomic<u64> g_other_backend{0};
u64 same_backend_everywhere() {
  g_other_backend = 0;
  shoal::on_all_cores([] {
    const int mine = static_cast<int>(shoal::one_sided_backend());
    shoal::delegate::call(0, [mine] {
      if (mine != static_cast<int>(shoal::one_sided_backend())) g_other_backend.fetch_add(1);
      return 0;
    });
  });
  return g_other_backend.load();
}

int misuse(const std::string& what) {
  shoal::run([what] {
    const auto a = shoal::global_alloc<u64>(16);
    if (what == "null") {
      shoal::rget(shoal::global_ptr<u64>{});
    } else if (what == "range") {
      shoal::rput(a + (std::int64_t{1} << 40), u64{1});
    } else if (what == "align") {
      shoal::fetch_add((a.reinterpret<char>() + 4).reinterpret<u64>(), u64{1});
    } else if (what == "remote-2d") {
      // A 2D pointer to a stack variable of the last core's process.
      const int last = shoal::cores() - 1;
      const auto p = shoal::delegate::call(last, [] {
        static u64 outside_the_heap = 0;
        return shoal::make_global(&outside_the_heap);
      });
      shoal::rget(p);
    } else if (what == "plain-cross") {
      // 8 elements from the middle of a block: past its end.
      (void)shoal::plain_address(a + 4, 8);
    } else if (what == "plain-null") {
      (void)shoal::plain_address(shoal::global_ptr<u64>{});
    }
  });
  std::fprintf(stderr, "misuse %s was not caught\n", what.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  std::string bad;
  int cycles = 1;
  std::int64_t later_network_bytes = 0;  // --later-network-bytes: the cycles after the first
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--misuse") == 0) bad = argv[i + 1];
    if (std::strcmp(argv[i], "--cycles") == 0) cycles = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--later-network-bytes") == 0)
      later_network_bytes = std::atoll(argv[i + 1]);
  }
  if (!bad.empty()) return misuse(bad);
  // --cycles N: N - 1 more init/run/finalize cycles first (the windows are
  // made and freed each time, as a test program with one job per test does;
  // shm's is freed at the next cycle's start).
  for (int c = 1; c < cycles; ++c) {
    shoal::config cfg = shoal::current_config();
    if (later_network_bytes > 0) cfg.network_bytes = later_network_bytes;
    u64 w = 0;  // set by the root task, which runs on rank 0
    shoal::run([&w] { w = put_flush_barrier_get() + fast_queue_checks::full_empty_and_wrap(); });
    shoal::finalize();
    if (w != 0) {
      std::printf("one_sided: cycle %d: %llu wrong values: FAILED\n", c,
                  static_cast<unsigned long long>(w));
      return 1;
    }
    shoal::init(cfg);
  }
  const std::string backend = shoal::one_sided_backend_name();
  shoal_test::check_tally tally;
  shoal::run([&] {
    const auto note = [&](const char* name, std::uint64_t w) { tally.note(name, w); };
    note("put_flush_barrier_get", put_flush_barrier_get());
    note("bulk_ranges", bulk_ranges());
    // Plain memory paths are fast: enough adds that cores overlap (a
    // non-atomic add then loses some; seen when it was made one).
    const bool plain = backend == "direct" || backend == "shm";
    note("fetch_ops_exact", fetch_ops_exact(plain ? 200000 : 500));
    note("cas_lock", cas_lock(100));
    note("two_d_pointers", two_d_pointers());
    note("plain_addresses", plain_addresses());
    if (backend == "am") note("mixed_with_delegates", mixed_with_delegates(300));
    note("fast_queue_redistribute", fast_queue_checks::redistribute(300, false));
    note("fast_queue_local_pop", fast_queue_checks::redistribute(300, true));
    note("fast_queue_full_empty_wrap", fast_queue_checks::full_empty_and_wrap());
    note("fast_queue_local_bulk_pop", fast_queue_checks::local_bulk_pop_in_order());
    note("same_backend_on_every_rank", same_backend_everywhere());
  });
  return tally.report_and_finalize("one_sided", backend);
}
