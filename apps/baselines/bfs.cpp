// shoal-baseline-bfs: Graph500 BFS in plain C++ and MPI, no shoal: the
// hand-tuned bulk-synchronous baseline `shoal bfs` is measured against.
//
// Same flags, search keys, validation and JSON as `shoal bfs` (the graph
// options come from apps/common/plain/graph.hpp, the key choice and the
// validation from apps/bfs/plain/graph500.hpp):
//   1. every rank takes its slice of the Kronecker edge list (or of the
//      file) and the distributed CSR is built by MPI_Alltoallv (timed:
//      construction_s; bfs_graph.hpp);
//   2. the keys are drawn on rank 0 among vertices with an edge;
//   3. each key is searched level by level (timed; bfs_search.hpp), then the
//      parent array is gathered on rank 0 and checked against the whole edge
//      list by the Graph500 rules (untimed);
//   4. rank 0 prints the report; the exit status is 1 when a search failed
//      validation, 2 on bad input (message on stderr), 0 otherwise.
// Every rank takes every collective step, so an error on any rank ends the
// whole job the same way on every rank instead of hanging.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "baselines/bfs_graph.hpp"
#include "baselines/bfs_search.hpp"
#include "baselines/mpi_job.hpp"
#include "bfs/plain/graph500.hpp"
#include "bfs/plain/search_report.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/progress.hpp"
#include "common/plain/report.hpp"

namespace {

namespace gb = shoal_apps::bfs;
using shoal_baseline::block_distribution;
using shoal_baseline::level_sync_bfs;
using shoal_baseline::local_graph;

constexpr const char* program = "shoal-baseline-bfs";

struct options {
  shoal_apps::graph_options graph;
  bool json = false;
  std::string impl;  ///< accepted and ignored: the harness passes `shoal bfs`'s line
  bool sender_filter = true;
  bool corrupt = false;  ///< hidden test hook: the first parent array loses its root
};

using shoal_baseline::job_exit;

using shoal_baseline::my_rank;
using shoal_baseline::rank_count;

/// Collective: a barrier that sleeps while it waits (the other ranks idle
/// while rank 0 validates: their cores are better left to whoever else runs
/// on the machine), then a plain barrier, so that all ranks leave together.
void idle_barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done != 0) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Collective: runs `fn` on every rank; bad input anywhere ends every rank with status 2.
template <class F>
void collectively(F&& fn) {
  shoal_baseline::collectively(program, fn);
}

/// Parses argv on every rank (each sees the same line, so all agree); returns
/// an exit status when the program should stop (help or a bad flag).
std::optional<int> parse(options& o, int argc, char** argv) {
  CLI::App cli{"Graph500 BFS, plain MPI baseline (level-synchronous, MPI_Alltoallv per level)"};
  shoal_apps::add_graph_options(cli, o.graph);
  cli.add_flag("--json", o.json, "print one JSON object on stdout instead of the summary");
  cli.add_option("--impl", o.impl, "ignored (accepted so the line of `shoal bfs` runs here too)");
  cli.add_flag("--sender-filter,!--no-sender-filter", o.sender_filter,
               "send each remote vertex at most once per search (default on)");
  // Hidden: proves a failed check fails the run.
  shoal_apps::hide_from_help(cli, cli.add_flag("--corrupt-for-test", o.corrupt));
  if (const int status = shoal_baseline::parse_command_line(cli, program, argc, argv); status >= 0)
    return status;
  return std::nullopt;
}

/// The input graph's size, and the file's edges when it came from --graph.
struct input {
  std::int64_t vertices = 0;
  std::int64_t edges = 0;
  std::vector<shoal_apps::edge> file_edges;
};

input load_input(const options& o) {
  input in;
  std::string origin = "--scale/--edgefactor";
  if (!o.graph.file.empty()) {
    shoal_apps::edge_list list = shoal_apps::read_graph_file(o.graph.file);
    in.vertices = list.vertices;
    in.edges = static_cast<std::int64_t>(list.edges.size());
    in.file_edges = std::move(list.edges);
    origin = "--graph " + list.size_origin;
  } else {
    in.vertices = shoal_apps::kronecker_vertices(o.graph);
    in.edges = shoal_apps::kronecker_edge_count(o.graph);
  }
  gb::check_fits_in_memory(in.vertices, in.edges, rank_count(), origin);
  if (in.vertices > shoal_baseline::max_vertices)
    throw shoal_apps::input_error(
        fmt::format("{}: {} vertices, more than the baseline's 2^32", origin, in.vertices));
  if (o.graph.root >= in.vertices)
    throw shoal_apps::input_error(fmt::format(
        "--root {}: no such vertex (the graph has {} vertices)", o.graph.root, in.vertices));
  return in;
}

shoal_baseline::edge_source source_of(const options& o, const input& in) {
  if (o.graph.file.empty())
    return [&o](std::int64_t a, std::int64_t b, std::vector<shoal_apps::edge>& out) {
      shoal_apps::kronecker_edges(o.graph, a, b, out);
    };
  return [&in](std::int64_t a, std::int64_t b, std::vector<shoal_apps::edge>& out) {
    out.insert(out.end(), in.file_edges.begin() + a, in.file_edges.begin() + b);
  };
}

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<std::int64_t>() {
  return MPI_INT64_T;
}
template <>
MPI_Datatype mpi_type<std::uint8_t>() {
  return MPI_UINT8_T;
}

