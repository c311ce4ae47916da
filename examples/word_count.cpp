// word_count: count words into a distributed counting set, then rank the
// ten most frequent.
//
// SPMD: one task per core (on_all_cores) makes its share of a text (words
// drawn from a skewed vocabulary) and inserts each word into one
// shoal::counting_set<std::string> (include/shoal/containers/counting_set.hpp):
// the word travels to the core that owns it, which counts it. top_k(10) is
// collective: it waits until every insert has been counted, then ranks the
// ten largest counts (ties by word) on every core. The ranking is checked
// against a sequential count of the same text.
//
//   example-word-count [--words-per-core N]
//   mpirun -np 2 example-word-count --cores 2
#include <shoal/containers/counting_set.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using i64 = std::int64_t;
using ranking = std::vector<std::pair<std::string, std::uint64_t>>;

const char* const syllables[] = {"ka", "lo", "mi", "ne", "su", "ta", "ri", "po"};

// Word j of core c's share: two or three syllables, skewed to short ids.
std::string make_word(int core, i64 j) {
  std::uint64_t x = (static_cast<std::uint64_t>(core) << 40 | static_cast<std::uint64_t>(j)) *
                    0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  const std::uint64_t id = (x % 512) * ((x >> 9) % 512) / 512;  // skewed: small ids are common
  std::string s = std::string(syllables[id % 8]) + syllables[(id / 8) % 8];
  if (id >= 64) s += syllables[(id / 64) % 8];
  return s;
}

ranking top_ten;  // core 0's answer

void count_words(shoal::counting_set<std::string> words, i64 per_core) {
  for (i64 j = 0; j < per_core; ++j) words.async_insert(make_word(shoal::mycore(), j));
  ranking top = words.top_k(10);  // every word of every core counted, then ranked
  if (shoal::mycore() == 0) top_ten = std::move(top);
}

i64 parse_words(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--words-per-core") {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (*end != '\0' || v < 0 || v > (1LL << 30)) {
        std::fprintf(
            stderr,
            "example-word-count: --words-per-core: expected an integer in [0, 2^30], got '%s'\n",
            argv[i + 1]);
        std::exit(2);
      }
      return v;
    }
  return 200000;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  const i64 per_core = parse_words(argc, argv);
  shoal::run([per_core] {
    auto words = shoal::counting_set<std::string>::create();
    shoal::on_all_cores([words, per_core] { count_words(words, per_core); });
    words.destroy();
  });
  int status = 0;
  if (shoal::myrank() == 0) {
    std::map<std::string, std::uint64_t> expected;  // the sequential count of the whole text
    for (int c = 0; c < shoal::cores(); ++c)
      for (i64 j = 0; j < per_core; ++j) ++expected[make_word(c, j)];
    ranking want(expected.begin(), expected.end());
    std::stable_sort(want.begin(), want.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    if (want.size() > 10) want.resize(10);
    const bool same = want == top_ten;
    for (const auto& [w, n] : top_ten)
      std::printf("%-8s %llu\n", w.c_str(), static_cast<unsigned long long>(n));
    status = same ? 0 : 1;
    std::printf(
        "word_count: %lld words on %d cores, %zu distinct, top ten as counted sequentially: %s\n",
        static_cast<long long>(per_core * shoal::cores()), shoal::cores(), expected.size(),
        same ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return status;
}
