// One-sided or delegate behind the same call (issue 12, item 6): a BCL
// container method can reach its data with one-sided operations (the
// caller's core does the work, one_sided.hpp) or send the whole method to
// the data's owner as one delegate (delegate.hpp). Which is cheaper depends
// on the backend: under direct, shm and rma a remote atomic costs about
// 10-200 ns and a delegate round trip microseconds; under am every
// one-sided operation IS a delegate round trip, so a method of several
// operations costs several round trips one-sided and one as a delegate.
//
//   SHOAL_BCL_PATH=onesided|delegate|auto   (default auto)
//   SHOAL_BCL_CALIBRATION=file              costs per backend (bench/bcl_costs.py writes it)
//
// A container decides when it is made, on the making core, and keeps the
// decision in its handle, so that every core uses the same path for it: the
// two paths are not atomic with respect to each other on one word (see
// one_sided.hpp's memory model), so one table never mixes them. Forced
// (onesided or delegate) it takes that path. Under auto it compares the
// method's cost from its header's cost table (e.g. hash_map insert 2A + W + F
// against D; circular_queue and checksum_queue compare a push and a pop,
// one-sided, against 2D, fast_queue a push against D, choose_container_path)
// using this job's costs: the calibration file's figures for the backend in
// use when SHOAL_BCL_CALIBRATION is set, otherwise ones measured
// at the first make() of the job in this process (8 of each of R, W, A, F and
// D against a core of another process, or the next core: about 40 operations,
// about 1 ms here, the 8 delegates most of it). --verbose names the decision
// and its figures. Measured so, D is one blocking task's round trip with
// nothing else to run on its core: here about 100-120 us under every backend
// (the caller's core goes idle and wakes for the reply), against 2-6 us at 2
// x 1 in bench/results/bcl_costs.md, where every core keeps operations going.
// So the start-up measurement favours one-sided; a job whose cores have many
// tasks should give the calibration file (make bench-bcl writes one).
//
// Calibration file: lines `backend op nanoseconds`, backend one of direct,
// shm, rma, am; op one of R (rget of a word), W (rput), A (remote atomic),
// F (rflush), D (delegate round trip); '#' starts a comment. Every op of
// the job's backend must be listed.
//
// Errors (the job ends, status 2, naming the variable or the file and line):
// SHOAL_BCL_PATH not one of the three words; a calibration file that cannot
// be read, a line that is not `backend op number`, an unknown backend or op,
// a negative or non-numeric figure, or no figure for an op of the job's
// backend. Each process reads its own environment: a bad value on one rank
// ends the whole job from that rank.
#pragma once

#include "shoal/delegate.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/exit_status.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace shoal::bcl {

/// How a container reaches its data.
enum class path : std::uint8_t { onesided, delegate };
/// SHOAL_BCL_PATH.
enum class path_mode { automatic, onesided, delegate };

inline const char* path_name(path p) noexcept {
  return p == path::onesided ? "onesided" : "delegate";
}

/// Costs in nanoseconds of this job's backend.
struct op_costs {
  double R = 0;        // rget of a word or a bucket
  double W = 0;        // rput
  double A = 0;        // remote atomic
  double F = 0;        // rflush
  double D = 0;        // delegate round trip
  std::string source;  // "measured at start-up" or "file:line .. "
};

