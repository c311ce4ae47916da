// The shoal command-line driver: `shoal <app> [options]` runs one bundled
// application, validated, alone or under mpirun; `shoal suite` runs the
// headline apps at a size that takes about a minute and prints one table.
#include <shoal/shoal.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include <fmt/format.h>

#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"
#include "common/plain/report.hpp"
#include "common/plain/report_output.hpp"
#include "driver_cli.hpp"

namespace {

using shoal_apps::app_spec;
using shoal_apps::report;
using shoal_tools::command;

/// The runtime counters of this process since `before`.
nlohmann::json stats_json(const shoal::core_stats& before) {
  shoal::core_stats since = shoal::stats_total();
  since -= before;
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : shoal::stats_fields(since)) j[name] = value;
  return j;
}

/// Runs one parsed command on every rank; returns its report (meaningful on rank 0).
report run_command(const command& c) {
  report out(c.spec->name, c.impl);
  shoal_apps::run_context ctx{c.impl, out};
  const shoal::core_stats before = shoal::stats_total();
  try {
    c.run(ctx);
  } catch (const shoal_apps::input_error& e) {
    // Messages may quote a flag's value raw (--tree, --type): escaped and cut.
    // Under mpirun the rank is named: each reads its input files itself, so
    // the bad copy may be on one node only.
    const std::string rank = shoal::ranks() > 1 ? fmt::format(" (found by rank {} of {})",
                                                              shoal::myrank(), shoal::ranks())
                                                : "";
    shoal::abort_job(fmt::format("shoal {}: error: {}{}", c.spec->name,
                                 shoal_apps::printable(e.what(), 1000), rank),
                     2);
  } catch (const std::exception& e) {
    shoal::abort_job(fmt::format("shoal {}: failed: {}", c.spec->name, e.what()), 1);
  }
  out.set_shape(shoal::ranks(), shoal::cores());
  out.set_stats(stats_json(before));
  return out;
}

/// The arguments `shoal suite` gives each bundled app: a minute and a half in
/// all on a 2-core machine.
struct suite_entry {
  std::string app;
  std::vector<std::string> args;
};

std::vector<suite_entry> suite_entries() {
  return {{"gups", {"--log-table", "26"}},
          {"gups", {"--log-table", "26", "--impl", "delegate"}},
          {"bfs", {"--scale", "21", "--roots", "64"}},
          {"uts", {"--tree", "T1L"}},
          {"uts", {"--tree", "T3L"}},
          {"pagerank", {"--scale", "20"}},
          {"intsort", {"--class", "B"}},
          {"isx", {"--keys-per-core", "4194304"}},
          {"randomwalk", {"--scale", "18", "--length", "128"}},
          {"chma", {"--tasks", "16384", "--length", "256"}},
          {"pointerchase", {"--rounds", "100000"}},
          {"permutation", {"--elements", "16777216"}},
          {"histogram", {"--requests-per-core", "100000000"}},
          {"indexgather", {"--requests-per-core", "50000000"}}};
}

bool ok_all(const std::vector<report>& reports) {
  return std::all_of(reports.begin(), reports.end(), [](const report& r) { return r.validated(); });
}

/// The suite's results: one JSON array, or a table.
std::string suite_text(const std::vector<report>& reports, bool json) {
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const report& r : reports) all.push_back(r.to_json());
    return all.dump() + "\n";
  }
  std::string text = fmt::format("{:<12} {:<10} {:>10} {:>12} {:<13} {:<10} {}\n", "app", "impl",
                                 "time_s", "rate", "unit", "validation", "problem");
  for (const report& r : reports)
    text += fmt::format("{:<12} {:<10} {:>10.3f} {:>12.6g} {:<13} {:<10} {}\n", r.app(), r.impl(),
                        r.time_s(), r.rate(), r.rate_unit(), r.validated() ? "PASSED" : "FAILED",
                        r.problem());
  text +=
      fmt::format("job: {} rank(s) x {} core(s); every run validated against its reference: {}\n",
                  shoal::ranks(), shoal::cores() / shoal::ranks(), ok_all(reports) ? "yes" : "NO");
  return text;
}

int run_suite(const std::vector<app_spec>& apps, bool json, shoal_apps::report_output* out) {
  std::vector<report> reports;
  for (const suite_entry& e : suite_entries()) {
    const app_spec* spec = nullptr;
    for (const app_spec& a : apps)
      if (a.name == e.app) spec = &a;
    if (spec == nullptr) continue;  // not bundled in this build (SHOAL_APPS)
    CLI::App parser;
    command c;
    shoal_tools::declare(parser, *spec, c);
    std::vector<std::string> argv{e.app};
    argv.insert(argv.end(), e.args.begin(), e.args.end());
    std::reverse(argv.begin(), argv.end());  // CLI11 takes a reversed vector
    try {
      parser.parse(argv);
    } catch (const CLI::ParseError& err) {
      shoal::abort_job(fmt::format("shoal suite: bad preset for {}: {}", e.app, err.what()), 2);
    }
    reports.push_back(run_command(c));
  }
  if (shoal::myrank() != 0) return 0;
  if (!out->write(suite_text(reports, json), "the suite's results"))
    return shoal::exit_status::fatal;
  return ok_all(reports) ? 0 : 1;
}

/// Rank 0's destination of the results (--output or standard output), opened
/// before the run so that a bad path ends the job at once (status 2); null
/// on other ranks.
std::unique_ptr<shoal_apps::report_output> open_output(const std::string& prefix,
                                                       const std::string& path) {
  if (shoal::myrank() != 0) return nullptr;
  try {
    return std::make_unique<shoal_apps::report_output>(path);
  } catch (const shoal_apps::input_error& e) {
    shoal::abort_job(fmt::format("{}: error: {}", prefix, e.what()), shoal::exit_status::usage);
  }
}

