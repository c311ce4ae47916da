#include "comm/arrived_buffer.hpp"

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/buffer.hpp"

#include <cstring>

#include <fmt/format.h>

namespace shoal::detail {
namespace {

constexpr std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }

// The runs of a closure batch tile its payload exactly: the dispatcher walks
// them until the payload's end, so a run that overshoots it would read past.
std::string check_runs(const char* payload, std::uint32_t bytes) {
  std::size_t at = 0;
  while (at < bytes) {
    if (bytes - at < sizeof(closure_run_header))
      return fmt::format("a closure run header at payload byte {} is cut off ({} bytes left)", at,
                         bytes - at);
    closure_run_header h{};
    std::memcpy(&h, payload + at, sizeof h);
    at += sizeof h;
    if (h.bytes == 0 || h.bytes % 8 != 0)
      return fmt::format(
          "the closure run at payload byte {} has {} bytes (a positive multiple "
          "of 8 expected)",
          at - sizeof h, h.bytes);
    if (h.bytes > bytes - at)
      return fmt::format("the closure run at payload byte {} has {} bytes, past the batch's {}",
                         at - sizeof h, h.bytes, bytes);
    at += h.bytes;
  }
  return {};
}

std::string check_header(const buffer& h, std::size_t room, const arrived_limits& lim) {
  if (h.bytes > room)
    return fmt::format("payload of {} bytes, but only {} bytes follow its header", h.bytes, room);
  if (h.stream >= max_streams)
    return fmt::format("stream {} out of range [0, {})", h.stream, max_streams);
  const std::int64_t first = std::int64_t{lim.rank} * lim.cores_per_rank;
  if (h.dest < first || h.dest >= first + lim.cores_per_rank)
    return fmt::format("destination core {} is not a core of this rank ({} .. {})", h.dest, first,
                       first + lim.cores_per_rank - 1);
  const std::int64_t from = std::int64_t{lim.source_rank} * lim.cores_per_rank;
  if (h.source < from || h.source >= from + lim.cores_per_rank)
    return fmt::format("source core {} is not a core of the sending rank {} ({} .. {})", h.source,
                       lim.source_rank, from, from + lim.cores_per_rank - 1);
  if (h.count == 0 && h.bytes != 0) return fmt::format("{} payload bytes but no messages", h.bytes);
  if (!is_closure_stream(h.stream) && h.count > h.bytes)
    return fmt::format("{} channel values in {} bytes", h.count, h.bytes);
  return {};
}

}  // namespace

std::string check_arrived(const char* data, std::size_t bytes, const arrived_limits& lim) {
  if (lim.source_rank < 0 || lim.source_rank >= lim.ranks || lim.source_rank == lim.rank)
    return fmt::format("sender rank {} is not another rank of the job (0 .. {}, this is {})",
                       lim.source_rank, lim.ranks - 1, lim.rank);
  if (bytes == 0) return "empty buffer";
  if (bytes > lim.max_bytes)
    return fmt::format("{} bytes, more than the network buffer's {}", bytes, lim.max_bytes);
  if (bytes % 64 != 0)
    return fmt::format("{} bytes, not a multiple of 64 (batches are padded to 64)", bytes);
  for (std::size_t at = 0; at < bytes;) {
    buffer h;
    std::memcpy(static_cast<void*>(&h), data + at, sizeof h);
    std::string why = check_header(h, bytes - at - sizeof h, lim);
    if (why.empty() && is_closure_stream(h.stream)) why = check_runs(data + at + sizeof h, h.bytes);
    if (!why.empty()) return fmt::format("batch at byte {}: {}", at, why);
    at += sizeof h + align64(h.bytes);
  }
  return {};
}

}  // namespace shoal::detail