namespace path_detail {

[[noreturn]] inline void usage_error(const std::string& what) {
  shoal::abort_job(fmt::format("shoal: error: {}", what), shoal::exit_status::usage);
}

inline path_mode parse_mode(const char* text) {
  if (text == nullptr) return path_mode::automatic;
  const std::string_view t = text;
  if (t == "auto") return path_mode::automatic;
  if (t == "onesided") return path_mode::onesided;
  if (t == "delegate") return path_mode::delegate;
  usage_error(fmt::format("SHOAL_BCL_PATH: expected one of onesided, delegate, auto, got '{}'",
                          t.substr(0, 64)));
}

/// The costs the file gives for `backend`; ends the job on any bad line.
inline op_costs read_calibration(const std::string& file, std::string_view backend) {
  std::ifstream in(file);
  if (!in)
    usage_error(
        fmt::format("SHOAL_BCL_CALIBRATION: cannot read '{}' (write it with make "
                    "bench-bcl, or unset the variable to measure at start-up)",
                    file));
  constexpr std::array<std::string_view, 4> backends = {"direct", "shm", "rma", "am"};
  constexpr std::array<std::string_view, 5> ops = {"R", "W", "A", "F", "D"};
  std::array<double, 5> got{};
  std::array<bool, 5> seen{};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string text = line.substr(0, line.find('#'));
    std::istringstream words(text);
    std::string b, op, value, extra;
    if (!(words >> b)) continue;  // blank or comment
    const auto bad = [&](const std::string& why) {
      usage_error(fmt::format("{}:{}: {} (a line is `backend op nanoseconds`, e.g. `shm A 12`)",
                              file, number, why));
    };
    if (!(words >> op >> value) || (words >> extra))
      bad(fmt::format("expected 3 fields, got '{}'", line.substr(0, 80)));
    if (std::ranges::find(backends, b) == backends.end())
      bad(fmt::format("unknown backend '{}' (direct, shm, rma or am)", b.substr(0, 32)));
    const auto k = std::ranges::find(ops, op);
    if (k == ops.end()) bad(fmt::format("unknown op '{}' (R, W, A, F or D)", op.substr(0, 32)));
    char* end = nullptr;
    const double ns = std::strtod(value.c_str(), &end);
    if (end != value.c_str() + value.size() || !(ns >= 0) || ns > 1e12)
      bad(fmt::format("'{}' is not a number of nanoseconds", value.substr(0, 32)));
    if (b != backend) continue;
    const auto i = static_cast<std::size_t>(k - ops.begin());
    got[i] = ns;
    seen[i] = true;
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (!seen[i])
      usage_error(fmt::format("{}: no figure for op {} of backend {} (the job's backend)", file,
                              ops[i], backend));
  return {got[0], got[1], got[2], got[3], got[4], fmt::format("{}", file)};
}

template <class F>
double median_ns(int reps, F op) {
  std::array<double, 16> t{};
  const int n = std::min<int>(reps, static_cast<int>(t.size()));
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    op();
    t[static_cast<std::size_t>(i)] =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  }
  std::sort(t.begin(), t.begin() + n);
  return t[static_cast<std::size_t>(n / 2)];
}

/// R, W, A, F and D against `word` (a word of a container being made, on
/// another core, that nobody else uses yet; left as it was).
inline op_costs measure(global_ptr<std::uint64_t> word) {
  constexpr int reps = 8;
  op_costs c;
  const std::uint64_t v = rget(word);
  c.R = median_ns(reps, [&] { (void)rget(word); });
  c.W = median_ns(reps, [&] { rput(word, v); });
  c.A = median_ns(reps, [&] { (void)fetch_or(word, std::uint64_t{0}); });
  c.F = median_ns(reps, [] { rflush(); });
  const int owner = word.core();
  c.D = median_ns(reps, [owner] { (void)delegate::call(owner, [] { return 0; }); });
  c.source = "measured at start-up";
  return c;
}

struct settings {
  std::uint64_t epoch = ~std::uint64_t{0};  // the init() these belong to
  path_mode mode = path_mode::automatic;
  bool have_costs = false;
  op_costs costs;
  std::mutex m;
};
inline settings g_settings;

}  // namespace path_detail

/// SHOAL_BCL_PATH of this process (read and checked once per init()).
inline path_mode path_setting() {
  auto& s = path_detail::g_settings;
  std::lock_guard lock(s.m);
  if (s.epoch != shoal::detail::g_init_epoch) {
    s.mode = path_detail::parse_mode(std::getenv("SHOAL_BCL_PATH"));
    s.have_costs = false;
    if (const char* file = std::getenv("SHOAL_BCL_CALIBRATION"); file != nullptr) {
      s.costs = path_detail::read_calibration(file, one_sided_backend_name());
      s.have_costs = true;
    }
    s.epoch = shoal::detail::g_init_epoch;
  }
  return s.mode;
}