/// Ends the job (status 2) on rank 0 when c's --output names one of its
/// input files (the options checked as FILE: --graph, --pool, --files,
/// --reads), by any spelling: opening it for the results would empty the
/// input before it is read.
void refuse_output_over_input(const std::string& prefix, const command& c) {
  struct stat out {};
  if (shoal::myrank() != 0 || c.output.empty() || ::stat(c.output.c_str(), &out) != 0) return;
  for (const CLI::Option* opt : c.cmd->get_options()) {
    if (opt->get_name() == "--output" || opt->get_type_name().find("FILE") == std::string::npos)
      continue;
    for (const std::string& in : opt->results()) {
      struct stat st {};
      if (::stat(in.c_str(), &st) != 0 || st.st_dev != out.st_dev || st.st_ino != out.st_ino)
        continue;
      shoal::abort_job(fmt::format("{}: error: --output {}: is the {} input file {}; the results "
                                   "would overwrite it",
                                   prefix, shoal_apps::printable(c.output, 200), opt->get_name(),
                                   shoal_apps::printable(in, 200)),
                       shoal::exit_status::usage);
    }
  }
}

/// Whether `word` is one of cli's subcommands; when it is not, leaves the job
/// (status 2) saying which are (CLI11 would only say that a subcommand is
/// required).
bool names_an_app(CLI::App& cli, const std::string& word) {
  std::string known;
  for (const CLI::App* sub : cli.get_subcommands({})) {
    if (sub->get_name() == word) return true;
    known += " " + sub->get_name();
  }
  shoal::leave_job(fmt::format("shoal: error: unknown app '{}' (known:{}; see shoal --help)",
                               shoal_apps::printable(word, 40), known),
                   2);
}

/// Leaves the job (status 2) when the line names no app: nothing left after
/// the runtime's flags, or a flag in the app's place (CLI11 would only say
/// that a subcommand is required, not which word it could not place).
void require_an_app(int argc, char** argv) {
  if (argc < 2)
    shoal::leave_job("shoal: error: no app named (usage: shoal <app> [flags]; see shoal --help)",
                     2);
  const std::string_view first = argv[1];
  if (first.empty() || first[0] != '-' || first == "-h" || first == "--help") return;
  shoal::leave_job(fmt::format("shoal: error: unknown flag '{}' before the app's name (usage: "
                               "shoal <app> [flags]; runtime flags: shoal --help-shoal)",
                               shoal_apps::printable(first, 40)),
                   2);
}

int run_driver(int argc, char** argv) {
  const std::vector<app_spec> apps = shoal_tools::all_apps();
  const auto parsed = std::make_unique<shoal_tools::driver_cli>(apps);
  CLI::App& cli = parsed->cli;
  CLI::App* suite = parsed->suite;
  require_an_app(argc, argv);  // so argv[1] exists
  const bool app_named = argv[1][0] != '-';
  if (app_named && !names_an_app(cli, argv[1])) return 2;
  const std::string prefix = app_named ? fmt::format("shoal {}", argv[1]) : "shoal";
  if (const std::string empty = shoal_apps::empty_argument(argc, argv); !empty.empty())
    shoal::leave_job(fmt::format("{}: error: {}", prefix, empty), 2);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return shoal::myrank() == 0 ? cli.exit(e) : 0;
  } catch (const CLI::ParseError& e) {
    // A refused command line exits 2, named like other bad input. CLI11 quotes
    // the value, which may be binary or huge: escaped and cut. Every rank
    // leaves: rank 0 prints each different message once, and a rank alone in
    // its error ends the job instead of hanging it.
    shoal::leave_job(fmt::format("{}: error: {}", prefix, shoal_apps::printable(e.what(), 400)), 2);
  }
  if (suite->parsed())
    return run_suite(apps, parsed->suite_json, open_output(prefix, parsed->suite_output).get());
  for (const command& c : parsed->commands) {
    if (!c.cmd->parsed()) continue;
    refuse_output_over_input(prefix, c);
    const auto out = open_output(prefix, c.output);
    const report r = run_command(c);
    if (shoal::myrank() != 0) return 0;
    const std::string text = c.json ? r.to_json().dump() + "\n" : r.summary();
    if (!out->write(text, fmt::format("the {} report", r.app())))
      return shoal::exit_status::fatal;  // output lost
    return r.validated() ? 0 : 1;
  }
  return 2;
}

/// isx and kmer keep their tables in BCL containers, whose traffic is
/// one-sided: unless the user chose (--one-sided, SHOAL_ONE_SIDED), they run
/// with --one-sided node, the node-shared heap where every process is on one
/// node (2-4x the delegates of `auto`'s am there, one_sided.hpp). Every other
/// app keeps `auto`: its heap tables keep their transparent huge pages.
void prefer_node_shared_heap(int argc, char** argv) {
  if (argc < 2 || std::getenv("SHOAL_ONE_SIDED") != nullptr) return;
  const std::string_view app = argv[1];
  if (app != "isx" && app != "kmer") return;
  for (int i = 2; i < argc; ++i)
    if (std::string_view(argv[i]).starts_with("--one-sided")) return;
  setenv("SHOAL_ONE_SIDED", "node", 0);
}

}  // namespace

int main(int argc, char** argv) {
  prefer_node_shared_heap(argc, argv);
  shoal::init(argc, argv);
  const int status = run_driver(argc, argv);
  shoal::finalize();
  return status;
}
