// The driver's command line (tools/shoal.cpp): every bundled app declared as
// a subcommand with the driver's own --impl and --json, and `suite`. Apart
// from the driver so that the command-line fuzz target (tests/fuzz/) parses
// exactly what the driver parses, without running a job.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/app.hpp"
#include "common/plain/cli_checks.hpp"

namespace shoal_tools {

using shoal_apps::app_spec;

/// The apps bundled in this build (SHOAL_APPS), in the driver's order.
inline std::vector<app_spec> all_apps() {
  std::vector<app_spec> apps;
#ifdef SHOAL_APP_GUPS
  apps.push_back(shoal_apps::gups_app());
#endif
#ifdef SHOAL_APP_BFS
  apps.push_back(shoal_apps::bfs_app());
#endif
#ifdef SHOAL_APP_UTS
  apps.push_back(shoal_apps::uts_app());
#endif
#ifdef SHOAL_APP_PAGERANK
  apps.push_back(shoal_apps::pagerank_app());
#endif
#ifdef SHOAL_APP_INTSORT
  apps.push_back(shoal_apps::intsort_app());
#endif
#ifdef SHOAL_APP_RANDOMWALK
  apps.push_back(shoal_apps::randomwalk_app());
#endif
#ifdef SHOAL_APP_CHMA
  apps.push_back(shoal_apps::chma_app());
#endif
#ifdef SHOAL_APP_POINTERCHASE
  apps.push_back(shoal_apps::pointerchase_app());
#endif
#ifdef SHOAL_APP_PERMUTATION
  apps.push_back(shoal_apps::permutation_app());
#endif
#ifdef SHOAL_APP_HISTOGRAM
  apps.push_back(shoal_apps::histogram_app());
#endif
#ifdef SHOAL_APP_INDEXGATHER
  apps.push_back(shoal_apps::indexgather_app());
#endif
#ifdef SHOAL_APP_WORDCOUNT
  apps.push_back(shoal_apps::wordcount_app());
#endif
#ifdef SHOAL_APP_ISX
  apps.push_back(shoal_apps::isx_app());
#endif
#ifdef SHOAL_APP_CC
  apps.push_back(shoal_apps::cc_app());
#endif
#ifdef SHOAL_APP_KMER
  apps.push_back(shoal_apps::kmer_app());
#endif
  return apps;
}

/// One app declared on a command: its runner and the driver's own options.
struct command {
  const app_spec* spec = nullptr;
  CLI::App* cmd = nullptr;
  shoal_apps::runner run;
  std::string impl;
  bool json = false;
  std::string output;  // --output FILE; empty: standard output
};

/// Declares --output on `cmd` into `path`: the results to a file that rank 0
/// writes and checks (report_output.hpp says why standard output cannot be
/// checked under mpirun).
inline void declare_output(CLI::App& cmd, std::string& path) {
  cmd.add_option("--output", path,
                 "write the results to FILE (rank 0) instead of standard output; a write error "
                 "ends the run with status 3")
      ->check(shoal_apps::file_name_check());
}

/// Declares `spec` as a subcommand of `parent` into `c`, with the driver's
/// --impl and --json bound to c's fields: so `c` must stay where it is.
inline void declare(CLI::App& parent, const app_spec& spec, command& c) {
  c.spec = &spec;
  c.cmd = parent.add_subcommand(spec.name, spec.summary);
  c.impl = spec.impls.front();
  c.run = spec.declare(*c.cmd);
  c.cmd->add_option("--impl", c.impl, "implementation")
      ->check(CLI::IsMember(spec.impls))
      ->capture_default_str();
  c.cmd->add_flag("--json", c.json, "print one JSON object on stdout instead of the summary");
  declare_output(*c.cmd, c.output);
}

/// The whole command line: `cli` with one subcommand per app and `suite`.
/// Declared in place (options point into it): make it with make_unique and
/// never move it.
struct driver_cli {
  CLI::App cli{
      "shoal: irregular parallel applications on the shoal runtime.\n"
      "Runtime flags (--cores, --stats, ...: see --help-shoal) go anywhere on the line."};
  std::vector<command> commands;  // never resized: options point into it
  CLI::App* suite = nullptr;
  bool suite_json = false;
  std::string suite_output;

  explicit driver_cli(const std::vector<app_spec>& apps) : commands(apps.size()) {
    cli.require_subcommand(1);
    for (std::size_t i = 0; i < apps.size(); ++i) declare(cli, apps[i], commands[i]);
    suite = cli.add_subcommand(
        "suite", "every bundled app, validated, in about a minute and a half, one table");
    suite->add_flag("--json", suite_json, "print one JSON array of the apps' objects");
    declare_output(*suite, suite_output);
  }
  driver_cli(const driver_cli&) = delete;
  driver_cli& operator=(const driver_cli&) = delete;
};

}  // namespace shoal_tools
