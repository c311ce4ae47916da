// The Graph500 Kronecker generator, counter-based.
//
// Edge number j of the unshuffled list is drawn from (seed, j) alone: each
// of the `scale` levels picks a quadrant of the adjacency matrix with
// probabilities A=0.57, B=0.19, C=0.19, D=0.05 (one 32-bit draw per level,
// two levels per 64-bit mixer output). Vertices are then relabelled by a
// seeded bijection of [0, 2^scale) (so vertex 0 is not the hub), and the
// edge order is shuffled by a seeded bijection of [0, edges) (a permutation
// of the next power of two, walked until it lands inside [0, edges)).
#include "common/plain/graph.hpp"
#include "common/plain/mix.hpp"

namespace shoal_apps {

namespace {

// The initiator's cumulative thresholds on a 32-bit draw.
constexpr double a = 0.57, b = 0.19, c = 0.19;
constexpr auto to_u32 = [](double p) { return static_cast<std::uint64_t>(p * 4294967296.0); };
constexpr std::uint64_t t_a = to_u32(a);
constexpr std::uint64_t t_ab = to_u32(a + b);
constexpr std::uint64_t t_abc = to_u32(a + b + c);

// Streams of keyed_random, one per use, so no two uses share draws.
constexpr std::uint64_t edge_stream = 1;
constexpr std::uint64_t vertex_stream = 2;
constexpr std::uint64_t order_stream = 3;

class generator {
 public:
  explicit generator(const graph_options& o)
      : seed_(o.seed),
        scale_(o.scale),
        edges_(static_cast<std::uint64_t>(kronecker_edge_count(o))),
        relabel_(o.scale, o.seed, vertex_stream),
        order_(bits_for(edges_), o.seed, order_stream) {}

  /// Edge at position `pos` of the shuffled list.
  edge at(std::uint64_t pos) const noexcept { return draw(shuffled(pos)); }

 private:
  // Cycle walking: a permutation of [0, 2^bits) restricted to [0, edges_)
  // by re-applying it until it lands inside; the range is less than twice
  // edges_, so about two steps on average.
  std::uint64_t shuffled(std::uint64_t pos) const noexcept {
    std::uint64_t j = order_(pos);
    while (j >= edges_) j = order_(j);
    return j;
  }

  edge draw(std::uint64_t j) const noexcept {
    std::uint64_t u = 0;
    std::uint64_t v = 0;
    std::uint64_t r = 0;
    for (int level = 0; level < scale_; ++level) {
      if (level % 2 == 0)
        r = keyed_random(seed_, edge_stream, j * 32 + static_cast<std::uint64_t>(level / 2));
      const std::uint64_t t = (level % 2 == 0) ? (r & 0xffffffffULL) : (r >> 32);
      const std::uint64_t in_ab = t >= t_ab ? 1 : 0;
      // Quadrants in order A=(0,0), B=(0,1), C=(1,0), D=(1,1).
      const std::uint64_t col =
          static_cast<std::uint64_t>(t >= t_a) ^ in_ab ^ static_cast<std::uint64_t>(t >= t_abc);
      u = (u << 1) | in_ab;
      v = (v << 1) | col;
    }
    return {static_cast<std::int64_t>(relabel_(u)), static_cast<std::int64_t>(relabel_(v))};
  }

  std::uint64_t seed_;
  int scale_;
  std::uint64_t edges_;
  bijection relabel_;
  bijection order_;
};

}  // namespace

std::int64_t kronecker_vertices(const graph_options& o) { return std::int64_t{1} << o.scale; }

std::int64_t kronecker_edge_count(const graph_options& o) {
  return static_cast<std::int64_t>(o.edgefactor) << o.scale;
}

void kronecker_edges(const graph_options& o, std::int64_t first, std::int64_t last,
                     std::vector<edge>& out) {
  if (last <= first) return;
  const generator g(o);
  out.reserve(out.size() + static_cast<std::size_t>(last - first));
  for (std::int64_t i = first; i < last; ++i) out.push_back(g.at(static_cast<std::uint64_t>(i)));
}

}  // namespace shoal_apps
