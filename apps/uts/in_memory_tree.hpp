// The `in-memory` UTS search (Grappa's UTS-Mem): the tree is first built in
// global memory, then the timed phase traverses it from the root, reading
// every vertex through the global address space with no prior knowledge of
// its shape, so that the search measures irregular remote reads rather than
// SHA-1.
//
// Construction (timed separately, reported as construction_s): an implicit
// search counts the nodes (N); a global array of vertex records sized for N
// is allocated; a second work-stealing search generates the tree again and
// writes each node's record at its id: the id of its first child and its
// number of children. Children get consecutive ids, taken from per-core
// chunks of a global counter (one fetch_add per chunk), so the records of a
// node's children are contiguous and spread block-cyclically over the cores.
//
// Traversal: a task reads the records of a range of sibling ids with
// asynchronous delegates (futures, all in flight at once; one delegate per
// run of consecutive records homed on the same core, so a 64-byte block of 4
// records costs one round trip), counts them, and spawns one task per child
// range (spawn<anywhere>, so idle cores of any process steal them).
// Thousands of such tasks wait on their reads concurrently on each core,
// which hides the latency.
#pragma once

#include "uts/plain/tree_params.hpp"
#include "uts/search_context.hpp"

namespace shoal_apps::uts {

/// Builds the tree of `p` in global memory (construction_s), then times a
/// traversal of it. Call on every rank; the result is meaningful on rank 0.
/// Memory: about 16 bytes per node (plus 3%) of global heap over the job.
search_result run_in_memory(const tree_params& p);

}  // namespace shoal_apps::uts
