// global_ptr<T>: an address anywhere in the job.
//
// Two forms in one 64-bit word:
// - 2D: (core, local virtual address on that core's process). Made with
//   make_global(ptr) for data a core already has.
// - linear: a byte address in a block-cyclic space over all cores. Block b
//   (of --block-bytes, 64 by default) lives on core b mod cores(), at local
//   block b / cores() of that core's heap segment. global_alloc() returns
//   linear pointers; consecutive elements spread over cores block by block.
// Arithmetic moves by elements (on the same core for 2D, across blocks and
// cores for linear). local() gives a plain pointer, valid only on core().
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/process_info.hpp"

#include <compare>
#include <cstdint>
#include <ostream>

#include <fmt/core.h>

namespace shoal {

template <class T>
class global_ptr {
 public:
  constexpr global_ptr() = default;
  constexpr global_ptr(std::nullptr_t) {}

  /// 2D pointer to `p` on global core `core`.
  static global_ptr make_2d(int core, T* p) noexcept {
    return global_ptr((static_cast<std::uint64_t>(core) << addr_bits) |
                      (reinterpret_cast<std::uint64_t>(p) & addr_mask));
  }
  /// Linear pointer at byte `address` of the block-cyclic space.
  static constexpr global_ptr make_linear(std::uint64_t address) noexcept {
    return global_ptr(linear_bit | address);
  }
  static constexpr global_ptr from_bits(std::uint64_t bits) noexcept { return global_ptr(bits); }

  bool is_linear() const noexcept { return (bits_ & linear_bit) != 0; }
  std::uint64_t bits() const noexcept { return bits_; }
  /// Byte address in the linear space (linear pointers only).
  std::uint64_t linear_address() const noexcept { return bits_ & ~linear_bit; }

  /// Global core that owns the pointee.
  int core() const noexcept {
    if (is_linear()) {
      const auto block = linear_address() / static_cast<std::uint64_t>(detail::g_info.block_bytes);
      return static_cast<int>(block % static_cast<std::uint64_t>(detail::g_info.total_cores));
    }
    return static_cast<int>(bits_ >> addr_bits);
  }

  /// Plain pointer to the pointee. Any thread of the process that owns
  /// core() (any of its cores may use it: delegates run at home, and data of
  /// a neighbouring core is plain memory); on another process it ends the job
  /// naming the element's core and this rank (one compare). Null stays null.
  T* local() const noexcept {
    if (!is_linear()) {
      if (__builtin_expect(!owned_here(core()), 0)) fail_not_here();
      return reinterpret_cast<T*>(bits_ & addr_mask);
    }
    const auto bb = static_cast<std::uint64_t>(detail::g_info.block_bytes);
    const auto n = static_cast<std::uint64_t>(detail::g_info.total_cores);
    const std::uint64_t a = linear_address();
    const std::uint64_t block = a / bb;
    const auto owner = static_cast<int>(block % n);
    if (__builtin_expect(!owned_here(owner), 0)) fail_not_here();
    const std::uint64_t offset = (block / n) * bb + a % bb;
    return reinterpret_cast<T*>(detail::g_info.heap_base +
                                static_cast<std::size_t>(owner - detail::g_info.rank_base) *
                                    detail::g_info.segment_bytes +
                                offset);
  }

  global_ptr& operator+=(std::int64_t n) noexcept {
    bits_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(bits_) +
                                       n * static_cast<std::int64_t>(sizeof(T)));
    return *this;
  }
  global_ptr& operator-=(std::int64_t n) noexcept { return *this += -n; }
  global_ptr& operator++() noexcept { return *this += 1; }
  global_ptr& operator--() noexcept { return *this -= 1; }
  friend global_ptr operator+(global_ptr p, std::int64_t n) noexcept { return p += n; }
  friend global_ptr operator+(std::int64_t n, global_ptr p) noexcept { return p += n; }
  friend global_ptr operator-(global_ptr p, std::int64_t n) noexcept { return p -= n; }
  /// Distance in elements between two pointers of the same form (and core, for 2D).
  friend std::int64_t operator-(global_ptr a, global_ptr b) noexcept {
    return (static_cast<std::int64_t>(a.bits_) - static_cast<std::int64_t>(b.bits_)) /
           static_cast<std::int64_t>(sizeof(T));
  }
  global_ptr operator[](std::int64_t) const = delete;  // no implicit remote access

  friend constexpr bool operator==(global_ptr, global_ptr) noexcept = default;
  friend constexpr auto operator<=>(global_ptr a, global_ptr b) noexcept {
    return a.bits_ <=> b.bits_;
  }
  explicit operator bool() const noexcept { return bits_ != 0; }

  /// Same address, other element type.
  template <class U>
  global_ptr<U> reinterpret() const noexcept {
    return global_ptr<U>::from_bits(bits_);
  }

  friend std::ostream& operator<<(std::ostream& os, global_ptr p) { return os << p.to_string(); }
  std::string to_string() const {
    if (bits_ == 0) return "global_ptr(null)";
    if (is_linear())
      return fmt::format("global_ptr(linear {:#x} on core {})", linear_address(), core());
    return fmt::format("global_ptr(core {}, {:#x})", core(), bits_ & addr_mask);
  }

 private:
  static bool owned_here(int core) noexcept {
    return static_cast<unsigned>(core - detail::g_info.rank_base) <
           static_cast<unsigned>(detail::g_info.local_cores);
  }
  [[gnu::cold, gnu::noinline]] void fail_not_here() const noexcept {
    // A null pointer gives nullptr; a 2D one after finalize() its address.
    if (bits_ == 0 || (!is_linear() && detail::g_info.local_cores == 0)) return;
    detail::fatal_user(fmt::format(
        "global_ptr::local() on {}, an element of core {} on rank {}, called on rank {}: "
        "local() is for data of this process; use a delegate or forall to reach it",
        to_string(), core(), core() / detail::g_info.local_cores, detail::g_info.rank));
  }

  static constexpr int addr_bits = 48;
  static constexpr std::uint64_t addr_mask = (std::uint64_t{1} << addr_bits) - 1;
  static constexpr std::uint64_t linear_bit = std::uint64_t{1} << 63;
  constexpr explicit global_ptr(std::uint64_t bits) : bits_(bits) {}
  std::uint64_t bits_ = 0;
};

/// 2D global pointer to `p`, which lives on the calling core.
template <class T>
global_ptr<T> make_global(T* p) noexcept {
  return global_ptr<T>::make_2d(detail::tls_core, p);
}

}  // namespace shoal

template <class T>
struct fmt::formatter<shoal::global_ptr<T>> : fmt::formatter<std::string> {
  auto format(shoal::global_ptr<T> p, format_context& ctx) const {
    return fmt::formatter<std::string>::format(p.to_string(), ctx);
  }
};