/// Checks this process's SHOAL_BCL_PATH (and calibration file) and that
/// it says what the making core's says (`theirs`): a container made on one
/// rank checks every rank's setting this way (make() sends a delegate to
/// every core anyway).
inline void path_same_everywhere(path_mode theirs) {
  const path_mode mine = path_setting();
  if (mine != theirs) {
    constexpr const char* words[] = {"auto", "onesided", "delegate"};
    path_detail::usage_error(fmt::format(
        "SHOAL_BCL_PATH differs between processes: {} on rank {}, {} where the container was "
        "made; set it alike everywhere",
        words[static_cast<int>(mine)], shoal::detail::g_info.rank,
        words[static_cast<int>(theirs)]));
  }
}

/// This job's costs: the calibration file's, or measured against `probe`
/// (see the header) the first time they are needed in this process.
inline op_costs path_costs(global_ptr<std::uint64_t> probe) {
  path_setting();
  auto& s = path_detail::g_settings;
  {
    std::lock_guard lock(s.m);
    if (s.have_costs) return s.costs;
  }
  const op_costs c = path_detail::measure(probe);  // no lock held across remote operations
  std::lock_guard lock(s.m);
  if (!s.have_costs) {
    s.costs = c;
    s.have_costs = true;
  }
  return s.costs;
}

/// The path for a method costing `onesided_ns` one way and `delegate_ns`
/// the other, under `mode`; the cheaper under auto (one-sided on a tie).
inline path choose_path(path_mode mode, double onesided_ns, double delegate_ns) {
  switch (mode) {
    case path_mode::onesided:
      return path::onesided;
    case path_mode::delegate:
      return path::delegate;
    default:
      return delegate_ns < onesided_ns ? path::delegate : path::onesided;
  }
}

/// One comparison as --verbose names it, e.g. "insert+find one-sided
/// 4A+W+R+F = 120 ns, delegate 2D = 300 ns".
inline std::string path_comparison(std::string_view what, std::string_view formula,
                                   double onesided_ns, int delegates, double delegate_ns) {
  const std::string ds = delegates == 1 ? std::string("D") : fmt::format("{}D", delegates);
  return fmt::format("{} one-sided {} = {:.0f} ns, delegate {} = {:.0f} ns", what, formula,
                     onesided_ns, ds, delegates * delegate_ns);
}

/// The path of a container whose methods take one path together (the
/// queues): forced by `mode`, or under auto one-sided unless `delegates`
/// D cost less than onesided(costs) (costs measured against `probe`, see
/// path_costs), `what` and `formula` naming the methods and terms compared.
/// --verbose prints "shoal: bcl <name> made on core <c>: path <p> (<why>)".
template <class OneSided>
path choose_container_path(path_mode mode, global_ptr<std::uint64_t> probe, const std::string& name,
                           std::string_view what, std::string_view formula, int delegates,
                           const OneSided& onesided) {
  path p = choose_path(mode, 0, 0);
  std::string why = "forced by SHOAL_BCL_PATH";
  if (mode == path_mode::automatic) {
    const op_costs c = path_costs(probe);
    const double one = onesided(c);
    p = choose_path(mode, one, delegates * c.D);
    why = fmt::format("auto, costs {}: {}", c.source,
                      path_comparison(what, formula, one, delegates, c.D));
  }
  if (shoal::current_config().verbose)
    fmt::print(stderr, "shoal: bcl {} made on core {}: path {} ({})\n", name, mycore(),
               path_name(p), why);
  return p;
}

/// A core to measure against: the first core of the next process, or the
/// next core of a job of one process.
inline int path_probe_core() {
  const auto& g = shoal::detail::g_info;
  if (g.ranks > 1) return (g.rank_base + g.local_cores) % g.total_cores;
  return (mycore() + 1) % cores();
}

}  // namespace shoal::bcl
