// pipeline: producers and consumers meeting at full/empty cells.
//
// Every core runs one consumer task that reads items from its own cell
// (read_fe: waits until full, takes the item, marks it empty) and folds them
// into a checksum. Producer tasks on every core make items and send each to
// the consumer core chosen by the item; there a small task writes it into
// the cell (write_ef: waits until empty). Many writers wait on one cell at
// once and each read lets exactly one of them in. The checksum of every
// core is combined with allreduce_sum and checked against a sequential fold
// of the same items.
//
//   example-pipeline [--items N]
//   mpirun -np 2 example-pipeline --cores 2
#include <shoal/shoal.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using u64 = std::uint64_t;
using i64 = std::int64_t;

u64 item(i64 i) { return static_cast<u64>(i) * 0x9e3779b97f4a7c15ULL ^ 0x5bd1e995ULL; }
int consumer_of(i64 i) {
  return static_cast<int>((item(i) >> 32) % static_cast<u64>(shoal::cores()));
}
u64 fold(u64 acc, u64 v) { return acc + (v ^ (v >> 17)); }  // order-independent

shoal::per_core<shoal::full_empty<u64>> cell;  // one cell per consumer core
u64 total_checksum = 0;                        // core 0's answer

void consume(i64 items) {
  i64 mine = 0;
  for (i64 i = 0; i < items; ++i) mine += consumer_of(i) == shoal::mycore();
  u64 sum = 0;
  for (i64 k = 0; k < mine; ++k) sum = fold(sum, cell.local().read_fe());
  const u64 all = shoal::allreduce_sum(sum);
  if (shoal::mycore() == 0) total_checksum = all;
}

void produce(i64 items) {
  // Core c makes items c, c + cores, ...; each goes to its consumer's cell.
  for (i64 i = shoal::mycore(); i < items; i += shoal::cores()) {
    const u64 v = item(i);
    shoal::send(consumer_of(i), [v] { shoal::spawn([v] { cell.local().write_ef(v); }); });
  }
}

i64 parse_items(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--items") {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (*end != '\0' || v < 0 || v > 1'000'000) {
        std::fprintf(stderr, "example-pipeline: --items: expected an integer in [0, 1000000], got '%s'\n",
                     argv[i + 1]);
        std::exit(2);
      }
      return v;
    }
  return 20000;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  const i64 items = parse_items(argc, argv);
  shoal::run([items] {
    shoal::on_all_cores([items] {
      shoal::spawn([items] { produce(items); });
      consume(items);
    });
  });
  int status = 0;
  if (shoal::myrank() == 0) {
    u64 expected = 0;
    for (i64 i = 0; i < items; ++i) expected = fold(expected, item(i));
    status = expected == total_checksum ? 0 : 1;
    std::printf("pipeline: %lld items through %d cells, checksum %llx, sequential %llx: %s\n",
                static_cast<long long>(items), shoal::cores(),
                static_cast<unsigned long long>(total_checksum),
                static_cast<unsigned long long>(expected), status == 0 ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return status;
}
