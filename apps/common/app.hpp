// What an application of the `shoal` driver provides: its name, its
// implementations (--impl), its options, and the function that runs it.
//
// The driver calls shoal::init, declares every app as a CLI11 subcommand,
// parses the command line, then calls the chosen app's runner on every rank.
// The runner calls shoal::run (as often as it needs: construction, then the
// timed phase) and fills `ctx.out` on rank 0, where the root task runs. The
// driver then adds the job's shape and the runtime counters and prints the
// report on rank 0; the exit status is non-zero when validation failed.
//
// Bad input (a malformed file, an impossible size) is reported by throwing
// input_error with a message naming what was wrong and where; the driver
// prints "shoal <app>: error: <message>" and ends the whole job with status 2.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/plain/input_error.hpp"
#include "common/plain/report.hpp"

namespace shoal_apps {

struct run_context {
  std::string impl;  ///< the --impl chosen (one of app_spec::impls)
  report& out;       ///< fill on rank 0
};

/// Runs the app with the options parsed into the closure's storage.
using runner = std::function<void(run_context&)>;

struct app_spec {
  std::string name;
  std::string summary;             ///< one line for `shoal --help`
  std::vector<std::string> impls;  ///< --impl choices; the first is the default
  /// Adds the app's options to `cmd` (bound to storage the returned runner
  /// owns) and returns the runner. Called once per driver invocation.
  std::function<runner(CLI::App& cmd)> declare;
};

// The bundled applications (one file each under apps/<name>/).
app_spec gups_app();
app_spec bfs_app();
app_spec uts_app();
app_spec pagerank_app();
app_spec intsort_app();
app_spec randomwalk_app();
app_spec chma_app();
app_spec pointerchase_app();
app_spec permutation_app();
app_spec histogram_app();
app_spec indexgather_app();
app_spec wordcount_app();
app_spec isx_app();
app_spec cc_app();
app_spec kmer_app();

}  // namespace shoal_apps
