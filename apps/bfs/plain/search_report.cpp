#include "bfs/plain/search_report.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace shoal_apps::bfs {

void search_results::record(std::int64_t root, const validation& v, double seconds) {
  if (!v.ok && ok) {
    ok = false;
    error = fmt::format("root {}: {}", root, v.error);
  }
  roots.push_back({{"root", root},
                   {"reached", v.reached},
                   {"depth", v.depth},
                   {"edges", v.edges},
                   {"time_s", seconds}});
  teps.push_back(static_cast<double>(v.edges) / seconds);
  time_s += seconds;
}

namespace {

std::string problem_text(const searched_graph& g, std::size_t keys) {
  const graph_options& o = g.options;
  const std::string graph =
      o.file.empty() ? fmt::format("Kronecker scale {}, edgefactor {}", o.scale, o.edgefactor)
                     : fmt::format("graph {}", o.file);
  return fmt::format("{}: {} vertices, {} edges, {} search key{}", graph, g.vertices, g.edges, keys,
                     keys == 1 ? "" : "s");
}

}  // namespace

void fill_search_report(report& r, const searched_graph& g, bool sender_filter,
                        const search_results& out, double construction_s) {
  const double hm = harmonic_mean(out.teps);
  const auto [lo, hi] = std::minmax_element(out.teps.begin(), out.teps.end());
  const std::size_t keys = out.teps.size();
  r.set_problem(problem_text(g, keys));
  r.set_time(out.time_s);
  r.set_rate(hm / 1e6, "MTEPS");
  r.set("teps_harmonic_mean", hm);
  r.set("teps_min", out.teps.empty() ? 0 : *lo);
  r.set("teps_median", median(out.teps));
  r.set("teps_max", out.teps.empty() ? 0 : *hi);
  r.set("construction_s", construction_s);
  r.set("scale", g.options.file.empty() ? nlohmann::json(g.options.scale) : nlohmann::json(nullptr),
        false);
  r.set("vertices", g.vertices, false);
  r.set("edges", g.edges, false);
  r.set("sender_filter", sender_filter, false);
  r.set("roots", out.roots, false);
  r.set_validated(out.ok, out.ok ? fmt::format("{} search{} the Graph500 checks", keys,
                                               keys == 1 ? " passes" : "es pass")
                                 : out.error);
}

}  // namespace shoal_apps::bfs
