// What a serialised value costs in BCL's hash table (bcl/object.hpp): every
// core inserts `keys` keys of its own, then finds the next core's keys
// (atomic, then find_only), with u64 values (inline) and with std::string
// values of 8, 100, 1000 and 10000 characters (a serial_ptr in the bucket,
// the bytes in the inserting core's arena). Kinds are interleaved, `reps`
// rounds; the median per kind is printed on rank 0:
//
//   [mpirun -np R] bcl-object-rate --cores C --one-sided B [--keys N] [--reps K]
//   bcl_object backend=B shape=RxC value=V op=OP keys=N ns_per_op=X
//
// (X: wall time between the barriers around a phase, over one core's
// operations, so the per-call latency seen by a core with every core busy.)
#include <shoal/bcl/hash_map.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_args.hpp"

namespace {

using u64 = std::uint64_t;
using clock_type = std::chrono::steady_clock;

struct phase_times {
  double insert = 0, find = 0, find_only = 0;
};

template <class F>
void timed_phase(double* seconds, const F& body) {
  shoal::barrier();
  const auto t0 = clock_type::now();
  body();
  shoal::barrier();
  if (shoal::mycore() == 0)
    *seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
}

// One round for value type V; len: the string's characters (ignored for u64).
template <class V>
void measure(u64 keys, u64 len, phase_times* t) {
  using map = shoal::bcl::hash_map<u64, V>;
  const map m = map::make(2 * keys, keys * (len + 16) + 4096);
  shoal::on_all_cores(
      [m, keys = static_cast<std::uint32_t>(keys), len = static_cast<std::uint32_t>(len), t] {
        map h = m;
        const u64 n = static_cast<u64>(shoal::cores()), me = static_cast<u64>(shoal::mycore());
        V value{};
        if constexpr (std::is_same_v<V, std::string>) value.assign(len, 'x');
        u64 sink = 0;
        timed_phase(&t->insert, [&] {
          for (u64 i = 0; i < keys; ++i) h.insert(i * n + me, value);
        });
        timed_phase(&t->find, [&] {
          for (u64 i = 0; i < keys; ++i) sink += h.find(i * n + (me + 1) % n).has_value();
        });
        timed_phase(&t->find_only, [&] {
          for (u64 i = 0; i < keys; ++i)
            sink += h.find(i * n + (me + 1) % n, shoal::bcl::hash_promise::find_only).has_value();
        });
        if (sink != 2 * u64{keys})
          std::fprintf(stderr, "bcl-object-rate: %llu of %llu keys found\n",
                       static_cast<unsigned long long>(sink),
                       static_cast<unsigned long long>(2 * u64{keys}));
      });
  map d = m;
  d.destroy();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  u64 keys = 2000, reps = 5;
  bench_args::read_flags("bcl-object-rate", argc, argv, {"--keys", "--reps"},
                         [&](const bench_args::value& v) {
                           if (v.flag == "--keys")
                             keys = v.whole(1, 1 << 24);
                           else
                             reps = v.whole(1, 1000);
                         });
  const std::vector<u64> lengths = {0, 8, 100, 1000, 10000};  // 0: the u64 table
  std::vector<std::vector<phase_times>> got(lengths.size());
  shoal::run([&] {
    for (u64 r = 0; r < reps; ++r)
      for (std::size_t k = 0; k < lengths.size(); ++k) {
        phase_times t;
        if (lengths[k] == 0)
          measure<u64>(keys, 0, &t);
        else
          measure<std::string>(keys, lengths[k], &t);
        got[k].push_back(t);
      }
  });
  if (shoal::myrank() == 0) {
    const std::string shape =
        std::to_string(shoal::ranks()) + "x" + std::to_string(shoal::cores() / shoal::ranks());
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      const std::string value = lengths[k] == 0 ? "u64" : "string:" + std::to_string(lengths[k]);
      const auto print = [&](const char* op, double phase_times::*f) {
        std::vector<double> s;
        for (const phase_times& t : got[k]) s.push_back(t.*f);
        std::printf("bcl_object backend=%s shape=%s value=%s op=%s keys=%llu ns_per_op=%.0f\n",
                    shoal::one_sided_backend_name(), shape.c_str(), value.c_str(), op,
                    static_cast<unsigned long long>(keys),
                    median(s) * 1e9 / static_cast<double>(keys));
      };
      print("insert", &phase_times::insert);
      print("find", &phase_times::find);
      print("find_only", &phase_times::find_only);
    }
  }
  shoal::finalize();
  return 0;
}
