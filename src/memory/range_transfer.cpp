// Bulk transfer of global ranges (include/shoal/range_transfer.hpp), in bytes:
// T divides the block, so a range of elements is a range of bytes with the
// same owners.
#include "shoal/range_transfer.hpp"

#include "shoal/message.hpp"
#include "shoal/runtime.hpp"
#include "shoal/task.hpp"

#include <algorithm>
#include <cstring>

#include "comm/send_in_place.hpp"

namespace shoal::detail {
namespace {

using gbytes = global_ptr<std::byte>;

/// How range positions (bytes from the range's start) map onto one core's
/// run: `per_block` bytes of a block, then the next block of the same core
/// starts `stride` bytes further on.
struct range_layout {
  std::int64_t per_block;
  std::int64_t stride;
};

/// One core's part of a range: `count` bytes contiguous in its memory, the
/// first at range position `first`, which is `skip` bytes into its block.
struct range_run {
  int core;
  std::int64_t first;
  std::int64_t count;
  std::int64_t skip;
};

range_layout layout_of(gbytes p, std::int64_t bytes) {
  if (!p.is_linear()) return {std::max<std::int64_t>(bytes, 1), std::max<std::int64_t>(bytes, 1)};
  return {g_info.block_bytes, g_info.block_bytes * g_info.total_cores};
}

/// Calls f(run) for each core the range [p, p + bytes) touches.
template <class F>
void for_each_run(gbytes p, std::int64_t bytes, const F& f) {
  if (bytes <= 0) return;
  if (!p.is_linear()) {
    f(range_run{p.core(), 0, bytes, 0});
    return;
  }
  const std::int64_t bb = g_info.block_bytes;
  const std::int64_t n = g_info.total_cores;
  const auto a0 = static_cast<std::int64_t>(p.linear_address());
  const std::int64_t skip0 = a0 % bb;
  const std::int64_t blocks = (bytes + skip0 + bb - 1) / bb;
  for (std::int64_t j = 0; j < std::min(blocks, n); ++j) {
    const std::int64_t mine = (blocks - j + n - 1) / n;  // blocks j, j + n, ... in range
    const std::int64_t head = j == 0 ? skip0 : 0;
    const std::int64_t last = j + (mine - 1) * n;
    const std::int64_t tail = last == blocks - 1 ? blocks * bb - skip0 - bytes : 0;
    f(range_run{static_cast<int>((a0 / bb + j) % n), j == 0 ? 0 : j * bb - skip0,
                mine * bb - head - tail, head});
  }
}

/// Calls f(k, pos, len) for the pieces of run bytes [k0, k0 + len0): run
/// bytes [k, k + len) sit at range positions [pos, pos + len).
template <class F>
void for_each_piece(const range_layout& l, std::int64_t first, std::int64_t skip, std::int64_t k0,
                    std::int64_t len0, const F& f) {
  for (std::int64_t k = k0; k < k0 + len0;) {
    const std::int64_t q = skip + k;
    const std::int64_t len = std::min(k0 + len0 - k, l.per_block - q % l.per_block);
    f(k, first - skip + q / l.per_block * l.stride + q % l.per_block, len);
    k += len;
  }
}

/// The caller's side of one transfer; lives on the calling core until done.
struct transfer {
  std::byte* local;  ///< the caller's span (read: destination; write: source)
  range_layout layout;
  std::int64_t left;  ///< bytes not yet done, plus one while runs are being started
  promise<void> done;

  void retire(std::int64_t bytes) {
    left -= bytes;
    if (left > 0) return;
    done.set_value();
    delete this;
  }
};

constexpr std::size_t payload_bytes = 216;

/// A piece of a run on its way back to the reader.
struct read_reply {
  transfer* op;
  std::int64_t first;
  std::int64_t skip;
  std::int64_t offset;  ///< in the run
  std::int32_t bytes;
  std::int32_t pad;
  std::byte payload[payload_bytes];

  void operator()() const {
    const read_reply& m = *this;
    for_each_piece(op->layout, first, skip, offset, bytes,
                   [&m](std::int64_t k, std::int64_t pos, std::int64_t len) {
                     std::memcpy(m.op->local + pos, m.payload + (k - m.offset),
                                 static_cast<std::size_t>(len));
                   });
    op->retire(bytes);
  }
};
static_assert(sizeof(read_reply) == max_message_bytes);

/// A piece of a run on its way to its home.
struct write_piece {
  std::uint64_t run_start;  ///< a gbytes' bits (kept trivial to stage in place)
  transfer* op;
  std::int64_t offset;  ///< in the run
  std::int64_t total;   ///< the run's bytes: the piece ending there acknowledges
  std::int32_t bytes;
  std::int32_t origin;
  std::byte payload[payload_bytes];

