// UTS-Mem (in_memory_tree.hpp): construction policy and id chunks, vertex
// records, the traversal tasks and the three phases.
#include "uts/in_memory_tree.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"
#include "uts/implicit_search.hpp"
#include "uts/plain/tree_rules.hpp"
#include "uts/work_stealing_search.hpp"

namespace shoal_apps::uts {
namespace {

using shoal::global_ptr;

/// A vertex of the tree in global memory: where its children's records
/// start and how many there are. 16 bytes, so 4 to a 64-byte block.
struct vertex {
  std::int64_t first_child;
  std::int32_t children;
  std::int32_t unused;
};
static_assert(sizeof(vertex) == 16);

/// Ids a core takes from the global counter at once.
constexpr std::int64_t id_chunk = 4096;
/// Sibling records one traversal task reads (a wider range is split).
constexpr int read_batch = 32;

// ---- construction ----

/// Where the tree is being built; copied to every core before the build.
struct build_context {
  global_ptr<vertex> vertices;
  global_ptr<std::int64_t> next_id;  // the global id counter (on core 0)
  std::int64_t capacity;             // records allocated
};
shoal::per_core<build_context> build_ctx;

/// A node being built: generated like an implicit node, plus its id.
struct build_node {
  tree_node tree;
  std::int64_t id;
};

struct build_policy {
  using node = build_node;
  struct core_state {
    std::int64_t next = 0;  // this core's chunk of ids: [next, end)
    std::int64_t end = 0;
  };
  static bool is_leaf(const build_node& n) { return process_tree().num_children(n.tree) == 0; }
  static void expand(const build_node& n, core_search<build_policy>& cs);
};

/// `k` consecutive ids from the core's chunk; a new chunk (blocking
/// fetch_add on the counter) when the current one is too short, whose
/// remainder (under 100 ids but for a binomial root) is left unused.
std::int64_t take_ids(build_policy::core_state& s, const build_context& ctx, int k) {
  if (s.end - s.next < k) {
    const std::int64_t size = std::max<std::int64_t>(id_chunk, k);
    s.next = shoal::delegate::fetch_add(ctx.next_id, size);
    s.end = s.next + size;
    if (s.end > ctx.capacity)
      shoal::abort_job(fmt::format("shoal uts: failed: the tree has more ids than the {} records "
                                   "allocated for it (the counting search and the build disagree)",
                                   ctx.capacity),
                       1);
  }
  const std::int64_t first = s.next;
  s.next += k;
  return first;
}

void build_policy::expand(const build_node& n, core_search<build_policy>& cs) {
  const int k = process_tree().num_children(n.tree);
  const build_context& ctx = build_ctx.local();
  const std::int64_t first = k > 0 ? take_ids(cs.state, ctx, k) : 0;
  shoal::delegate::async_write(ctx.vertices + n.id, vertex{first, k, 0});
  for (int i = 0; i < k; ++i) cs.stack.push({tree_rules::child(n.tree, i), first + i});
}

/// Records to allocate for a tree of `nodes` nodes: every id chunk but the
/// last of each core is used to within 99 ids, which the 1/32 covers.
std::int64_t records_for(std::int64_t nodes, const tree_params& p) {
  const std::int64_t root = p.type == tree_type::binomial ? static_cast<std::int64_t>(p.b0) : 0;
  return nodes + nodes / 32 + (shoal::cores() + 2) * id_chunk + root;
}

// ---- traversal ----

shoal::per_core<tree_counts> traversal_tally;

void visit_range(global_ptr<vertex> base, std::int64_t first, int count, std::int32_t depth);

/// One task per read_batch children of a vertex, stealable by any process.
void spawn_ranges(global_ptr<vertex> base, std::int64_t first, std::int64_t count,
                  std::int32_t depth) {
  for (std::int64_t off = 0; off < count; off += read_batch) {
    const auto n = static_cast<int>(std::min<std::int64_t>(read_batch, count - off));
    const std::int64_t f = first + off;
    shoal::spawn<shoal::anywhere>([base, f, n, depth] { visit_range(base, f, n, depth); });
  }
}

/// Records of consecutive ids that live on one core, read by one delegate:
/// a 64-byte block holds 4 records, so the children of a vertex take a few
/// round trips rather than one each.
constexpr int group_max = 8;
struct vertex_group {
  vertex v[group_max];
};

/// Future of the `n` records from `p` on, all homed on p.core().
shoal::future<vertex_group> read_group(global_ptr<vertex> p, int n) {
  return shoal::delegate::async_call(p.core(), [p, n] {
    vertex_group g{};
    for (int k = 0; k < n; ++k) g.v[k] = *(p + k).local();
    return g;
  });
}

/// Reads the records of ids [first, first + count), all at depth `depth`,
/// counts them and spawns the search of their children. Every read is in
/// flight before the first wait, which suspends the task.
void visit_range(global_ptr<vertex> base, std::int64_t first, int count, std::int32_t depth) {
  shoal::future<vertex_group> reads[read_batch];
  int sizes[read_batch];
  int groups = 0;
  for (int i = 0; i < count;) {
    const global_ptr<vertex> p = base + (first + i);
    int n = 1;
    while (i + n < count && n < group_max && (p + n).core() == p.core()) ++n;
    reads[groups] = read_group(p, n);
    sizes[groups++] = n;
    i += n;
  }
  tree_counts& tally = traversal_tally.local();  // a task stays on its core
  tally.nodes += count;
  if (depth > tally.depth) tally.depth = depth;
  for (int g = 0; g < groups; ++g) {
    const vertex_group records = reads[g].get();
    for (int k = 0; k < sizes[g]; ++k) {
      const vertex& v = records.v[k];
      if (v.children == 0) {
        ++tally.leaves;
      } else {
        spawn_ranges(base, v.first_child, v.children, depth + 1);
      }
    }
  }
}

/// The global arrays of one build (meaningful on rank 0, where they are made).
struct built_tree {
  global_ptr<vertex> vertices;
  global_ptr<std::int64_t> next_id;
};

/// Builds the tree of `nodes` nodes (counted before); returns the build time.
double build(const tree_params& p, std::int64_t nodes, built_tree& out) {
  reset_search<build_policy>();
  build_ctx.reset();
  const double seconds = timed_run([&out, &p, nodes] {
    const std::int64_t capacity = records_for(nodes, p);
    out.vertices = shoal::global_alloc<vertex>(capacity);
    out.next_id = shoal::global_alloc<std::int64_t>(1);
    shoal::delegate::write(out.next_id, std::int64_t{1});  // id 0 is the root's
    const build_context ctx{out.vertices, out.next_id, capacity};
    shoal::on_all_cores([ctx] { build_ctx.local() = ctx; });
    search_from<build_policy>({process_tree().root(), 0}, -1);
  });
  reset_search<build_policy>();
  return seconds;
}

/// Throws input_error when `capacity` records would not fit in the global
/// heap (--heap-mb per process): bad input, found before the build rather
/// than by global_alloc in the middle of it. Meaningful on rank 0.
void check_fits_in_heap(std::int64_t nodes, std::int64_t capacity) {
  const shoal::config& c = shoal::current_config();
  const double heap = static_cast<double>(c.heap_mb) * 1024.0 * 1024.0;
  // Blocks are dealt round-robin: each core may hold one block more.
  const double need =
      static_cast<double>(sizeof(vertex)) * static_cast<double>(capacity) / shoal::ranks() +
      static_cast<double>(c.block_bytes) * shoal::local_cores();
  if (need <= heap) return;
  throw input_error(fmt::format(
      "--impl in-memory: a tree of {} nodes needs about {:.1f} MiB of global heap per process "
      "({} bytes a node), more than --heap-mb {} ({} MiB); raise --heap-mb or use more processes",
      nodes, need / 1024.0 / 1024.0, sizeof(vertex), c.heap_mb, c.heap_mb));
}

}  // namespace

search_result run_in_memory(const tree_params& p) {
  const search_result counted = run_implicit(p);  // also sets the process tree
  if (shoal::myrank() == 0)  // where the count is known; the others wait in the build's run
    check_fits_in_heap(counted.counts.nodes, records_for(counted.counts.nodes, p));
  built_tree tree;
  const double build_s = build(p, counted.counts.nodes, tree);
  traversal_tally.reset();
  search_result r;
  r.construction_s = counted.seconds + build_s;
  r.seconds = timed_run([&tree] { visit_range(tree.vertices, 0, 1, 0); });
  shoal::run([&r, &tree] {
    r.counts = sum_over_cores<tree_counts>([] { return traversal_tally.local(); });
    shoal::global_free(tree.vertices);
    shoal::global_free(tree.next_id);
  });
  traversal_tally.reset();
  build_ctx.reset();
  return r;
}

}  // namespace shoal_apps::uts
