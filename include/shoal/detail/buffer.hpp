// An aggregation buffer: one header, then a batch of messages of one stream
// for one destination core. Stream 0 carries closures ([8-byte header: handler
// id, size][payload padded to 8] per message); stream k > 0 carries bare values
// of channel k, one header per batch (Active Pebbles' typed messages).
#pragma once

#include <cstdint>

namespace shoal::detail {

struct alignas(64) buffer {
  std::uint32_t stream = 0;       // 0 = closures, else channel id
  std::uint32_t bytes = 0;        // payload bytes used
  std::uint32_t count = 0;        // messages in the batch
  std::int32_t dest = 0;          // global destination core
  std::int32_t owner = 0;         // local core whose pool the buffer returns to
  std::int32_t dirty_index = -1;  // position in the owner's dirty list while staged
  bool overflow = false;          // allocated beyond the pool

  char* data() noexcept { return reinterpret_cast<char*>(this + 1); }
  const char* data() const noexcept { return reinterpret_cast<const char*>(this + 1); }
};

static_assert(sizeof(buffer) == 64);

/// Header of one closure message inside a stream-0 buffer.
struct closure_header {
  std::int32_t handler;  // position-independent handler id (see handler_id.hpp)
  std::uint32_t size;    // payload bytes (before padding)
};

}  // namespace shoal::detail
