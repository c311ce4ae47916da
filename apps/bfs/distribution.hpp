// Which core owns which vertex: the block-cyclic layout of shoal's global
// arrays (global_heap.hpp), so that a vertex's CSR row, its visited bit and
// its entry of the global parent array all live on the same core.
//
// Vertex v is in block v / block (block = --block-bytes / 8 elements of the
// int64 parent array); block b lives on core b mod cores, as local block
// b / cores. A core's vertices therefore have dense local indices
// 0 .. local_count(core)-1, and its slice of the parent array is contiguous
// at (parent + global(core, 0)).local().
//
// Inside the search, vertices go by their packed id, core << local_bits |
// local index, so that the owner and the local index of a neighbour cost a
// shift and a mask in the inner loops instead of a division by the core
// count. Packed ids run over [0, packed_range()), at most twice the vertex
// count (plus the core count); the CSR stores neighbours packed.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace shoal_apps::bfs {

class vertex_distribution {
 public:
  vertex_distribution() = default;
  /// `block` must be a power of two; `cores` at least 1.
  vertex_distribution(std::int64_t vertices, int cores, std::int64_t block)
      : vertices_(vertices),
        cores_(static_cast<std::uint64_t>(cores)),
        block_shift_(std::countr_zero(static_cast<std::uint64_t>(block))),
        block_mask_(static_cast<std::uint64_t>(block) - 1) {
    if (std::has_single_bit(cores_)) {
      core_shift_ = std::countr_zero(cores_);
    } else {
      // floor(2^64 / cores) + 1: the high half of b * magic_ is b / cores for
      // every b < 2^64 / cores (the rounding error stays below 1 / cores).
      magic_ = ~std::uint64_t{0} / cores_ + 1;
    }
    local_bits_ =
        std::bit_width(static_cast<std::uint64_t>(std::max<std::int64_t>(local_count(0), 1) - 1));
    local_mask_ = (std::uint64_t{1} << local_bits_) - 1;
  }

  std::int64_t vertices() const noexcept { return vertices_; }
  int cores() const noexcept { return static_cast<int>(cores_); }

  /// Core that owns global vertex v.
  int owner(std::uint64_t v) const noexcept {
    const std::uint64_t b = v >> block_shift_;
    return static_cast<int>(b - divide(b) * cores_);
  }
  /// Index of v among its owner's vertices.
  std::uint64_t local(std::uint64_t v) const noexcept {
    return (divide(v >> block_shift_) << block_shift_) | (v & block_mask_);
  }
  /// Global id of local vertex `l` of core `core`.
  std::uint64_t global(int core, std::uint64_t l) const noexcept {
    return (((l >> block_shift_) * cores_ + static_cast<std::uint64_t>(core)) << block_shift_) |
           (l & block_mask_);
  }
  /// Packed id of global vertex v, and back.
  std::uint64_t pack(std::uint64_t v) const noexcept {
    return static_cast<std::uint64_t>(owner(v)) << local_bits_ | local(v);
  }
  std::uint64_t packed(int core, std::uint64_t l) const noexcept {
    return static_cast<std::uint64_t>(core) << local_bits_ | l;
  }
  std::uint64_t unpack(std::uint64_t p) const noexcept {
    return global(packed_owner(p), packed_local(p));
  }
  int packed_owner(std::uint64_t p) const noexcept { return static_cast<int>(p >> local_bits_); }
  std::uint64_t packed_local(std::uint64_t p) const noexcept { return p & local_mask_; }
  /// One more than the largest packed id.
  std::uint64_t packed_range() const noexcept { return cores_ << local_bits_; }

  /// How many of the vertices 0 .. vertices-1 core `core` owns.
  std::int64_t local_count(int core) const noexcept {
    const std::int64_t block = std::int64_t{1} << block_shift_;
    const std::int64_t blocks = (vertices_ + block - 1) / block;
    const auto nc = static_cast<std::int64_t>(cores_);
    if (core >= blocks) return 0;
    std::int64_t n = (blocks - core + nc - 1) / nc * block;
    if ((blocks - 1) % nc == core) n -= blocks * block - vertices_;  // the last block is partial
    return n;
  }

 private:
  std::uint64_t divide(std::uint64_t b) const noexcept {
    if (core_shift_ >= 0) return b >> core_shift_;
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(b) * magic_) >> 64);
  }

  std::int64_t vertices_ = 0;
  std::uint64_t cores_ = 1;
  int block_shift_ = 0;
  std::uint64_t block_mask_ = 0;
  int core_shift_ = -1;
  std::uint64_t magic_ = 0;
  int local_bits_ = 0;  // core 0 owns the most vertices
  std::uint64_t local_mask_ = 0;
};

}  // namespace shoal_apps::bfs
