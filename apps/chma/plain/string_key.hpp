// The strings of `shoal chma` as fixed-size keys, and the open-addressing
// set that holds them (a shard of the distributed map, or the whole map of
// the sequential implementation). No shoal here: plain C++.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/plain/mix.hpp"

namespace shoal_apps::chma {

/// Longest string of the pool.
inline constexpr std::size_t max_chars = 20;

/// A string of 1 .. 20 bytes in 24: the bytes, zero padding, the length at
/// byte 20. Trivially copyable, so it travels in messages as it is; equal
/// strings have equal words. A length of 0 marks an empty slot.
struct str_key {
  std::uint64_t words[3] = {0, 0, 0};

  std::size_t size() const noexcept { return bytes()[max_chars]; }
  const unsigned char* bytes() const noexcept {
    return reinterpret_cast<const unsigned char*>(words);
  }
  unsigned char* bytes() noexcept { return reinterpret_cast<unsigned char*>(words); }
  std::string_view view() const noexcept { return {reinterpret_cast<const char*>(words), size()}; }
  bool operator==(const str_key&) const = default;
};

/// The key of `s` (1 .. 20 bytes).
inline str_key make_key(std::string_view s) noexcept {
  str_key k;
  std::memcpy(k.bytes(), s.data(), s.size());
  k.bytes()[max_chars] = static_cast<unsigned char>(s.size());
  return k;
}

/// The string reversed (the rule applied to a string found in the map).
inline str_key reversed(const str_key& k) noexcept {
  str_key r;
  const std::size_t n = k.size();
  for (std::size_t i = 0; i < n; ++i) r.bytes()[i] = k.bytes()[n - 1 - i];
  r.bytes()[max_chars] = static_cast<unsigned char>(n);
  return r;
}

/// A 64-bit hash of the key, all bits mixed (the low bits pick a slot, the
/// high bits the owning core).
inline std::uint64_t key_hash(const str_key& k) noexcept {
  return mix64(k.words[0] ^ mix64(k.words[1] ^ mix64(k.words[2] + 0x9e3779b97f4a7c15ULL)));
}

/// Which of `cores` owns the key (high half of its hash).
inline int key_owner(std::uint64_t hash, int cores) noexcept {
  return static_cast<int>(((hash >> 32) * static_cast<std::uint64_t>(cores)) >> 32);
}

/// An open-addressing (linear probing) set of keys that doubles at half
/// load. Not thread-safe: one core owns each set.
class key_set {
 public:
  key_set() : key_set(16) {}
  /// A set sized for `expected` keys (it grows beyond).
  explicit key_set(std::size_t expected) { rehash(capacity_for(expected)); }

  /// Whether `k` (hash h) is in the set.
  bool contains(const str_key& k, std::uint64_t h) const noexcept {
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == k) return true;
      if (slots_[i].size() == 0) return false;
    }
  }

  /// Adds `k` (hash h); returns false when it was there already.
  bool insert(const str_key& k, std::uint64_t h) {
    std::size_t i = h & mask_;
    for (; slots_[i].size() != 0; i = (i + 1) & mask_)
      if (slots_[i] == k) return false;
    slots_[i] = k;
    if (++size_ * 2 > slots_.size()) rehash(slots_.size() * 2);
    return true;
  }

  std::size_t size() const noexcept { return size_; }

  /// Calls f(key) for every key, in slot order.
  template <class F>
  void for_each(const F& f) const {
    for (const str_key& k : slots_)
      if (k.size() != 0) f(k);
  }

 private:
  static std::size_t capacity_for(std::size_t n) {
    std::size_t c = 16;
    while (c < 2 * n + 2) c *= 2;
    return c;
  }

  void rehash(std::size_t capacity) {
    std::vector<str_key> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    for (const str_key& k : old) {
      if (k.size() == 0) continue;
      std::size_t i = key_hash(k) & mask_;
      while (slots_[i].size() != 0) i = (i + 1) & mask_;
      slots_[i] = k;
    }
  }

  std::vector<str_key> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace shoal_apps::chma