/// Collective: MPI_Gatherv of every rank's block onto rank 0, in global
/// vertex order (empty elsewhere).
template <class T>
std::vector<T> gather_blocks(const block_distribution& dist, const std::vector<T>& mine) {
  const int ranks = dist.ranks();
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(counts.size());
  for (int r = 0; r < ranks; ++r) {
    counts[static_cast<std::size_t>(r)] = static_cast<int>(dist.count(r));
    displs[static_cast<std::size_t>(r)] = static_cast<int>(dist.first(r));
  }
  std::vector<T> all(my_rank() == 0 ? static_cast<std::size_t>(dist.vertices()) : 0);
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), mpi_type<T>(), all.data(), counts.data(),
              displs.data(), mpi_type<T>(), 0, MPI_COMM_WORLD);
  return all;
}

/// Collective: the search keys, drawn on rank 0 as `shoal bfs` draws them
/// (choose_roots over the has-edge flags) and broadcast, or --root.
std::vector<std::int64_t> search_keys(const local_graph& g, const options& o) {
  if (o.graph.root >= 0) return {o.graph.root};
  std::vector<std::uint8_t> mine(static_cast<std::size_t>(g.count()));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = g.offsets[i + 1] > g.offsets[i] ? 1 : 0;
  const std::vector<std::uint8_t> all = gather_blocks(g.dist, mine);
  std::vector<std::int64_t> keys;
  if (my_rank() == 0)
    keys = gb::choose_roots(std::vector<bool>(all.begin(), all.end()), o.graph.roots, o.graph.seed);
  int n = static_cast<int>(keys.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  keys.resize(static_cast<std::size_t>(n));
  MPI_Bcast(keys.data(), n, MPI_INT64_T, 0, MPI_COMM_WORLD);
  collectively([n] {
    if (n == 0)
      throw shoal_apps::input_error("the graph has no edge other than self-loops: no search key");
  });
  return keys;
}

/// Collective: every key searched (timed), gathered and validated (untimed).
gb::search_results search_all(const local_graph& g, const options& o,
                              const std::vector<std::int64_t>& keys,
                              const std::vector<shoal_apps::edge>& all_edges) {
  level_sync_bfs bfs(g, MPI_COMM_WORLD, o.sender_filter);
  gb::search_results out;
  shoal_apps::progress shown("bfs baseline: roots", static_cast<std::int64_t>(keys.size()));
  for (std::size_t k = 0; k < keys.size(); ++k) {
    idle_barrier();
    const double t0 = MPI_Wtime();
    bfs.search(keys[k]);
    const double seconds = MPI_Wtime() - t0;
    std::vector<std::int64_t> parent = gather_blocks(g.dist, bfs.parents());
    if (my_rank() != 0) continue;
    if (k == 0 && o.corrupt) parent[static_cast<std::size_t>(keys[k])] = -1;
    out.record(keys[k], gb::validate_bfs_tree(all_edges, g.dist.vertices(), keys[k], parent),
               seconds);
    shown.update(static_cast<std::int64_t>(k + 1));
  }
  return out;
}

shoal_apps::report make_report(const options& o, const input& in, const gb::search_results& out,
                               double construction_s) {
  shoal_apps::report r("bfs", "mpi-alltoallv");
  r.set_shape(rank_count(), rank_count());
  gb::fill_search_report(r, {o.graph, in.vertices, in.edges}, o.sender_filter, out, construction_s);
  return r;
}

/// Collective: construction, searches and report, once the input is known.
int run_with(const options& o, input& in) {
  const block_distribution dist(in.vertices, rank_count());
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  const local_graph g =
      shoal_baseline::build_local_graph(dist, in.edges, source_of(o, in), MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double construction_s = MPI_Wtime() - t0;
  const std::vector<std::int64_t> keys = search_keys(g, o);
  std::vector<shoal_apps::edge> all_edges;  // rank 0 validates against the whole list
  if (my_rank() == 0 && o.graph.file.empty())
    shoal_apps::kronecker_edges(o.graph, 0, in.edges, all_edges);
  if (my_rank() == 0 && !o.graph.file.empty()) all_edges = std::move(in.file_edges);
  std::vector<shoal_apps::edge>().swap(in.file_edges);
  const gb::search_results out = search_all(g, o, keys, all_edges);
  int ok = out.ok ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (my_rank() == 0 && !shoal_apps::print_report(make_report(o, in, out, construction_s), o.json))
    return 1;
  return ok == 1 ? 0 : 1;
}

int run(int argc, char** argv) {
  options o;
  if (const std::optional<int> stop = parse(o, argc, argv)) return *stop;
  input in;
  collectively([&] { in = load_input(o); });
  return run_with(o, in);
}

}  // namespace

int main(int argc, char** argv) { return shoal_baseline::baseline_main(program, argc, argv, run); }
