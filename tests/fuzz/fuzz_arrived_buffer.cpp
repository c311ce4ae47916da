// Fuzz target: the receive path's check of a network buffer that arrived
// from another process (src/comm/arrived_buffer.hpp), on any bytes. The
// first four bytes pick the job's shape (ranks, cores per rank, this rank,
// the sender); the rest is the buffer, copied to a 64-byte aligned block of
// exactly its size as the transport hands it over, so that AddressSanitizer
// sees any read past it. A buffer the check accepts is then walked the way
// network.cpp and the dispatcher walk it: batch headers, then closure runs.
#include "shoal/detail/aggregator.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "comm/arrived_buffer.hpp"

namespace {

using shoal::detail::arrived_limits;
using shoal::detail::buffer;
using shoal::detail::closure_run_header;

// What dispatch_closures() reads of a closure batch; returns the bytes seen.
std::size_t walk_runs(const char* p, std::uint32_t bytes) {
  std::size_t seen = 0;
  for (const char* const end = p + bytes; p < end;) {
    closure_run_header h{};
    std::memcpy(&h, p, sizeof h);
    seen += h.bytes;
    p += sizeof h + h.bytes;
  }
  return seen;
}

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_arrived_buffer: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  arrived_limits lim;
  lim.ranks = 1 + data[0] % 8;
  lim.cores_per_rank = 1 + data[1] % 8;
  lim.rank = data[2] % lim.ranks;
  lim.source_rank = data[3] % 9;  // may be out of range, or this rank: refused
  lim.max_bytes = 4096;
  data += 4;
  size -= 4;
  // The buffer ends where its allocation ends, so ASan reports any read past
  // it; a whole number of batches (the only size accepted) starts aligned.
  const std::size_t rounded = (size + 63) / 64 * 64;
  char* block = static_cast<char*>(std::aligned_alloc(64, rounded == 0 ? 64 : rounded));
  char* const buf = block + (rounded - size);
  if (size != 0) std::memcpy(buf, data, size);
  const std::string why = shoal::detail::check_arrived(buf, size, lim);
  if (why.empty()) {
    if (size == 0 || size % 64 != 0) finding("accepted a buffer that is not whole batches");
    shoal::detail::for_each_batch(buf, size, [&](std::size_t at, const buffer& h) {
      if (at + sizeof h + h.bytes > size) finding("accepted a batch past the buffer's end");
      if (h.dest / lim.cores_per_rank != lim.rank) finding("accepted a batch for another rank");
      if (shoal::detail::is_closure_stream(h.stream)) (void)walk_runs(buf + at + sizeof h, h.bytes);
    });
  }
  std::free(block);
  return 0;
}