  void operator()() const {
    std::memcpy(gbytes::from_bits(run_start).local() + offset, payload,
                static_cast<std::size_t>(bytes));
    if (offset + bytes < total) return;
    transfer* t = op;
    const std::int64_t n = total;
    send(origin, [t, n] { t->retire(n); });
  }
};
static_assert(sizeof(write_piece) == max_message_bytes);

/// On the owner: streams run bytes [0, count) starting at `start` to the
/// reader. Task (sends may wait for buffers).
void stream_run_back(gbytes start, std::int64_t count, range_run r, transfer* op, int origin) {
  const std::byte* from = start.local();
  for (std::int64_t k = 0; k < count; k += static_cast<std::int64_t>(payload_bytes)) {
    const std::int64_t n = std::min<std::int64_t>(payload_bytes, count - k);
    read_reply* m = stage_in_place<read_reply>(origin);
    m->op = op;
    m->first = r.first;
    m->skip = r.skip;
    m->offset = k;
    m->bytes = static_cast<std::int32_t>(n);
    m->pad = 0;
    std::memcpy(m->payload, from + k, static_cast<std::size_t>(n));
  }
  flush();
}

void request_run(gbytes p, const range_run& r, transfer* op) {
  const gbytes start = p + r.first;
  const std::int64_t first = r.first;
  const std::int64_t count = r.count;
  const std::int64_t skip = r.skip;
  const int origin = mycore();
  send(r.core, [start, first, count, skip, op, origin] {
    spawn([start, first, count, skip, op, origin] {
      stream_run_back(start, count, range_run{0, first, count, skip}, op, origin);
    });
  });
}

/// Sends run `r` of the caller's bytes to its home. Task.
void send_run(gbytes p, const range_run& r, transfer* op) {
  const gbytes start = p + r.first;
  const int origin = mycore();
  for (std::int64_t k = 0; k < r.count; k += static_cast<std::int64_t>(payload_bytes)) {
    const std::int64_t n = std::min<std::int64_t>(payload_bytes, r.count - k);
    write_piece* m = stage_in_place<write_piece>(r.core);
    m->run_start = start.bits();
    m->op = op;
    m->offset = k;
    m->total = r.count;
    m->bytes = static_cast<std::int32_t>(n);
    m->origin = origin;
    std::byte* to = m->payload;
    for_each_piece(op->layout, r.first, r.skip, k, n,
                   [to, k, op](std::int64_t at, std::int64_t pos, std::int64_t len) {
                     std::memcpy(to + (at - k), op->local + pos, static_cast<std::size_t>(len));
                   });
  }
}

/// Copies run `r` between the caller's own memory and its span.
void copy_local_run(gbytes p, const range_run& r, transfer* op, bool read) {
  std::byte* home = (p + r.first).local();
  for_each_piece(op->layout, r.first, r.skip, 0, r.count,
                 [&](std::int64_t k, std::int64_t pos, std::int64_t len) {
                   if (read) {
                     std::memcpy(op->local + pos, home + k, static_cast<std::size_t>(len));
                   } else {
                     std::memcpy(home + k, op->local + pos, static_cast<std::size_t>(len));
                   }
                 });
}

std::pair<transfer*, future<void>> start(gbytes p, std::byte* local, std::int64_t bytes) {
  SHOAL_CHECK(tls_core >= 0 && in_worker(),
              "shoal::read_range/write_range called outside a task on a shoal core");
  SHOAL_CHECK(bytes == 0 || p, "shoal::read_range/write_range on a null global_ptr");
  auto pair = make_promise_pair<void>();
  auto* op = new transfer{local, layout_of(p, bytes), bytes + 1, pair.first};
  return {op, std::move(pair.second)};
}

}  // namespace

future<void> async_range_read(std::uint64_t global_bits, std::byte* local, std::int64_t bytes) {
  const gbytes p = gbytes::from_bits(global_bits);
  // Not a structured binding: lambdas capture `op`, which clang before 16
  // refuses for bindings (the fuzz tree builds with clang 14).
  auto [started_op, fut] = start(p, local, bytes);
  transfer* const op = started_op;
  for_each_run(p, bytes, [&](const range_run& r) {
    if (r.core == mycore()) {
      copy_local_run(p, r, op, true);
      op->retire(r.count);
    } else {
      request_run(p, r, op);
    }
  });
  flush();
  op->retire(1);
  return std::move(fut);
}

future<void> async_range_write(std::uint64_t global_bits, const std::byte* local,
                               std::int64_t bytes) {
  const gbytes p = gbytes::from_bits(global_bits);
  // The span is only read: the transfer's pointer is shared with reads.
  auto [started_op, fut] = start(p, const_cast<std::byte*>(local), bytes);
  transfer* const op = started_op;  // captured below: see async_range_read
  for_each_run(p, bytes, [&](const range_run& r) {
    if (r.core == mycore()) {
      copy_local_run(p, r, op, false);
      op->retire(r.count);
    }
  });
  spawn([p, bytes, op] {
    for_each_run(p, bytes, [&](const range_run& r) {
      if (r.core != mycore()) send_run(p, r, op);
    });
    flush();
    op->retire(1);
  });
  return std::move(fut);
}

}  // namespace shoal::detail
