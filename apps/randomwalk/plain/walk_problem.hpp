// The random-walk problem of `shoal randomwalk` (GMT section V.C): the
// graph, the walkers and the rule of each step, as pure functions, plus the
// sequential walk that is both `--impl sequential` and the reference every
// other run is checked against. No shoal here: plain C++.
//
// The graph: V vertices, E = V * edgefactor undirected edges; edge i joins
// u = i / edgefactor and v = a random vertex (keyed by (seed, i)), so every
// vertex has degree >= edgefactor >= 1 and every vertex can start a walk (a
// uniform random graph like GMT's, without isolated vertices). A vertex's
// adjacency lists its edges' other ends in edge order (for edge i, the u side
// before the v side; a self-loop appears twice in its vertex's list).
//
// The walkers: W = V / 2; walker w starts at start_vertex(w), a seeded
// permutation of the vertices, so starts are distinct. Step s (0-based) of
// walker w at vertex x goes to adjacency(x)[choice(w, s, degree(x))], a
// counter-based draw, so every implementation takes exactly the same walks
// in any order. Each walker folds the vertices it visits into a path hash;
// a walk ends after `length` steps.
//
// The check: the sum over walkers of walk_digest(w, end, hash), the number of
// finished walks and the number of steps, compared with the sequential walk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/plain/mix.hpp"

namespace shoal_apps::randomwalk {

/// The command line (shared by every implementation).
struct walk_options {
  int scale = 18;             ///< --scale: 2^scale vertices (unless --vertices)
  std::int64_t vertices = 0;  ///< --vertices: exact count, overrides --scale
  int edgefactor = 8;         ///< --edgefactor: edges generated per vertex
  std::int64_t length = 64;   ///< --length: steps per walk
  std::uint64_t seed = 1;     ///< --seed
  std::int64_t corrupt_walker =
      -1;  ///< hidden --inject-fault: that walker's first step goes astray
};

/// Declares the options on `cmd` with their ranges.
void add_walk_options(CLI::App& cmd, walk_options& o);

/// The problem the options describe. Vertices fit in 32 bits.
struct walk_problem {
  std::uint32_t vertices = 0;
  std::int64_t edges = 0;  ///< undirected input edges
  int edgefactor = 0;
  std::uint32_t walkers = 0;  ///< vertices / 2
  std::uint32_t length = 0;
  std::uint64_t seed = 0;
  std::int64_t corrupt_walker = -1;

  std::int64_t total_steps() const { return static_cast<std::int64_t>(walkers) * length; }
  std::string describe() const;
};

/// Checks the options (sizes, memory of `ranks` processes) and returns the
/// problem; throws input_error naming the flag.
walk_problem make_problem(const walk_options& o, int ranks);

/// A draw in [0, n), n <= 2^32, from a 64-bit random word (its high half
/// times n over 2^32: no division).
inline std::uint32_t scaled(std::uint64_t r, std::uint64_t n) noexcept {
  return static_cast<std::uint32_t>(((r >> 32) * n) >> 32);
}

/// The other end of input edge i (its first end is i / edgefactor).
inline std::uint32_t edge_target(const walk_problem& p, std::int64_t i) noexcept {
  return scaled(keyed_random(p.seed, 0, static_cast<std::uint64_t>(i)), p.vertices);
}

/// Start vertex of walker w (distinct for distinct w < walkers).
class start_vertices {
 public:
  explicit start_vertices(const walk_problem& p)
      : vertices_(p.vertices), perm_(bits_for(p.vertices), p.seed, 1) {}
  /// Cycle-walks the permutation of [0, 2^bits) into [0, vertices).
  std::uint32_t operator()(std::uint32_t w) const noexcept {
    std::uint64_t x = w;
    do x = perm_(x);
    while (x >= vertices_);
    return static_cast<std::uint32_t>(x);
  }

 private:
  std::uint64_t vertices_;
  bijection perm_;
};

/// Which neighbour (index into the adjacency) step `step` of walker w takes
/// from a vertex of degree `degree` (> 0).
inline std::uint32_t choice(std::uint64_t seed, std::uint32_t w, std::uint32_t step,
                            std::uint32_t degree) noexcept {
  return scaled(keyed_random(seed, 2 + static_cast<std::uint64_t>(w), step), degree);
}

/// The path hash before the first step, and after stepping to `v`.
inline std::uint64_t first_hash(std::uint32_t start) noexcept {
  return mix64(0x5851f42d4c957f2dULL ^ start);
}
inline std::uint64_t next_hash(std::uint64_t h, std::uint32_t v) noexcept {
  return mix64(h + 0x9e3779b97f4a7c15ULL + v);
}

/// A finished walk's share of the digest (summed over walkers, mod 2^64).
inline std::uint64_t walk_digest(std::uint32_t w, std::uint32_t end, std::uint64_t h) noexcept {
  return mix64(h ^ (static_cast<std::uint64_t>(w) << 32 | end));
}

/// What a run of every walk found (the sum of its cores' parts).
struct walk_totals {
  std::int64_t finished = 0;  ///< walks that ended
  std::int64_t steps = 0;     ///< steps taken
  std::uint64_t digest = 0;   ///< sum of walk_digest over finished walks

  bool operator==(const walk_totals&) const = default;
};

/// The whole graph as compressed rows, built from the edge list.
struct csr_graph {
  std::vector<std::int64_t> offsets;     ///< vertices + 1
  std::vector<std::uint32_t> neighbors;  ///< 2 * edges
};
csr_graph build_graph(const walk_problem& p);

/// Every walk, one after the other, on `g` (one core): `--impl sequential`.
walk_totals walk_sequential(const walk_problem& p, const csr_graph& g);

/// The reference: every walk again, on adjacency lists built here from the
/// edge list (not from build_graph), ignoring --inject-fault. One core.
walk_totals walk_reference(const walk_problem& p);

/// Where --inject-fault sends its walker instead of `next` (never `next`).
inline std::uint32_t astray(const walk_problem& p, std::uint32_t next) noexcept {
  return next + 1 == p.vertices ? 0 : next + 1;
}

}  // namespace shoal_apps::randomwalk
