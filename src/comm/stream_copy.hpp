// Copying a batch into a network buffer that another process reads next
// (comm layer, under network.cpp's stage()).
//
// Contract.
// - copy_streaming(to, from, n) leaves [to, to + n) equal to [from, from + n)
//   and writes nothing outside it, for any n (0 included) and any
//   alignment of either pointer; the ranges must not overlap.
// - On x86 with SSE2, when `to` is 16-byte aligned and n is at least
//   kStreamMinBytes, the whole 64-byte blocks are written with
//   non-temporal stores and the call ends with a store fence, so the bytes
//   are ordered before any later store (the send that publishes them).
//   Otherwise it is memcpy.
// - Why: with MPI between processes of one node the buffer's lines were
//   last read by the receiving process's CPU (the single copy), and the
//   pool hands the same buffers out again. Plain stores fetch each line
//   back for ownership before overwriting it; streaming stores do not.
//   Measured (bench/results/recheck_amd.md, AMD EPYC, pagerank push at
//   2 x 1, interleaved with the MPI baseline): 0.83x -> 1.03x the
//   baseline when the two processes' CPUs share no cache (the fetches
//   cross between them), neutral (1.00 -> 0.99x) when they share one.
#pragma once

#include <cstddef>

namespace shoal::detail {

/// Smallest copy worth streaming: below a page the fence and the cold
/// destination cost more than the ownership fetches they save.
inline constexpr std::size_t kStreamMinBytes = 4096;

void copy_streaming(void* to, const void* from, std::size_t n);

/// Whether copy_streaming(to, _, n) takes the non-temporal path here.
bool copy_streams(const void* to, std::size_t n);

}  // namespace shoal::detail
