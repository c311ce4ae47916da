// The main job until the application driver lands: a parallel histogram.
// Every core draws random keys and adds one to the key's bucket in a global
// array through asynchronous delegates (one aggregated message each, no
// reply); the result is checked against a sequential count of the same keys.
#include <shoal/shoal.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr std::int64_t buckets = 1 << 16;
constexpr std::int64_t updates_per_core = 4'000'000;

std::uint64_t key_of(std::uint64_t core, std::uint64_t i) {
  std::uint64_t x = (core + 1) * 0x9e3779b97f4a7c15ULL ^ (i * 0xbf58476d1ce4e5b9ULL);
  x ^= x >> 31;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 29;
  return x % static_cast<std::uint64_t>(buckets);
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  int status = 0;  // the root runs on rank 0 only; other ranks succeed unless the job fails
  shoal::run([&] {
    auto table = shoal::global_alloc<std::int64_t>(buckets);
    shoal::forall(table, buckets, [](std::int64_t, std::int64_t& x) { x = 0; });
    const auto start = std::chrono::steady_clock::now();
    shoal::on_all_cores([table] {
      const auto me = static_cast<std::uint64_t>(shoal::mycore());
      for (std::int64_t i = 0; i < updates_per_core; ++i)
        shoal::delegate::async_add(
            table + static_cast<std::int64_t>(key_of(me, static_cast<std::uint64_t>(i))),
            std::int64_t{1});
      shoal::default_gce().wait();
    });
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<std::int64_t> expected(buckets, 0);
    for (int c = 0; c < shoal::cores(); ++c)
      for (std::int64_t i = 0; i < updates_per_core; ++i)
        ++expected[key_of(static_cast<std::uint64_t>(c), static_cast<std::uint64_t>(i))];
    std::int64_t wrong = 0;
    for (std::int64_t b = 0; b < buckets; ++b)
      if (shoal::delegate::read(table + b) != expected[static_cast<std::size_t>(b)]) ++wrong;
    const double total = static_cast<double>(updates_per_core) * shoal::cores();
    std::printf("histogram: %d cores, %lld buckets, %.0f updates in %.3f s = %.1f M updates/s\n",
                shoal::cores(), static_cast<long long>(buckets), total, secs, total / secs / 1e6);
    std::printf("validation: %s (%lld wrong buckets)\n", wrong == 0 ? "PASSED" : "FAILED",
                static_cast<long long>(wrong));
    status = wrong == 0 ? 0 : 1;
    shoal::global_free(table);
  });
  shoal::finalize();
  return status;
}
