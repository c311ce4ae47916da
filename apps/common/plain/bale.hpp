// The problem of the two bale kernels, histogram and indexgather, as the
// shoal apps and their plain-MPI baselines all define it: options, sizes, the
// memory check, the random index streams and the table contents.
//
// P participants (shoal cores, or MPI ranks for the baselines) share a table
// of T * P entries, block-distributed: participant p owns entries
// [p * T, (p + 1) * T). Each participant makes N requests (an increment for
// histogram, a read for indexgather) to entries drawn from its own stream:
// request k of participant p goes to entry index_stream(seed, p).at(k), a
// pure function of (seed, p, k), so any participant reproduces any stream
// alone (the validation regenerates them) and the problem is the same for
// every job shape with the same P: 1 process x 2 cores, 2 processes x 1 core
// and the baseline on 2 ranks do the same requests.
//
// Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/mix.hpp"
#include "common/plain/report.hpp"

namespace shoal_apps::bale {

/// Largest --table-per-core: local indices fit in 32 bits with one value to
/// spare (the end marker of the histogram channel).
inline constexpr std::int64_t max_table_per_core = std::int64_t{1} << 31;
/// Largest --requests-per-core: request slots fit in 32 bits.
inline constexpr std::int64_t max_requests_per_core = std::int64_t{1} << 31;

/// The command-line options shared by the apps and the baselines.
struct bale_options {
  std::int64_t table_per_core = 1000;
  std::int64_t requests_per_core = 1000000;
  std::uint64_t seed = 1;
  bool corrupt = false;  ///< fault injection: spoil one result after the timed phase
};

/// Declares --table-per-core, --requests-per-core, --seed and the hidden
/// --corrupt on `cmd`, bound to `o`. `request` names a request ("increments",
/// "reads").
inline void add_bale_options(CLI::App& cmd, bale_options& o, const std::string& request) {
  cmd.add_option("--table-per-core", o.table_per_core,
                 fmt::format("table entries (64-bit) per core (per rank for the baseline); the "
                             "table is block-distributed, T * cores entries in all; T in [1, {}]",
                             max_table_per_core))
      ->capture_default_str();
  cmd.add_option("--requests-per-core", o.requests_per_core,
                 fmt::format("random {} each core (rank) makes to the whole table, N in [1, {}]",
                             request, max_requests_per_core))
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the random index streams (any 64-bit number)")
      ->check(unsigned_64_check())
      ->capture_default_str();
  // Fault injection for the tests: the validation must catch it (exit 1).
  hide_from_help(
      cmd, cmd.add_flag("--corrupt", o.corrupt, "spoil one result after the timed phase (tests)"));
}

/// Sizes of one run.
struct bale_problem {
  std::int64_t table_per_core = 0;     ///< T
  std::int64_t requests_per_core = 0;  ///< N
  int participants = 0;                ///< P: cores (ranks for a baseline)
  std::uint64_t seed = 0;
  bool corrupt = false;

  std::int64_t table_size() const noexcept { return table_per_core * participants; }
  std::int64_t requests() const noexcept { return requests_per_core * participants; }
  /// "2000 entries (1000 per core), 2000000 increments (1000000 per core)".
  std::string describe(const std::string& request, const std::string& per_what) const {
    return fmt::format("{} entries ({} per {}), {} {} ({} per {})", table_size(), table_per_core,
                       per_what, requests(), request, requests_per_core, per_what);
  }
};

/// Checks the options and derives the sizes. Each process runs
/// `local_participants` participants, each needing
/// bytes_per_table_entry * T + bytes_per_request * N bytes; the total must
/// fit in 90% of this machine's memory. Throws input_error naming the flag.
inline bale_problem make_problem(const bale_options& o, int participants, int local_participants,
                                 double bytes_per_table_entry, double bytes_per_request) {
  if (o.table_per_core < 1 || o.table_per_core > max_table_per_core)
    throw input_error(
        fmt::format("--table-per-core {}: out of range; expected an integer in [1, {}]",
                    o.table_per_core, max_table_per_core));
  if (o.requests_per_core < 1 || o.requests_per_core > max_requests_per_core)
    throw input_error(
        fmt::format("--requests-per-core {}: out of range; expected an integer in [1, {}]",
                    o.requests_per_core, max_requests_per_core));
  bale_problem p;
  p.table_per_core = o.table_per_core;
  p.requests_per_core = o.requests_per_core;
  p.participants = participants;
  p.seed = o.seed;
  p.corrupt = o.corrupt;
  const double need = static_cast<double>(local_participants) *
                      (bytes_per_table_entry * static_cast<double>(o.table_per_core) +
                       bytes_per_request * static_cast<double>(o.requests_per_core));
  check_memory(
      need, 0.9,
      fmt::format("--table-per-core {} --requests-per-core {}: needs {} per process ({} "
                  "participants)",
                  o.table_per_core, o.requests_per_core, human_bytes(need), local_participants),
      "lower --table-per-core or --requests-per-core");
  return p;
}

/// Where one request goes: the owning participant and the entry there.
struct target {
  std::uint32_t owner;
  std::uint32_t local;
};

/// Participant p's request stream: at(k) is where its request k goes,
/// uniform over the whole table (owner and local entry independent and
/// uniform, from the two halves of one keyed 64-bit random word).
class index_stream {
 public:
  index_stream(const bale_problem& p, int participant) noexcept
      : key_(mix64(p.seed ^ (static_cast<std::uint64_t>(participant) * 0x9e3779b97f4a7c15ULL))),
        participants_(static_cast<std::uint64_t>(p.participants)),
        table_per_core_(static_cast<std::uint64_t>(p.table_per_core)) {}

