// Checking a network buffer that arrived from another process before any of
// its bytes are trusted (comm layer, under network.cpp's receive path).
//
// Contract.
// - Layout (what network::stage() writes): batches back to back, each a
//   64-byte `buffer` header then its payload padded to 64. A closure batch
//   (stream 0 or the control stream) holds runs: an 8-byte
//   closure_run_header then `bytes` of closures of that run's handler. A
//   channel batch holds `count` values of the channel's value size.
// - check_arrived() walks the whole buffer once, reading only inside
//   [data, data + bytes), and says what is wrong with the first bad batch
//   (its byte offset and the field) or returns an empty string. It never
//   writes, allocates only for the message, and accepts only buffers
//   the receive path can split and dispatch without reading or writing out
//   of bounds: every batch inside the buffer, its destination a core of
//   this process, its source a core of the sending rank, its stream known,
//   its runs inside the batch. A channel batch's count against the
//   channel's value size is checked where it is dispatched (the channel may
//   be registered here only after its first batch arrived).
// - What it cannot check: a closure run's handler id is a code offset that
//   only a peer running the same binary can produce (handler_id.hpp); a
//   corrupted one passes here if the run is well formed. MPI delivers bytes
//   intact, so this guards against a foreign or mismatched peer and against
//   our own bugs, not against an attacker.
#pragma once

#include "shoal/detail/buffer.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace shoal::detail {

/// What the receiving process knows about a buffer's legitimate contents.
struct arrived_limits {
  int source_rank = 0;        ///< the rank the transport says sent it
  int ranks = 1;              ///< processes in the job
  int cores_per_rank = 1;     ///< every rank has the same --cores
  int rank = 0;               ///< this process
  std::size_t max_bytes = 0;  ///< the network buffer size (--network-bytes)
};

/// Empty when every batch of data[0, bytes) is well formed for `lim`;
/// otherwise one line naming the batch's byte offset and what is wrong.
/// Any thread; reads only data[0, bytes).
std::string check_arrived(const char* data, std::size_t bytes, const arrived_limits& lim);

/// Calls f(offset, header) for each batch of a buffer check_arrived()
/// accepted, in order; `header` is a copy of the batch's 64-byte header.
template <class F>
void for_each_batch(const char* data, std::size_t bytes, F&& f) {
  for (std::size_t at = 0; at < bytes;) {
    buffer header;
    std::memcpy(static_cast<void*>(&header), data + at, sizeof header);
    f(at, header);
    at += sizeof(buffer) + ((std::size_t{header.bytes} + 63) & ~std::size_t{63});
  }
}

}  // namespace shoal::detail
