// The graph options the graph apps and their baselines share (graph.hpp).
#include <CLI/CLI.hpp>

#include "common/plain/cli_checks.hpp"
#include "common/plain/graph.hpp"

namespace shoal_apps {

void add_graph_options(CLI::App& cmd, graph_options& o) {
  auto* scale = cmd.add_option("--scale", o.scale, "Kronecker graph of 2^scale vertices")
                    ->check(CLI::Range(1, 48))
                    ->capture_default_str();
  auto* edgefactor =
      cmd.add_option("--edgefactor", o.edgefactor, "edges per vertex of the Kronecker graph")
          ->check(CLI::Range(1, 1024))
          ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed of the generator and of the search keys")
      ->check(unsigned_64_check())
      ->capture_default_str();
  // A file fixes the graph: --scale and --edgefactor would be silently ignored.
  cmd.add_option("--graph", o.file,
                 "read the graph from FILE (edge list \"u v\" per line, 0-based, or Matrix "
                 "Market coordinate) instead of generating it")
      ->check(file_name_check())
      ->excludes(scale)
      ->excludes(edgefactor);
  auto* roots =
      cmd.add_option("--roots", o.roots, "search keys, chosen at random among vertices with edges")
          ->check(CLI::Range(1, 1 << 20))
          ->capture_default_str();
  // One root replaces the random ones: --roots would be silently ignored.
  cmd.add_option("--root", o.root, "search from this one vertex instead of --roots random ones")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->excludes(roots);
}

}  // namespace shoal_apps