  target at(std::uint64_t k) const noexcept {
    const std::uint64_t r = mix64(key_ + k * 0xd1b54a32d192ed03ULL);
    return {static_cast<std::uint32_t>(((r >> 32) * participants_) >> 32),
            static_cast<std::uint32_t>(((r & 0xffffffffULL) * table_per_core_) >> 32)};
  }

 private:
  std::uint64_t key_;
  std::uint64_t participants_;
  std::uint64_t table_per_core_;
};

/// A block of consecutive requests of one stream split into the caller's own
/// and the others', without a branch per request: whether a request is the
/// caller's is a coin toss on few participants, and a mispredicted branch
/// per request cost more than generating it (perf, 1 process x 2 cores).
/// Each request is written to both lists and only one list's length grows.
/// The apps and the baselines split their streams the same way.
struct block_split {
  static constexpr std::uint64_t capacity = 256;

  std::uint32_t remote = 0;              ///< requests for other participants
  std::uint32_t own = 0;                 ///< requests for the caller
  std::uint32_t owner[capacity];         ///< remote request i goes to owner[i]
  std::uint32_t remote_local[capacity];  ///< its entry there
  std::uint32_t remote_slot[capacity];   ///< its request number k
  std::uint32_t own_local[capacity];     ///< own request i's entry
  std::uint32_t own_slot[capacity];      ///< its request number k

  /// Splits requests [first, last) of `s`, last - first <= capacity, for
  /// participant `me`.
  void fill(const index_stream& s, std::uint32_t me, std::uint64_t first,
            std::uint64_t last) noexcept {
    std::uint32_t r = 0;
    std::uint32_t o = 0;
    for (std::uint64_t k = first; k < last; ++k) {
      const target t = s.at(k);
      const auto slot = static_cast<std::uint32_t>(k);
      owner[r] = t.owner;
      remote_local[r] = t.local;
      remote_slot[r] = slot;
      own_local[o] = t.local;
      own_slot[o] = slot;
      const std::uint32_t mine = t.owner == me ? 1 : 0;
      r += 1 - mine;
      o += mine;
    }
    remote = r;
    own = o;
  }
};

/// Global index of an entry.
inline std::uint64_t global_index(const bale_problem& p, target t) noexcept {
  return static_cast<std::uint64_t>(t.owner) * static_cast<std::uint64_t>(p.table_per_core) +
         t.local;
}

/// indexgather's table: entry i holds table_value(seed, i).
inline std::uint64_t table_value(std::uint64_t seed, std::uint64_t i) noexcept {
  return mix64(i * 0x9e3779b97f4a7c15ULL + (seed ^ 0x5bd1e9955bd1e995ULL));
}

/// How a kernel names its requests in the report.
struct kernel_words {
  std::string request;   ///< "increments", "reads": the problem line
  std::string count;     ///< JSON key of the total, e.g. "updates"
  std::string rate_key;  ///< JSON key of the rate per second, e.g. "updates_per_s"
  std::string unit;      ///< rate unit, e.g. "M updates/s"
};

/// Fills `out`: problem line, time, rate (millions of requests per second),
/// the sizes and the verdict. `per_what` is "core" or "rank".
inline void fill_report(report& out, const bale_problem& p, const kernel_words& w,
                        const std::string& per_what, double seconds, bool ok,
                        const std::string& detail) {
  const double per_s = seconds > 0 ? static_cast<double>(p.requests()) / seconds : 0;
  out.set_problem(p.describe(w.request, per_what));
  out.set_time(seconds);
  out.set_rate(per_s / 1e6, w.unit);
  out.set(w.rate_key, per_s);
  out.set(w.count, p.requests(), false);
  out.set("table_per_core", p.table_per_core, false);
  out.set("requests_per_core", p.requests_per_core, false);
  out.set("table_size", p.table_size(), false);
  out.set("seed", p.seed, false);
  out.set_validated(ok, detail);
}

}  // namespace shoal_apps::bale
