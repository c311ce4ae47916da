// The memory check and the choice of search keys: the set-up both `shoal bfs`
// and the plain-MPI baseline share.
#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "bfs/plain/graph500.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/mix.hpp"

namespace shoal_apps::bfs {

namespace {
// Bytes the app and its validation need, summed over the job: the CSR
// (both directions of each edge, 8 bytes each, plus offsets), the routed
// edge slices during construction, rank 0's full edge list for validation,
// and about five vertex-sized arrays (parents, levels, visited flags).
constexpr double bytes_per_edge = 16 + 16 + 16;
constexpr double bytes_per_vertex = 8 + 5 * 8;

}  // namespace

void check_fits_in_memory(std::int64_t vertices, std::int64_t edges, int ranks,
                          const std::string& origin) {
  const double need = bytes_per_edge * static_cast<double>(edges) +
                      bytes_per_vertex * static_cast<double>(vertices);
  const bool file = origin.starts_with("--graph");
  check_memory(
      need, 0.8,
      fmt::format("{}: a graph of {} vertices and {} edges needs about {} over {} "
                  "process{}",
                  origin, vertices, edges, human_bytes(need), ranks, ranks == 1 ? "" : "es"),
      file ? "vertex ids should be 0 .. vertices - 1 with no gaps"
           : "lower --scale or --edgefactor");
}

namespace {
// Few candidates: shuffle them all (Fisher-Yates) and take a prefix.
std::vector<std::int64_t> shuffled_prefix(const std::vector<bool>& has_edge, std::size_t count,
                                          std::uint64_t seed) {
  std::vector<std::int64_t> all;
  for (std::size_t v = 0; v < has_edge.size(); ++v)
    if (has_edge[v]) all.push_back(static_cast<std::int64_t>(v));
  for (std::size_t i = 0; i + 1 < all.size() && i < count; ++i) {
    const std::uint64_t r = keyed_random(seed, 4, i);
    std::swap(all[i], all[i + r % (all.size() - i)]);
  }
  all.resize(std::min(all.size(), count));
  return all;
}
}  // namespace

std::vector<std::int64_t> choose_roots(const std::vector<bool>& has_edge, int count,
                                       std::uint64_t seed) {
  const auto eligible =
      static_cast<std::size_t>(std::count(has_edge.begin(), has_edge.end(), true));
  const auto want = static_cast<std::size_t>(std::max(count, 0));
  if (eligible <= 4 * want) return shuffled_prefix(has_edge, want, seed);
  // Many candidates: draw vertices until `want` distinct eligible ones (at
  // most a quarter are taken, so few draws are wasted).
  std::vector<std::int64_t> roots;
  std::unordered_set<std::int64_t> taken;
  const std::uint64_t n = has_edge.size();
  for (std::uint64_t k = 0; roots.size() < want; ++k) {
    const auto v = static_cast<std::int64_t>(keyed_random(seed, 5, k) % n);
    if (has_edge[static_cast<std::size_t>(v)] && taken.insert(v).second) roots.push_back(v);
  }
  return roots;
}

}  // namespace shoal_apps::bfs
