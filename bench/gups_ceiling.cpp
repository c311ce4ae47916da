// gups-ceiling: what the memory system allows GUPS on this machine, with
// no communication at all. Each of --threads threads owns 1/threads of a
// table of 2^--log-table words (huge pages, as the app's table and the
// baseline's) and XORs 4 x its words of HPCC stream values into its own
// part through the app's apply_queue (apps/gups/apply_queue.hpp: the same
// prefetch distance as the app's handler). No update leaves its thread,
// so the figure is an upper bound for `shoal gups` and for its MPI
// baseline at the same table size and the same number of cores: their
// ratio to it says how much of the time goes to anything but the table's
// cache misses (generation, aggregation, messages, synchronisation).
//
// A second, untimed pass applies the same values again; XOR undoes the
// first, and the program fails unless every word is back to its initial
// value (so the timed loop did apply what it claims).
//
//   gups-ceiling [--log-table 26] [--threads 2] [--json]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "gups/apply_queue.hpp"
#include "gups/plain/hpcc_stream.hpp"
#include "gups/plain/huge_pages.hpp"

namespace {

using shoal_apps::gups::apply_queue;

/// Applies `n` stream values, from the stream's n-th value on, to `part`
/// (`words` words, a power of two).
void apply_stream(std::uint64_t* part, std::uint64_t words, std::uint64_t first, std::uint64_t n) {
  apply_queue q;
  q.set_part(part);
  std::uint64_t r = shoal_apps::gups::hpcc_starts(first);
  for (std::uint64_t k = 0; k < n; ++k) {
    r = shoal_apps::gups::hpcc_next(r);
    q.push(r & (words - 1), r);
  }
  q.drain();
}

}  // namespace

int main(int argc, char** argv) {
  int log_table = 26;
  int threads = 2;
  bool json = false;
  CLI::App cli{"gups-ceiling: GUPS with every update applied by the thread that owns its word"};
  cli.add_option("--log-table", log_table, "the table has 2^N 64-bit words")
      ->check(CLI::Range(12, 34))
      ->capture_default_str();
  cli.add_option("--threads", threads, "threads, each owning an equal part (a power of two)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cli.add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(cli, argc, argv);
  if ((threads & (threads - 1)) != 0 || (std::uint64_t{1} << log_table) < 4096U * threads) {
    std::fprintf(stderr,
                 "gups-ceiling: error: --threads %d: must be a power of two leaving each thread "
                 "at least 4096 words of the 2^%d\n",
                 threads, log_table);
    return 2;
  }
  const std::uint64_t words = std::uint64_t{1} << log_table;
  const std::uint64_t part_words = words / static_cast<std::uint64_t>(threads);
  const std::uint64_t per_thread = 4 * part_words;  // HPCC: 4 updates a word

  std::vector<shoal_apps::gups::word_array> parts;
  for (int t = 0; t < threads; ++t) parts.push_back(shoal_apps::gups::allocate_words(part_words));
  auto on_threads = [&](auto&& body) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(body, t);
    for (std::thread& th : pool) th.join();
  };
  on_threads([&](int t) {  // first touch by the thread that uses the part
    std::uint64_t* p = parts[static_cast<std::size_t>(t)].get();
    for (std::uint64_t j = 0; j < part_words; ++j) p[j] = j;
  });

  auto run = [&](int t) {
    apply_stream(parts[static_cast<std::size_t>(t)].get(), part_words,
                 static_cast<std::uint64_t>(t) * per_thread, per_thread);
  };
  const auto t0 = std::chrono::steady_clock::now();
  on_threads(run);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  on_threads(run);  // undoes the timed pass

  std::uint64_t wrong = 0;
  for (int t = 0; t < threads; ++t) {
    const std::uint64_t* p = parts[static_cast<std::size_t>(t)].get();
    for (std::uint64_t j = 0; j < part_words; ++j) wrong += p[j] != j ? 1 : 0;
  }
  const double updates = static_cast<double>(per_thread) * threads;
  const double gups = updates / seconds / 1e9;
  if (json) {
    fmt::print(
        "{{\"app\": \"gups-ceiling\", \"log_table\": {}, \"threads\": {}, \"time_s\": {}, "
        "\"rate\": {}, \"unit\": \"GUPS\", \"wrong\": {}}}\n",
        log_table, threads, seconds, gups, wrong);
  } else {
    fmt::print(
        "gups-ceiling: 2^{} words, {} threads: {:.4f} GUPS ({:.2f} ns an update a thread), "
        "{} words wrong after undoing\n",
        log_table, threads, gups, seconds / static_cast<double>(per_thread) * 1e9, wrong);
  }
  return wrong == 0 ? 0 : 1;
}
