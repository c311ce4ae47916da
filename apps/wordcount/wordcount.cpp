// `shoal wordcount`: word frequencies over text files or generated Zipf
// text, on shoal::counting_set (include/shoal/containers/counting_set.hpp).
//
//   shoal wordcount --files a.txt b.txt ... [--top K] [--json]
//   shoal wordcount [--words-per-core N] [--vocabulary V] [--zipf-s S] [--seed s] [--top K]
//
// Files are shared out whole: core c reads files c, c + cores, ... Zipf text:
// each core generates its own seeded stream (plain/word_count.hpp). Each core
// counts its words into one counting_set (async_insert; the owner of a word
// counts it), then top_k(K) ranks the K most frequent words (ties by word).
// Timed: counting and ranking. Validation (untimed): every (word, count) is
// gathered to core 0 and compared with a sequential count of the same input,
// and so is the ranking. Bad input (a missing, empty or binary file, a pipe,
// a word over 1000 bytes, --top 0, a file another rank sees with other words,
// a Zipf flag with --files) exits 2 naming the flag, file and line.
#include <shoal/containers/counting_set.hpp>
#include <shoal/shoal.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/text_input.hpp"
#include "common/same_input.hpp"
#include "wordcount/plain/word_count.hpp"

namespace shoal_apps {

namespace {

namespace wc = wordcount;
using word_set = shoal::counting_set<std::string>;

constexpr std::uint64_t max_vocabulary = std::uint64_t{1} << 26;  // its CDF: 512 MiB at most
/// The most Zipf words a run may generate: hours on one core, and as long
/// again for the sequential check (as randomwalk's 2^40 steps).
constexpr double max_generated_words = 1099511627776.0;

wc::problem g_problem;  // set on every process before shoal::run
struct outcome {
  wc::ranking top;
  std::vector<std::pair<std::string, std::uint64_t>> all;
  std::uint64_t words = 0;
  std::size_t distinct = 0;
};
outcome g_out;  // filled by core 0 (rank 0)

/// One task per core: counts this core's words, then ranks them (collective).
void count_share(word_set words) {
  const wc::problem& p = g_problem;
  const int me = shoal::mycore();
  std::uint64_t mine = 0;
  auto insert = [&](std::string_view w) {
    words.async_insert(std::string(w));
    ++mine;
  };
  if (p.files.empty()) {
    const std::vector<double> cdf = wc::zipf_cdf(p.vocabulary, p.zipf_s);
    for (std::uint64_t i = 0; i < p.words_per_core; ++i)
      insert(wc::zipf_word(wc::zipf_rank(cdf, p.seed, me, i)));
  } else {
    for (const std::string& f : wc::files_of_core(p, me, shoal::cores()))
      wc::for_each_word_in_file(f, insert);
  }
  wc::ranking top = words.top_k(p.top);  // begins with a barrier: every insert counted
  const std::uint64_t total = shoal::allreduce_sum(mine);
  if (me == 0) g_out.top = std::move(top), g_out.words = total;
}

void run_in_root(report& out) {
  const wc::problem& p = g_problem;
  auto words = word_set::create();
  const auto t0 = std::chrono::steady_clock::now();
  shoal::on_all_cores([words] { count_share(words); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  shoal::on_all_cores([words] {
    auto all = words.gather(0);
    const std::size_t distinct = words.size();
    if (shoal::mycore() == 0) g_out.all = std::move(all), g_out.distinct = distinct;
  });
  words.destroy();
  out.set_problem(p.files.empty() ? fmt::format("Zipf({}) text, {} words per core, vocabulary {}",
                                                p.zipf_s, p.words_per_core, p.vocabulary)
                                  : fmt::format("{} file(s)", p.files.size()));
  out.set_time(seconds);
  out.set_rate(static_cast<double>(g_out.words) / seconds / 1e6, "M words/s");
  out.set("words", g_out.words);
  out.set("distinct", g_out.distinct);
  out.set("top", p.top);
  nlohmann::json ranked = nlohmann::json::array();
  for (const auto& [w, n] : g_out.top) ranked.push_back({w, n});
  out.set("ranking", ranked, g_out.top.size() <= 20);
}

/// "--files a b ...", escaped and cut, for messages.
std::string files_flag(const std::vector<std::string>& files) {
  std::string all;
  for (const std::string& f : files) all += " " + f;
  return "--files" + printable(all, 200);
}

/// The options of generated text (--words-per-core, --vocabulary, --zipf-s,
/// --seed): refused with --files.
using zipf_flags = std::array<const CLI::Option*, 4>;

void run_wordcount(wc::problem p, bool corrupt, const zipf_flags& zipf, run_context& ctx) {
  for (const CLI::Option* f : zipf)
    refuse_unused(f, p.files.empty(), "generated Zipf text", "--files");
  if (p.top == 0) throw input_error("--top: expected at least 1 word to rank, got 0");
  if (p.files.empty() && (p.vocabulary == 0 || p.vocabulary > max_vocabulary))
    throw input_error(
        fmt::format("--vocabulary: expected [1, {}], got {}", max_vocabulary, p.vocabulary));
  if (p.files.empty() && p.words_per_core == 0)
    throw input_error("--words-per-core: expected at least 1, got 0");
  const double words = static_cast<double>(p.words_per_core) * shoal::cores();
  if (p.files.empty() && words > max_generated_words)
    throw input_error(fmt::format(
        "--words-per-core {} on {} cores: {:.3g} words, more than the 2^40 ({:.2g}) a run may "
        "generate; lower --words-per-core",
        p.words_per_core, shoal::cores(), words, max_generated_words));
  if (!(p.zipf_s > 0 && p.zipf_s <= 10))
    throw input_error(fmt::format("--zipf-s: expected an exponent in (0, 10], got {}", p.zipf_s));
  // Every rank reads every file: bad input ends the job before it starts,
  // and so does a file that another rank sees with other words in it.
  const std::uint64_t digest = wc::check_files(p.files);
  if (!p.files.empty()) check_same_input_on_every_rank(digest, files_flag(p.files));
  p.participants = shoal::cores();
  g_problem = std::move(p);
  g_out = {};
  shoal::run([&] { run_in_root(ctx.out); });
  if (shoal::myrank() != 0) return;
  // Validation: the same input counted sequentially, every word compared.
  if (corrupt && !g_out.all.empty()) ++g_out.all.front().second;  // the check must see it
  const auto reference = wc::sequential_counts(g_problem);
  const wc::ranking best = wc::best_of(reference, g_problem.top);
  const bool same_counts = g_out.all == reference;
  const bool same_top = g_out.top == best;
  ctx.out.set_validated(
      same_counts && same_top,
      fmt::format("{} distinct words ({} expected), counts {}, top {} {}", g_out.all.size(),
                  reference.size(), same_counts ? "equal" : "DIFFER", g_problem.top,
                  same_top ? "equal" : "DIFFER"));
}

}  // namespace

app_spec wordcount_app() {
  return {
      "wordcount",
      "word frequencies and the top K words of text files or Zipf text (counting_set)",
      {"counting_set"},
      [](CLI::App& cmd) -> runner {
        auto p = std::make_shared<wc::problem>();
        p->words_per_core = 1000000;
        p->vocabulary = 100000;
        p->seed = 1;
        cmd.add_option("--files", p->files, "text files to count (default: Zipf text)")
            ->check(file_name_check());
        const zipf_flags zipf{
            cmd.add_option("--words-per-core", p->words_per_core, "Zipf words each core generates")
                ->check(unsigned_64_check())
                ->capture_default_str(),
            cmd.add_option("--vocabulary", p->vocabulary, "distinct Zipf words possible")
                ->check(unsigned_64_check())
                ->capture_default_str(),
            cmd.add_option("--zipf-s", p->zipf_s, "Zipf exponent")->capture_default_str(),
            cmd.add_option("--seed", p->seed, "seed of the Zipf text")
                ->check(unsigned_64_check())
                ->capture_default_str()};
        cmd.add_option("--top", p->top,
                       "words to rank (K >= 1; above the number of distinct words: all)")
            ->check(unsigned_64_check())
            ->capture_default_str();
        auto corrupt = std::make_shared<bool>(false);
        hide_from_help(
            cmd, cmd.add_flag("--corrupt", *corrupt, "spoil one count before validation (tests)"));
        return [p, corrupt, zipf](run_context& ctx) { run_wordcount(*p, *corrupt, zipf, ctx); };
      }};
}

}  // namespace shoal_apps
