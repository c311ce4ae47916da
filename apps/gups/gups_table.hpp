// The GUPS table in shoal's global memory, and where each word lives.
//
// The table is one global_alloc'd array of 2^n words, block-cyclic over
// every core of the job (global_ptr.hpp): block b of --block-bytes holds
// words [b*W, (b+1)*W) (W = words per block) and lives on core b mod C, at
// local block b / C of that core's part. Because an allocation starts on
// core 0, core h's part begins at word h*W, so once each core knows the
// address of its part (local_part, set by make_table) the home core of
// word i and its place there are shifts and a multiplication (divider.hpp):
// no global_ptr arithmetic on the hot path. The digest check (see
// plain/gups_problem.hpp) would catch any disagreement with global_ptr.
#pragma once

#include <shoal/shoal.hpp>

#include <cstdint>

#include "gups/divider.hpp"
#include "gups/plain/gups_problem.hpp"

namespace shoal_apps::gups {

/// Address of the calling core's part of the current table (word h*W on
/// core h). Set on every core by make_table; read by handlers by name.
extern shoal::per_core<std::uint64_t*> local_part;

/// A small (32 bytes), trivially copyable view of the table: captured by
/// handlers and delegates, valid on every process.
struct gups_table {
  shoal::global_ptr<std::uint64_t> base;
  divider cores;                 ///< by the cores of the job
  std::uint8_t block_shift = 0;  ///< log2(words per block)
  std::uint8_t log_table = 0;    ///< the table has 2^log_table words

  /// Table words - 1: the index of update r is r & mask().
  std::uint64_t mask() const noexcept { return (std::uint64_t{1} << log_table) - 1; }

  /// Global core that owns word i.
  int home(std::uint64_t i) const noexcept {
    return static_cast<int>(cores.remainder(i >> block_shift));
  }
  /// Index of word i in its home core's part.
  std::uint64_t local_index(std::uint64_t i) const noexcept {
    const std::uint64_t low = i & ((std::uint64_t{1} << block_shift) - 1);
    return (cores.quotient(i >> block_shift) << block_shift) | low;
  }
  /// Word i; only on its home core.
  std::uint64_t& local_word(std::uint64_t i) const noexcept {
    return local_part.local()[local_index(i)];
  }
};

/// Allocates the table, asks for huge pages for every core's part, sets
/// table[i] = i on the home cores and publishes every core's local_part.
/// Root task; blocking (a forall and a task per core).
gups_table make_table(const gups_problem& p);

/// Frees the table. Root task, after the work using it.
void free_table(const gups_table& t);

/// Words with table[i] != i, counted on their home cores. Blocking.
std::int64_t count_wrong(const gups_table& t);

/// The order-independent digest (plain/gups_problem.hpp) of the whole
/// table, computed on the home cores. Blocking.
std::uint64_t table_digest(const gups_table& t);

}  // namespace shoal_apps::gups
