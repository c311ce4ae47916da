// The results of a set of Graph500 searches and their report: shared by
// `shoal bfs` and shoal-baseline-bfs so both print the same fields, computed
// the same way. Plain C++ (no shoal, no MPI).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bfs/plain/graph500.hpp"
#include "common/plain/report.hpp"

namespace shoal_apps::bfs {

/// What the searches found, recorded on rank 0 one search at a time.
struct search_results {
  nlohmann::json roots = nlohmann::json::array();  ///< {root, reached, depth, edges, time_s}
  std::vector<double> teps;                        ///< per search
  double time_s = 0;                               ///< sum of the search times
  bool ok = true;                                  ///< every search validated
  std::string error;                               ///< the first failure, naming the root

  /// Records one search: its validation `v` and its time.
  void record(std::int64_t root, const validation& v, double seconds);
};

/// The graph a report describes.
struct searched_graph {
  const graph_options& options;
  std::int64_t vertices = 0;
  std::int64_t edges = 0;
};

/// Fills `r` with the problem, time, rate (MTEPS), the TEPS statistics
/// (teps_harmonic_mean, _min, _median, _max in TEPS), construction_s, the
/// graph's size, the per-root records and the validation verdict.
void fill_search_report(report& r, const searched_graph& g, bool sender_filter,
                        const search_results& out, double construction_s);

}  // namespace shoal_apps::bfs
