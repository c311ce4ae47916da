// PageRank by pull with per-core ghost contributions (pull.hpp).
#include "pagerank/pull.hpp"

#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <span>

#include "common/yield_every.hpp"

namespace shoal_apps::pagerank {

namespace {

/// One core's block: in-link rows (sources as vertex ids), out-degrees,
/// ranks. Touched only by that core's task.
struct pull_state {
  block_layout layout;
  int me = 0;
  std::vector<std::uint64_t> in_offsets;  ///< count + 1 row starts
  std::vector<std::uint32_t> sources;     ///< places (g_position), sorted per row, no duplicates
  std::vector<std::uint32_t> out_degree;
  /// The links, cut by source into segments of segment_vertices vertices,
  /// one after the other, each in destination order: (own destination,
  /// source) pairs.
  std::vector<std::uint32_t> run_dest;  ///< per run: the own destination
  /// Per run: its entries in src, a multiple of 4 (links, then the zero
  /// place n as padding).
  std::vector<std::uint32_t> run_len;
  std::vector<std::uint32_t> src;
  std::vector<double> rank;
  // Results (identical on every core; read from core 0 of rank 0).
  int iterations = 0;
  double l1 = 0;
  std::int64_t arcs = 0;
  std::int64_t dangling = 0;
};

shoal::per_core<pull_state> g_pull;
/// This process's edge list and (rank 0) where the ranks go: set by every
/// process before its cores run (a pointer in a closure would be another
/// process's address).
const std::vector<edge>* g_edges_in = nullptr;
std::vector<double>* g_ranks_out = nullptr;
/// Every vertex's place in the copies of contributions (and so the id its
/// in-links name it by): vertices by decreasing out-degree, ties by id.
/// Identical on every process (from the whole edge list); read-only while
/// the cores run.
std::vector<std::uint32_t> g_position;

/// Identity places (--pull-order vertex).
std::vector<std::uint32_t> positions_by_id(std::int64_t n) {
  std::vector<std::uint32_t> position(static_cast<std::size_t>(n));
  for (std::size_t v = 0; v < position.size(); ++v) position[v] = static_cast<std::uint32_t>(v);
  return position;
}

/// Places by decreasing out-degree (counting sort, stable by id): the
/// sources read most (the hubs of a Kronecker graph) share cache lines and
/// the first segment, so most reads of contributions hit L1 or L2 and
/// the first segment's runs are long. Degrees count duplicate links too:
/// the order is a hint; the result does not depend on it beyond rounding.
std::vector<std::uint32_t> positions_by_degree(std::int64_t n, const std::vector<edge>& edges) {
  const auto count = static_cast<std::size_t>(n);
  std::vector<std::uint32_t> degree(count, 0);
  for (const edge& e : edges)
    if (e.u != e.v) ++degree[static_cast<std::size_t>(e.u)];
  const std::uint32_t top = count == 0 ? 0 : *std::max_element(degree.begin(), degree.end());
  // start[top - d]: the first place of the vertices of degree d.
  std::vector<std::uint32_t> start(static_cast<std::size_t>(top) + 2, 0);
  for (const std::uint32_t d : degree) ++start[top - d + 1];
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  std::vector<std::uint32_t> position(count);
  for (std::size_t v = 0; v < count; ++v) position[v] = start[top - degree[v]]++;
  return position;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::array<double, 2> sum2(const std::array<double, 2>& x) {
  return shoal::allreduce(x, [](const std::array<double, 2>& a, const std::array<double, 2>& b) {
    return std::array<double, 2>{a[0] + b[0], a[1] + b[1]};
  });
}

/// Pads each run of `src` (lengths `run_len`) to a multiple of 4 entries
/// with `zero`, the place of the copies' zero slot; run_len then counts
/// the padded entries.
void pad_runs(std::vector<std::uint32_t>& run_len, std::vector<std::uint32_t>& src,
              std::uint32_t zero) {
  std::uint64_t padded = 0;
  for (const std::uint32_t len : run_len) padded += (len + 3) / 4 * 4;
  std::vector<std::uint32_t> out(padded);
  std::uint64_t from = 0;
  std::uint64_t to = 0;
  for (std::uint32_t& len : run_len) {
    std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(from), len,
                out.begin() + static_cast<std::ptrdiff_t>(to));
    from += len;
    to += len;
    for (; len % 4 != 0; ++len) out[to++] = zero;
  }
  src.swap(out);
}

/// This core's in-link rows and out-degrees from the whole edge list
/// (self-loops and duplicate links dropped, as the reference does). SPMD.
void construct(std::int64_t n, std::uint32_t segment_vertices) {
  const std::vector<edge>& edges = *g_edges_in;
  pull_state& st = g_pull.local();
  st.me = shoal::mycore();
  st.layout = block_layout(n, shoal::cores());
  const std::int64_t first = st.layout.first(st.me);
  const auto count = static_cast<std::size_t>(st.layout.count(st.me));
  const std::int64_t last = first + static_cast<std::int64_t>(count);
  // Out-degrees of the own vertices: the out-rows' lengths (deduplicated).
  const out_rows rows = build_out_rows(edges, st.layout, st.me);
  st.out_degree.resize(count);
  std::int64_t dangling = 0;
  for (std::size_t l = 0; l < count; ++l) {
    st.out_degree[l] = static_cast<std::uint32_t>(rows.offsets[l + 1] - rows.offsets[l]);
    dangling += st.out_degree[l] == 0 ? 1 : 0;
  }
  // In-rows by counting sort on the target, then sorted and deduplicated.
  st.in_offsets.assign(count + 1, 0);
  for (const edge& e : edges)
    if (e.v >= first && e.v < last && e.u != e.v)
      ++st.in_offsets[static_cast<std::size_t>(e.v - first) + 1];
  for (std::size_t l = 0; l < count; ++l) st.in_offsets[l + 1] += st.in_offsets[l];
  std::vector<std::uint64_t> at(st.in_offsets.begin(), st.in_offsets.end() - 1);
  st.sources.resize(st.in_offsets.back());
  for (const edge& e : edges)
    if (e.v >= first && e.v < last && e.u != e.v)
      st.sources[at[static_cast<std::size_t>(e.v - first)]++] =
          g_position[static_cast<std::size_t>(e.u)];
  sort_and_dedupe_rows(st.in_offsets, st.sources);
  const std::uint64_t kept = st.sources.size();
  // Segments by source, each in destination order (rows are walked in order).
  const auto segments = static_cast<std::size_t>((n + segment_vertices - 1) / segment_vertices);
  std::vector<std::uint64_t> put(segments + 1, 0);  // where each segment's next link goes
  for (const std::uint32_t u : st.sources) ++put[u / segment_vertices + 1];
  for (std::size_t g = 0; g < segments; ++g) put[g + 1] += put[g];
  std::vector<std::uint32_t> dest(kept);
  st.src.resize(kept);
  for (std::size_t l = 0; l < count; ++l)
    for (std::uint64_t i = st.in_offsets[l]; i < st.in_offsets[l + 1]; ++i) {
      const std::uint32_t u = st.sources[i];
      const std::uint64_t at_seg = put[u / segment_vertices]++;
      dest[at_seg] = static_cast<std::uint32_t>(l);
      st.src[at_seg] = u;
    }
  // Runs: the links of one destination within one segment, summed in
  // registers (an accumulator in memory would chain every add of a row
  // through a store and a load).
  // After the fill, put[g] is where segment g + 1 starts.
  std::size_t next_segment = 0;
  for (std::uint64_t i = 0; i < kept; ++i) {
    bool starts_segment = false;
    while (next_segment < segments && put[next_segment] == i) {
      starts_segment = true;
      ++next_segment;
    }
    if (i > 0 && !starts_segment && dest[i] == dest[i - 1] &&
        st.run_len.back() < std::numeric_limits<std::uint32_t>::max() - 3) {
      ++st.run_len.back();
      continue;
    }
    st.run_dest.push_back(dest[i]);
    st.run_len.push_back(1);
  }
  pad_runs(st.run_len, st.src, static_cast<std::uint32_t>(n));
  std::vector<std::uint32_t>().swap(st.sources);
  std::vector<std::uint64_t>().swap(st.in_offsets);
  st.rank.assign(count, 1.0 / static_cast<double>(n));
  const std::array<std::int64_t, 2> totals = shoal::allreduce(
      std::array<std::int64_t, 2>{static_cast<std::int64_t>(kept), dangling},
      [](const std::array<std::int64_t, 2>& a, const std::array<std::int64_t, 2>& b) {
        return std::array<std::int64_t, 2>{a[0] + b[0], a[1] + b[1]};
      });
  st.arcs = totals[0];
  st.dangling = totals[1];
}

/// This process's two copies of every vertex's contribution (one per
/// parity of the iteration): each core writes its own block of the next
/// copy while the cores read the current one, and one collective per
/// iteration (the sums) separates the two. The cores of a process are
/// threads, so one copy serves them all: no per-core copy is made or
/// allocated per iteration. Sized by run_pull on every process before its
/// cores start: n places and the zero place n that pads the runs (written
/// by no core).
template <class T>
std::vector<T> g_contribution[2];

/// A run of one core's new contributions (vertex order) for the other
/// processes' copies: one 128-byte channel value.
template <class T>
struct contribution_block {
  static constexpr std::uint32_t capacity = (128 - 8) / sizeof(T);
  std::uint32_t first = 0;   ///< vertex id of values[0]
  std::uint16_t count = 0;   ///< values used
  std::uint16_t parity = 0;  ///< the copy they go to
  T values[capacity] = {};
};
static_assert(sizeof(contribution_block<float>) == 128);
static_assert(sizeof(contribution_block<double>) == 128);

/// Writes a block into its process's copy (the channel's handler; the
/// receiving core scatters the values to their places).
template <class T>
void place_block(const contribution_block<T>& b) {
  T* out = g_contribution<T>[b.parity].data();
  const std::uint32_t* place = g_position.data() + b.first;
  for (std::uint32_t i = 0; i < b.count; ++i) out[place[i]] = b.values[i];
}

/// Sends this core's block (`values`, its vertices from `first`) into
/// copy `parity` of every other process (to the core of the same local
/// index), then ends the channel's phase: every block of every core is in
/// place when it returns. SPMD.
template <class T>
void send_blocks(const shoal::channel<contribution_block<T>>& ch, const T* values,
                 std::size_t count, std::int64_t first, int parity) {
  const int local = shoal::local_cores();
  const int me = shoal::myrank();
  const int my_local = shoal::mycore() - me * local;
  yield_every pacing;
  for (int k = 1; k < shoal::ranks(); ++k) {
    const int dest = (me + k) % shoal::ranks() * local + my_local;
    for (std::size_t i = 0; i < count; i += contribution_block<T>::capacity) {
      contribution_block<T> b;
      b.first = static_cast<std::uint32_t>(first + static_cast<std::int64_t>(i));
      b.count = static_cast<std::uint16_t>(
          std::min<std::size_t>(contribution_block<T>::capacity, count - i));
      b.parity = static_cast<std::uint16_t>(parity);
      std::copy_n(values + i, b.count, b.values);
      ch.send(dest, b);
      pacing.tick();
    }
  }
  ch.end_phase();
}

/// The timed iterations, on every core. T: the type contributions are
/// stored and read as. SPMD.
template <class T>
void iterate(double tolerance, int max_iterations, bool corrupt,
             const shoal::channel<contribution_block<T>>& ch) {
  pull_state& st = g_pull.local();
  const auto n = static_cast<double>(st.layout.vertices());
  const std::size_t count = st.rank.size();
  const auto first = static_cast<std::size_t>(st.layout.first(st.me));
  const bool remote = shoal::ranks() > 1;
  // 1 / out-degree (0 without out-links, whose rank is spread uniformly):
  // one multiply per vertex and iteration instead of a division.
  std::vector<double> inverse(count);
  for (std::size_t v = 0; v < count; ++v)
    inverse[v] = st.out_degree[v] == 0 ? 0.0 : 1.0 / static_cast<double>(st.out_degree[v]);
  std::vector<double> acc(count);
  double* rank = st.rank.data();
  // Iteration 0's contributions; every block written before any is read.
  // Places of the own vertices in the copies; `block`: the own
  // contributions in vertex order, for the other processes.
  const std::uint32_t* place = g_position.data() + first;
  std::vector<T> block(remote ? count : 0);
  double own_dangling = 0;
  {
    T* c0 = g_contribution<T>[0].data();
    for (std::size_t v = 0; v < count; ++v) {
      const T x = static_cast<T>(rank[v] * inverse[v]);
      c0[place[v]] = x;
      if (remote) block[v] = x;
      if (st.out_degree[v] == 0) own_dangling += rank[v];
    }
    if (remote) send_blocks(ch, block.data(), count, st.layout.first(st.me), 0);
  }
  double dangling = sum2({0, own_dangling})[1];
  int it = 0;
  double l1 = 0;
  while (it < max_iterations) {
    const T* c = g_contribution<T>[it & 1].data();
    T* next = g_contribution<T>[(it + 1) & 1].data();
    const double base = (1.0 - damping) / n + damping * dangling / n;
    // Sum the in-links segment by segment into acc (zero: the update below
    // clears each entry it reads).
    const std::uint32_t* src = st.src.data();
    const std::uint32_t* run_dest = st.run_dest.data();
    const std::uint32_t* run_len = st.run_len.data();
    const std::size_t runs = st.run_dest.size();
    // The test hook loses core 0's first link in the first iteration.
    const bool drop = corrupt && it == 0 && st.me == 0 && runs > 0;
    for (std::size_t r = 0; r < runs; ++r) {
      const std::uint32_t len = run_len[r];  // a multiple of 4 (pad_runs)
      const std::uint32_t* s = src;
      src += len;
      // Four partial sums: four adds in flight, not one chain of them.
      double a0 = 0;
      double a1 = 0;
      double a2 = 0;
      double a3 = 0;
      for (std::uint32_t k = 0; k < len; k += 4) {
        a0 += c[s[k]];
        a1 += c[s[k + 1]];
        a2 += c[s[k + 2]];
        a3 += c[s[k + 3]];
      }
      if (drop && r == 0) a0 -= c[s[0]];  // the first link lost
      acc[run_dest[r]] += (a0 + a1) + (a2 + a3);
    }
    // The new ranks, their change, and the next iteration's contributions
    // (into the other copy: other cores may still be reading this one).
    std::array<double, 2> sums{0, 0};  // l1, dangling
    for (std::size_t v = 0; v < count; ++v) {
      const double r = base + damping * acc[v];
      acc[v] = 0;
      sums[0] += std::fabs(r - rank[v]);
      rank[v] = r;
      const T x = static_cast<T>(r * inverse[v]);
      next[place[v]] = x;
      if (remote) block[v] = x;
      if (inverse[v] == 0) sums[1] += r;
    }
    if (remote) send_blocks(ch, block.data(), count, st.layout.first(st.me), (it + 1) & 1);
    // Also the barrier on one process: every block of `next` is written once
    // it returns (between processes, send_blocks's end_phase is one too).
    const std::array<double, 2> total = sum2(sums);
    ++it;
    l1 = total[0];
    dangling = total[1];
    if (l1 < tolerance) break;
  }
  st.iterations = it;
  st.l1 = l1;
}

}  // namespace

void add_pull_options(CLI::App& cmd, pull_options& p) {
  cmd.add_option("--pull-order", p.order,
                 "--impl pull/pull-float: where each vertex's contribution sits in the "
                 "copies: degree (by decreasing out-degree, hubs together) or vertex (by id)")
      ->check(CLI::IsMember({"degree", "vertex"}))
      ->each([&p](const std::string&) { p.given = true; })
      ->capture_default_str();
  cmd.add_option("--segment-kib", p.segment_kib,
                 "--impl pull/pull-float: KiB of contributions per source segment (links "
                 "summed segment by segment so the reads stay in cache); 0: one segment; "
                 "default 1024 for pull, 512 for pull-float (2^17 sources either way)")
      ->check(CLI::Range(0U, 1U << 20))
      ->each([&p](const std::string&) {
        p.given = true;
        p.segment_given = true;
      });
}

void run_pull(const pagerank_options& o, const pull_options& po, std::int64_t n,
              const std::vector<edge>& edges, bool single_precision, outcome& out,
              std::vector<double>& ranks) {
  g_edges_in = &edges;
  g_ranks_out = &ranks;
  for (int p = 0; p < 2; ++p) {
    if (single_precision)
      g_contribution<float>[p].assign(static_cast<std::size_t>(n) + 1, 0.0F);
    else
      g_contribution<double>[p].assign(static_cast<std::size_t>(n) + 1, 0.0);
  }
  const auto t_order = std::chrono::steady_clock::now();
  g_position = po.order == "vertex" ? positions_by_id(n) : positions_by_degree(n, edges);
  const double order_s = seconds_since(t_order);
  shoal::run([&] {
    const auto t0 = std::chrono::steady_clock::now();
    // Whole vertices: a segment of 0 KiB is one segment of every source.
    const std::uint32_t kib = po.segment_given ? po.segment_kib : single_precision ? 512 : 1024;
    const std::uint64_t per_segment =
        kib == 0 ? static_cast<std::uint64_t>(n)
                 : std::uint64_t{kib} * 1024 / (single_precision ? sizeof(float) : sizeof(double));
    const auto segment_vertices = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(per_segment, 1, std::numeric_limits<std::uint32_t>::max()));
    shoal::on_all_cores([n, segment_vertices] { construct(n, segment_vertices); });
    out.construction_s = order_s + seconds_since(t0);
  });
  shoal::run([&] {
    const double tolerance = o.tolerance;
    const int iterations = o.iterations;
    const bool corrupt = o.corrupt;
    shoal::channel<contribution_block<float>> floats;
    shoal::channel<contribution_block<double>> doubles;
    // Only between processes (the cores of one share the copies).
    if (shoal::ranks() > 1 && single_precision)
      floats = shoal::make_channel<contribution_block<float>>(
          [](const contribution_block<float>& b) { place_block(b); });
    else if (shoal::ranks() > 1)
      doubles = shoal::make_channel<contribution_block<double>>(
          [](const contribution_block<double>& b) { place_block(b); });
    const auto t0 = std::chrono::steady_clock::now();
    if (single_precision)
      shoal::on_all_cores([=] { iterate<float>(tolerance, iterations, corrupt, floats); });
    else
      shoal::on_all_cores([=] { iterate<double>(tolerance, iterations, corrupt, doubles); });
    out.time_s = seconds_since(t0);
    if (floats) floats.close();
    if (doubles) doubles.close();
    shoal::on_all_cores([] {
      const pull_state& st = g_pull.local();
      shoal::gathered<double> all = shoal::gatherv(std::span<const double>(st.rank), 0);
      if (st.me == 0) *g_ranks_out = std::move(all.values);
    });
    const pull_state& s0 = g_pull.local();
    out.iterations = s0.iterations;
    out.l1_change = s0.l1;
    out.arcs = s0.arcs;
    out.dangling = s0.dangling;
  });
  g_pull.reset();
  for (int p = 0; p < 2; ++p) {
    std::vector<float>().swap(g_contribution<float>[p]);
    std::vector<double>().swap(g_contribution<double>[p]);
  }
  std::vector<std::uint32_t>().swap(g_position);
  g_edges_in = nullptr;
  g_ranks_out = nullptr;
}

}  // namespace shoal_apps::pagerank
