// Insert and find rates of BCL's hash table (include/shoal/bcl/) for the
// backend --one-sided selects: every core of the job inserts, then finds,
// `keys` distinct u64 keys of its own at once (SPMD, like BCL's
// microbenchmarks). bench/bcl.py runs it per backend at 1 x 2 and 2 x 1,
// interleaved, and writes bench/results/bcl.md.
//
//   [mpirun -np R] bcl-rate --cores C --one-sided B [--keys N[,N...]]
//
// Per size and operation, one line on rank 0:
//   bcl backend=B shape=RxC op=OP keys=N seconds=S ops_per_s=X path=P cpus=U
// (X: every core's operations over the wall time from the barrier before to
// the barrier after; P: how the table reaches buckets for OP, onesided or
// delegate, bcl/path.hpp: auto unless SHOAL_BCL_PATH forces it, which
// bench/bcl.py does for the one-sided rows; U: apart when every core of the
// job ended the phase on a CPU of its own, shared when two ended it on one
// CPU, which the OS then ran in turns: such a phase measured that). Ops:
// insert_atomic = hash_map::insert (2A + W + F); insert_buffer =
// hash_map_buffer::insert of the same keys, flush included; find_atomic =
// hash_map::find (2A + R); find_only = find with hash_promise::find_only
// (R). Keys found are the next core's, so most are remote. The table has
// 2N buckets per core.
//
// Fairness: both insert phases start on a fresh table (made and zeroed by
// its owners just before) and run between the same two barriers; the
// buffered one also pays its flush (two barriers and an allreduce). Its
// constructor (the queue's allocation and first touch) is outside the
// timer, as a table's make is for the atomic phase. Both find phases follow
// one untimed find_only pass over the same keys, so neither is the first
// to pull the table into the finding core's cache.
#include <shoal/bcl/hash_map.hpp>
#include <shoal/bcl/hash_map_buffer.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sched.h>

#include "bench_args.hpp"

namespace {

using u64 = std::uint64_t;
using map = shoal::bcl::hash_map<u64, u64>;
using clock_type = std::chrono::steady_clock;

inline void benchmark_sink(u64 v) { asm volatile("" : : "r"(v)); }

// Key i of core c: distinct over the job, scattered by the table's hash.
inline u64 key_of(u64 i, u64 c, u64 n) { return i * n + c; }

// One timed phase on core 0 (rank 0, where the results live): its wall
// time, and whether two cores of the job ended it on one CPU.
struct phase_time {
  double seconds = 0;
  bool shared_cpu = false;
};

// Runs body() on every core between two barriers; core 0 stores the wall
// time in *t, and whether any two cores were on the same CPU when their
// body() returned (sched_getcpu, gathered after the second barrier,
// untimed; the OS seldom moves a thread within a phase this short).
template <class F>
void timed_phase(phase_time* t, const F& body) {
  shoal::barrier();
  const auto t0 = clock_type::now();
  body();
  const int cpu = sched_getcpu();
  shoal::barrier();
  const double seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::vector<int> cpus = shoal::allgather(cpu);
  std::sort(cpus.begin(), cpus.end());
  if (shoal::mycore() == 0) {
    t->seconds = seconds;
    t->shared_cpu = std::adjacent_find(cpus.begin(), cpus.end()) != cpus.end();
  }
}

struct results {
  phase_time insert_atomic, insert_buffer, find_atomic, find_only;
  const char* path = "";            // insert and find (atomic)
  const char* find_only_path = "";  // find (find_only)
};

void measure(u64 keys, results* r) {
  const map m = map::make(2 * keys);
  shoal::on_all_cores([m, keys, r] {
    map h = m;
    const u64 n = static_cast<u64>(shoal::cores()), me = static_cast<u64>(shoal::mycore());
    timed_phase(&r->insert_atomic, [&] {
      for (u64 i = 0; i < keys; ++i) h.insert(key_of(i, me, n), i);
    });
    const u64 next = (me + 1) % n;
    shoal::barrier();
    for (u64 i = 0; i < keys; ++i)  // untimed: see the header
      benchmark_sink(h.find(key_of(i, next, n), shoal::bcl::hash_promise::find_only).value_or(0));
    timed_phase(&r->find_atomic, [&] {
      for (u64 i = 0; i < keys; ++i) benchmark_sink(h.find(key_of(i, next, n)).value_or(0));
    });
    timed_phase(&r->find_only, [&] {
      for (u64 i = 0; i < keys; ++i)
        benchmark_sink(h.find(key_of(i, next, n), shoal::bcl::hash_promise::find_only).value_or(0));
    });
  });
  r->path = shoal::bcl::path_name(m.path());
  r->find_only_path = shoal::bcl::path_name(m.find_only_path());
  map d = m;
  d.destroy();
  const map fresh = map::make(2 * keys);
  shoal::on_all_cores([fresh, keys, r] {
    const u64 n = static_cast<u64>(shoal::cores()), me = static_cast<u64>(shoal::mycore());
    // Each owner receives about `keys` entries; room for twice that.
    shoal::bcl::hash_map_buffer<u64, u64> buf(fresh, 2 * keys + 1024, 256);
    timed_phase(&r->insert_buffer, [&] {
      for (u64 i = 0; i < keys; ++i) buf.insert(key_of(i, me, n), i);
      buf.flush();
    });
    buf.destroy();
  });
  d = fresh;
  d.destroy();
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  std::vector<u64> sizes = {1024, 8192};
  bench_args::read_flags("bcl-rate", argc, argv, {"--keys"}, [&sizes](const bench_args::value& v) {
    sizes = v.wholes(1, u64{1} << 26);
  });
  const std::string backend = shoal::one_sided_backend_name();
  const std::string shape =
      std::to_string(shoal::ranks()) + "x" + std::to_string(shoal::cores() / shoal::ranks());
  shoal::run([&] {
    for (u64 keys : sizes) {
      results r;
      measure(keys, &r);
      const double total = static_cast<double>(keys) * shoal::cores();
      const auto line = [&](const char* op, phase_time t, const char* path) {
        std::printf(
            "bcl backend=%s shape=%s op=%s keys=%llu seconds=%.6f ops_per_s=%.0f path=%s cpus=%s\n",
            backend.c_str(), shape.c_str(), op, static_cast<unsigned long long>(keys), t.seconds,
            total / t.seconds, path, t.shared_cpu ? "shared" : "apart");
      };
      line("insert_atomic", r.insert_atomic, r.path);
      line("insert_buffer", r.insert_buffer, "buffer");
      line("find_atomic", r.find_atomic, r.path);
      line("find_only", r.find_only, r.find_only_path);
      std::fflush(stdout);
    }
  });
  shoal::finalize();
  return 0;
}
