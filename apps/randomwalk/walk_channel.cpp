// `shoal randomwalk --impl channel`: the walkers migrate. Vertex v lives on
// core v % cores with its adjacency; a walker is a 24-byte value {walker,
// step, vertex, path hash} on a typed channel, sent to the core that owns
// its vertex. The handler takes one step there and sends the walker on to
// the owner of its next vertex (handlers may send). So V/2 dependent chains
// are in flight at once and their steps interleave, which hides the memory
// latency that bounds a sequential walk; messages to one core are
// aggregated.
//
// Termination: the root's completion_event counts the walks; the core where
// a walk ends completes it (one small message to core 0 per walk, against
// `length` steps). Then one allreduce sums the cores' totals.
#include "randomwalk/walk_channel.hpp"

#include <shoal/shoal.hpp>

#include <chrono>

#include "common/yield_every.hpp"

namespace shoal_apps::randomwalk {

namespace {

/// A walker in flight: at `vertex` after `step` steps, path hash `hash`.
struct walker_msg {
  std::uint32_t walker;
  std::uint32_t step;
  std::uint32_t vertex;
  std::uint32_t unused;
  std::uint64_t hash;
};

/// A core's share of the graph (its vertices v, local index v / cores) and
/// its part of the totals.
struct core_share {
  std::vector<std::int64_t> offsets;
  std::vector<std::uint32_t> neighbors;
  shoal::channel<walker_msg> channel;
  shoal::completion_event* done = nullptr;  // the root's, on core 0
  walk_totals totals;
};
shoal::per_core<core_share> shares;

/// The problem, the same on every process (set before each run).
walk_problem the_problem;

/// Builds the calling core's share from the whole edge list (each core reads
/// every edge and keeps the ends it owns, in edge order as build_graph does).
void build_share(core_share& s) {
  const walk_problem& p = the_problem;
  const auto cores = static_cast<std::uint32_t>(shoal::cores());
  const auto me = static_cast<std::uint32_t>(shoal::mycore());
  const std::uint32_t mine = (p.vertices + cores - 1 - me) / cores;
  s = core_share{};
  s.offsets.assign(std::size_t{mine} + 1, 0);
  const auto each_end = [&](auto&& f) {
    for (std::int64_t i = 0; i < p.edges; ++i) {
      const auto u = static_cast<std::uint32_t>(i / p.edgefactor);
      const std::uint32_t v = edge_target(p, i);
      if (u % cores == me) f(u / cores, v);
      if (v % cores == me) f(v / cores, u);
    }
  };
  each_end([&](std::uint32_t x, std::uint32_t) { ++s.offsets[std::size_t{x} + 1]; });
  for (std::size_t x = 0; x < mine; ++x) s.offsets[x + 1] += s.offsets[x];
  s.neighbors.resize(static_cast<std::size_t>(s.offsets[mine]));
  std::vector<std::int64_t> next(s.offsets.begin(), s.offsets.end() - 1);
  each_end([&](std::uint32_t x, std::uint32_t y) {
    s.neighbors[static_cast<std::size_t>(next[x]++)] = y;
  });
}

/// The channel's handler: walker `m` takes one step and moves on to the
/// owner of its next vertex, this core included. A step to a local vertex
/// also goes through the channel rather than a loop here: the handler then
/// runs over a batch of independent walkers, whose cache misses the CPU
/// overlaps, where a loop would chain one walker's dependent misses as the
/// sequential walk does (measured at --scale 18: about 2x on 1 process x
/// 1 and x 2 cores).
struct take_step {
  std::uint64_t seed;
  std::int64_t corrupt_walker;
  std::uint32_t length;
  std::uint32_t cores;

  void operator()(const walker_msg& m) const {
    core_share& s = shares.local();
    const std::size_t at = m.vertex / cores;
    const std::int64_t first = s.offsets[at];
    const auto degree = static_cast<std::uint32_t>(s.offsets[at + 1] - first);
    std::uint32_t y =
        s.neighbors[static_cast<std::size_t>(first + choice(seed, m.walker, m.step, degree))];
    if (m.step == 0 && m.walker == corrupt_walker) [[unlikely]]
      y = astray(the_problem, y);
    const std::uint64_t h = next_hash(m.hash, y);
    ++s.totals.steps;
    if (m.step + 1 < length) {
      s.channel.send(static_cast<int>(y % cores), walker_msg{m.walker, m.step + 1, y, 0, h});
      return;
    }
    ++s.totals.finished;
    s.totals.digest += walk_digest(m.walker, y, h);
    shoal::completion_event::complete_at(0, s.done);
  }
};

/// Starts this core's walkers (w = core, core + cores, ...). Task.
void start_walkers() {
  const walk_problem& p = the_problem;
  const core_share& s = shares.local();
  const start_vertices start(p);
  const auto cores = static_cast<std::uint32_t>(shoal::cores());
  yield_every pacing;  // let this core also handle the walkers sent to it
  for (auto w = static_cast<std::uint32_t>(shoal::mycore()); w < p.walkers; w += cores) {
    const std::uint32_t x = start(w);
    s.channel.send(static_cast<int>(x % cores), walker_msg{w, 0, x, 0, first_hash(x)});
    pacing.tick();
  }
}

walk_totals sum_totals(const walk_totals& mine) {
  return shoal::allreduce(mine, [](const walk_totals& a, const walk_totals& b) {
    return walk_totals{a.finished + b.finished, a.steps + b.steps, a.digest + b.digest};
  });
}

}  // namespace

walk_run walk_channel(const walk_problem& p) {
  the_problem = p;
  walk_run r;
  shoal::run([&r] {
    const auto t0 = std::chrono::steady_clock::now();
    shoal::on_all_cores([] { build_share(shares.local()); });
    const walk_problem& q = the_problem;
    auto ch = shoal::make_channel<walker_msg>(
        take_step{q.seed, q.corrupt_walker, q.length, static_cast<std::uint32_t>(shoal::cores())});
    shoal::completion_event done(q.walkers);
    shoal::completion_event* d = &done;
    shoal::on_all_cores([ch, d] {
      shares.local().channel = ch;
      shares.local().done = d;
    });
    const auto t1 = std::chrono::steady_clock::now();
    shoal::on_all_cores([] { start_walkers(); });
    done.wait();
    const auto t2 = std::chrono::steady_clock::now();
    walk_totals* out = &r.totals;
    shoal::on_all_cores([out] {
      const walk_totals all = sum_totals(shares.local().totals);
      if (shoal::mycore() == 0) *out = all;
      shares.local() = core_share{};
    });
    ch.close();
    r.construction_s = std::chrono::duration<double>(t1 - t0).count();
    r.seconds = std::chrono::duration<double>(t2 - t1).count();
  });
  return r;
}

}  // namespace shoal_apps::randomwalk
