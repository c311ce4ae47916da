// The runtime's side of the one-sided layer (include/shoal/one_sided.hpp):
// choosing the backend for the job and making its windows, at init and
// finalize. Every rank calls these in the same order (they are collective
// for shm and rma).
#pragma once

#include "shoal/config.hpp"

#include <cstddef>

namespace shoal::detail {

class transport;

/// Before the heap is made: resolves --one-sided for this job (ending it,
/// status 2, when the value cannot work here, e.g. direct with several
/// processes) and, for shm, makes the node-shared memory the heap must use
/// (`heap_bytes` of it). Returns that memory, or null for a private heap.
char* one_sided_prepare(const config& cfg, transport& t, std::size_t heap_bytes);

/// After the heap is made at `heap_base`: exposes it for rma, learns where
/// every rank's heap is, and says which backend under --verbose (rank 0).
void one_sided_start(const config& cfg, transport& t, char* heap_base, std::size_t heap_bytes);

/// At finalize, before the heap goes: frees the windows (collective).
void one_sided_stop();

}  // namespace shoal::detail
