// An aggregation buffer: one header, then a batch of messages of one stream
// for one destination core. Stream 0 carries closures in runs: an 8-byte run
// header (handler id, run bytes), then closures of that handler's type, each
// padded to 8; consecutive messages of one closure type share a run, so a
// stream of like messages costs no more bytes than a typed channel. Stream
// k > 0 carries bare values of channel k, one header per batch (Active
// Pebbles' typed messages).
#pragma once

#include <cstdint>

namespace shoal::detail {

struct alignas(64) buffer {
  std::uint32_t stream = 0;       // 0 = closures, else channel id
  std::uint32_t bytes = 0;        // payload bytes used
  std::uint32_t count = 0;        // messages in the batch
  std::int32_t dest = 0;          // global destination core
  std::int32_t owner = 0;         // local core whose pool the buffer returns to
  std::int32_t source = 0;        // global core that staged the batch (flow control acks)
  std::int32_t dirty_index = -1;  // position in the owner's dirty list while staged
  std::int32_t run_handler = 0;   // stream 0 while staged: handler of the open run (0: none)
  std::uint32_t run_at = 0;       // stream 0 while staged: offset of the open run's header
  void* block = nullptr;          // arrived from another process: the network block holding it
  std::uint64_t fence = 0;        // channel batch: the fence it ends (0: none / a round marker)
  bool overflow = false;          // allocated beyond the pool

  char* data() noexcept { return reinterpret_cast<char*>(this + 1); }
  const char* data() const noexcept { return reinterpret_cast<const char*>(this + 1); }
};

static_assert(sizeof(buffer) == 64);

/// Header of a run of closure messages of one type inside a stream-0 buffer.
struct closure_run_header {
  std::int32_t handler;  // position-independent id of the run's invoker (handler_id.hpp)
  std::uint32_t bytes;   // the run's closures, padded; written when the run is closed
};

}  // namespace shoal::detail
