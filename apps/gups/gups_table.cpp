// The GUPS table: allocation, initialisation and the untimed whole-table
// passes (wrong-word count, digest), each run on the words' home cores.
#include "gups/gups_table.hpp"

#include <bit>

#include "gups/plain/huge_pages.hpp"

namespace shoal_apps::gups {

shoal::per_core<std::uint64_t*> local_part;

namespace {

// Each core's share of a whole-table pass, summed afterwards by the root.
shoal::per_core<std::int64_t> wrong_here;
shoal::per_core<std::uint64_t> digest_here;

std::int64_t words(const gups_table& t) { return static_cast<std::int64_t>(t.mask()) + 1; }

}  // namespace

gups_table make_table(const gups_problem& p) {
  gups_table t;
  t.base = shoal::global_alloc<std::uint64_t>(p.table_words);
  t.log_table = static_cast<std::uint8_t>(p.log_table);
  const auto words_per_block = static_cast<std::uint64_t>(shoal::current_config().block_bytes) / 8;
  t.block_shift = static_cast<std::uint8_t>(std::countr_zero(words_per_block));
  t.cores = divider(static_cast<std::uint32_t>(shoal::cores()));
  // Block indices stay below 2^40 (--log-table <= 40), inside the divider's
  // range for any core count below 2^24.
  const shoal::global_ptr<std::uint64_t> base = t.base;
  const std::uint32_t shift = t.block_shift;
  const auto blocks = static_cast<std::uint64_t>(p.table_words) >> shift;
  const std::uint64_t part_words = (t.cores.quotient(blocks) + 1) << shift;
  const std::int64_t words = p.table_words;
  shoal::on_all_cores([base, shift, part_words, words] {
    // Word h*W is the first of core h's blocks (the array starts on core 0).
    // A core past the end of a tiny table owns no word: it gets no part.
    const std::int64_t first = std::int64_t{shoal::mycore()} << shift;
    if (first >= words) {
      local_part.local() = nullptr;
      return;
    }
    std::uint64_t* part = (base + first).local();
    local_part.local() = part;
    advise_huge_pages(part, part_words * sizeof(std::uint64_t));  // before the first touch
  });
  shoal::forall(t.base, p.table_words,
                [](std::int64_t i, std::uint64_t& x) { x = static_cast<std::uint64_t>(i); });
  return t;
}

void free_table(const gups_table& t) {
  shoal::on_all_cores([] { local_part.local() = nullptr; });
  shoal::global_free(t.base);
}

std::int64_t count_wrong(const gups_table& t) {
  shoal::on_all_cores([] { wrong_here.local() = 0; });
  shoal::forall(t.base, words(t), [](std::int64_t i, std::uint64_t& x) {
    if (x != static_cast<std::uint64_t>(i)) ++wrong_here.local();
  });
  std::int64_t wrong = 0;
  for (int c = 0; c < shoal::cores(); ++c)
    wrong += shoal::delegate::call(c, [] { return wrong_here.local(); });
  return wrong;
}

std::uint64_t table_digest(const gups_table& t) {
  shoal::on_all_cores([] { digest_here.local() = 0; });
  shoal::forall(t.base, words(t), [](std::int64_t i, std::uint64_t& x) {
    digest_here.local() += digest_term(static_cast<std::uint64_t>(i), x);
  });
  std::uint64_t digest = 0;
  for (int c = 0; c < shoal::cores(); ++c)
    digest += shoal::delegate::call(c, [] { return digest_here.local(); });
  return digest;
}

}  // namespace shoal_apps::gups
