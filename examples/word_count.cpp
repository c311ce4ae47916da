// word_count: count words into a table spread over every core, then gather
// the ten most frequent.
//
// SPMD: one task per core (on_all_cores) makes its share of a text (words
// drawn from a skewed vocabulary) and sends each word on a typed channel to
// the core that owns it (by hash). The owner's handler counts it in its
// part of the table (a per_core map). end_phase() returns on every core once
// every word sent anywhere has been counted; each core then offers its local
// top ten, gatherv() brings them to core 0 in core order, and core 0 keeps
// the best ten. The counts are checked against a sequential count of the
// same text.
//
//   example-word-count [--words-per-core N]
//   mpirun -np 2 example-word-count --cores 2
#include <shoal/shoal.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

using i64 = std::int64_t;

/// A word as it travels: fixed size, so that it is trivially copyable.
struct word {
  char text[16];
  std::string_view view() const { return {text, strnlen(text, sizeof text)}; }
};

/// A word and its count, as gathered.
struct counted {
  word w;
  i64 count;
};

const char* const syllables[] = {"ka", "lo", "mi", "ne", "su", "ta", "ri", "po"};

// Word j of core c's share: two or three syllables, skewed to short ids.
word make_word(int core, i64 j) {
  std::uint64_t x = (static_cast<std::uint64_t>(core) << 40 | static_cast<std::uint64_t>(j)) *
                    0x9e3779b97f4a7c15ULL;
  x ^= x >> 29;
  const std::uint64_t id = (x % 512) * ((x >> 9) % 512) / 512;  // skewed: small ids are common
  word w{};
  std::string s = std::string(syllables[id % 8]) + syllables[(id / 8) % 8];
  if (id >= 64) s += syllables[(id / 64) % 8];
  std::memcpy(w.text, s.data(), std::min(s.size(), sizeof w.text));
  return w;
}

int owner(const word& w) {
  return static_cast<int>(std::hash<std::string_view>{}(w.view()) %
                          static_cast<std::size_t>(shoal::cores()));
}

shoal::per_core<std::unordered_map<std::string, i64>> table;  // this core's part
std::vector<counted> top_ten;                                  // core 0's answer

// The ten largest counts, ties by word: the same order everywhere.
void keep_top_ten(std::vector<counted>& v) {
  std::sort(v.begin(), v.end(), [](const counted& a, const counted& b) {
    return a.count != b.count ? a.count > b.count : a.w.view() < b.w.view();
  });
  if (v.size() > 10) v.resize(10);
}

void count_words(shoal::channel<word> ch, i64 per_core) {
  for (i64 j = 0; j < per_core; ++j) {
    const word w = make_word(shoal::mycore(), j);
    ch.send(owner(w), w);
  }
  ch.end_phase();  // every word of every core has been counted
  std::vector<counted> mine;
  for (const auto& [text, n] : table.local()) {
    counted c{{}, n};
    std::memcpy(c.w.text, text.data(), text.size());
    mine.push_back(c);
  }
  keep_top_ten(mine);
  shoal::gathered<counted> all = shoal::gatherv(std::span<const counted>(mine), 0);
  if (shoal::mycore() == 0) {
    top_ten = std::move(all.values);
    keep_top_ten(top_ten);
  }
}

i64 parse_words(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--words-per-core") {
      char* end = nullptr;
      const long long v = std::strtoll(argv[i + 1], &end, 10);
      if (*end != '\0' || v < 0 || v > (1LL << 30)) {
        std::fprintf(stderr,
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
    auto ch = shoal::make_channel<word>([](const word& w) { ++table.local()[std::string(w.view())]; });
    shoal::on_all_cores([ch, per_core] { count_words(ch, per_core); });
    ch.close();
  });
  int status = 0;
  if (shoal::myrank() == 0) {
    std::map<std::string, i64> expected;  // the sequential count of the whole text
    for (int c = 0; c < shoal::cores(); ++c)
      for (i64 j = 0; j < per_core; ++j) ++expected[std::string(make_word(c, j).view())];
    std::vector<counted> want;
    for (const auto& [text, n] : expected) {
      counted c{{}, n};
      std::memcpy(c.w.text, text.data(), text.size());
      want.push_back(c);
    }
    keep_top_ten(want);
    bool same = want.size() == top_ten.size();
    for (std::size_t i = 0; same && i < want.size(); ++i)
      same = want[i].w.view() == top_ten[i].w.view() && want[i].count == top_ten[i].count;
    for (const counted& c : top_ten)
      std::printf("%-8.*s %lld\n", static_cast<int>(c.w.view().size()), c.w.text,
                  static_cast<long long>(c.count));
    status = same ? 0 : 1;
    std::printf("word_count: %lld words on %d cores, %zu distinct, top ten as counted sequentially: %s\n",
                static_cast<long long>(per_core * shoal::cores()), shoal::cores(), expected.size(),
                same ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return status;
}
