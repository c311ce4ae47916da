// task_tree: count the nodes of a tree that is discovered while it is built.
//
// Each node decides from its id how many children it has (0 to 4, a
// pseudo-random function), so nobody knows the size in advance. Children are
// spawned as tasks that any core of any process may steal, or sent to a core
// chosen from their id; every node adds one to a global counter with an
// asynchronous delegate. shoal::finish waits for all of it, however deep and
// wherever it ran: no counting by hand. The count is checked against a
// sequential walk of the same tree.
//
//   example-task-tree [--depth D]            one process, every core
//   mpirun -np 2 example-task-tree --cores 2   the same, on two processes
#include <shoal/shoal.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using node_id = std::uint64_t;

int children(node_id id, int depth, int max_depth) {
  if (depth >= max_depth) return 0;
  std::uint64_t x = id * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  x ^= x >> 31;
  return depth < 2 ? 4 : static_cast<int>(x % 5);  // a bushy start, then random
}

std::int64_t count_sequential(node_id id, int depth, int max_depth) {
  std::int64_t n = 1;
  for (int k = 0; k < children(id, depth, max_depth); ++k)
    n += count_sequential(id * 5 + static_cast<node_id>(k) + 1, depth + 1, max_depth);
  return n;
}

void visit(shoal::global_ptr<std::int64_t> counter, node_id id, int depth, int max_depth) {
  shoal::delegate::async_add(counter, std::int64_t{1});
  for (int k = 0; k < children(id, depth, max_depth); ++k) {
    const node_id child = id * 5 + static_cast<node_id>(k) + 1;
    auto grow = [counter, child, depth, max_depth] { visit(counter, child, depth + 1, max_depth); };
    if (k % 2 == 0) {
      shoal::spawn<shoal::anywhere>(grow);  // stealable by any core of the job
    } else {
      shoal::send(static_cast<int>(child % static_cast<node_id>(shoal::cores())),
                  [grow] { shoal::spawn(grow); });
    }
  }
}

int parse_depth(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--depth") {
      char* end = nullptr;
      const long d = std::strtol(argv[i + 1], &end, 10);
      if (*end != '\0' || d < 1 || d > 16) {
        std::fprintf(stderr, "example-task-tree: --depth: expected an integer in [1, 16], got '%s'\n",
                     argv[i + 1]);
        std::exit(2);
      }
      return static_cast<int>(d);
    }
  return 10;
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  const int depth = parse_depth(argc, argv);
  std::int64_t counted = 0;
  shoal::run([&counted, depth] {
    auto counter = shoal::global_alloc<std::int64_t>(1);
    shoal::delegate::write(counter, std::int64_t{0});
    shoal::finish([counter, depth] { visit(counter, 0, 0, depth); });
    counted = shoal::delegate::read(counter);  // finish returned: every add has run
    shoal::global_free(counter);
  });
  int status = 0;
  if (shoal::myrank() == 0) {
    const std::int64_t expected = count_sequential(0, 0, depth);
    status = counted == expected ? 0 : 1;
    std::printf("task_tree: depth %d, %lld nodes counted on %d cores, sequential %lld: %s\n", depth,
                static_cast<long long>(counted), shoal::cores(), static_cast<long long>(expected),
                status == 0 ? "PASSED" : "FAILED");
  }
  shoal::finalize();
  return status;
}
