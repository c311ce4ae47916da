// An open-addressing hash table from std::string keys to V: the per-core
// table of the keyed containers (map, set, counting_set) for std::string
// keys with the default hash. Contrast flat_table.hpp (bytes-copyable keys
// and values) and std::unordered_map (which this replaces for strings).
//
// One array of slots, linear probing, at most 3/4 full, doubling; erase
// shifts the following run back (no tombstones). A slot holds the key's
// hash (so that neither a probe, a growth nor an erase hashes a key again:
// the owner receives the hash with each record, hashed_key.hpp), the key's
// length, the key itself when it is at most 20 bytes (else a pointer to its
// characters on the heap, owned by the table), and the value. A lookup
// compares hashes first and the characters only on a match. Against
// std::unordered_map<std::string, V>: no node and no std::string per
// element (a 16-character key is past libstdc++'s 15-byte small-string
// buffer: two allocations per element there, none here), one cache line
// per lookup instead of a bucket, a node and a string, and no hash per
// lookup.
//
// Keys are read as std::string_view (slot::key()); callers that owe a user
// a const std::string& build one (keyed.hpp). Any insertion may move every
// slot: pointers to slots are good only until the next insertion (the
// containers' busy-part rule guarantees that no operation inserts while a
// visitor or for_all holds one).
#pragma once

#include "shoal/containers/detail/hashed_key.hpp"
#include "shoal/containers/detail/short_bytes.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <string_view>
#include <utility>

namespace shoal::containers_detail {

template <class V>
class string_table {
 public:
  /// Keys of at most this many bytes are stored in the slot.
  static constexpr std::uint32_t inline_bytes = 20;

  struct slot {
    // Only tag and len are set in an empty slot (setting the key's bytes
    // too made each slot's construction a memset call: half of a growing
    // table's instructions).
    std::uint64_t tag = 0;  // 0: empty; else the key's hash with its top bit set
    std::uint32_t len = 0;
    char bytes[inline_bytes];  // the key, or (longer keys) a char* to it
    V second{};                // named as std::pair's, for the shared code

    std::string_view key() const noexcept { return {chars(), len}; }
    const char* chars() const noexcept {
      if (len <= inline_bytes) return bytes;
      const char* p;
      std::memcpy(&p, bytes, sizeof p);
      return p;
    }
  };

  string_table() = default;
  string_table(const string_table&) = delete;
  string_table& operator=(const string_table&) = delete;
  string_table(string_table&& o) noexcept { take(o); }
  string_table& operator=(string_table&& o) noexcept {
    if (this != &o) {
      free_keys();
      take(o);
    }
    return *this;
  }
  ~string_table() { free_keys(); }


  std::size_t size() const noexcept { return size_; }

  /// The slot holding k, or nullptr.
  slot* find(const hashed_key& k) noexcept {
    if (size_ == 0) return nullptr;
    const std::uint64_t t = tag_of(k.h);
    for (std::size_t i = home(t);; i = (i + 1) & mask_) {
      slot& s = slots_[i];
      if (s.tag == 0) return nullptr;
      if (s.tag == t && same_key(s, k.s)) return &s;
    }
  }

  /// k's slot, inserted with V(args...) when absent (true), else untouched.
  /// May allocate (growth; a key longer than inline_bytes).
  template <class... Args>
  std::pair<slot*, bool> try_emplace(const hashed_key& k, Args&&... args) {
    if (size_ >= grow_at_) [[unlikely]]
      grow();
    const std::uint64_t t = tag_of(k.h);
    std::size_t i = home(t);
    for (; slots_[i].tag != 0; i = (i + 1) & mask_)
      if (slots_[i].tag == t && same_key(slots_[i], k.s)) return {&slots_[i], false};
    slot& s = slots_[i];
    store_key(s, k.s);
    if constexpr (sizeof...(Args) != 0) s.second = V(std::forward<Args>(args)...);
    s.tag = t;
    ++size_;
    return {&s, true};
  }

  template <class U>
  void insert_or_assign(const hashed_key& k, U&& v) {
    auto [s, fresh] = try_emplace(k);
    (void)fresh;
    s->second = std::forward<U>(v);
  }

  /// Removes k if present (1), else 0.
  std::size_t erase(const hashed_key& k) {
    slot* s = find(k);
    if (s == nullptr) return 0;
    if (s->len > inline_bytes) {
      delete[] s->chars();
      --heap_keys_;
    }
    // Backward shift: move later members of the probe run into the hole
    // when their home does not lie cyclically in (hole, their slot].
    std::size_t hole = static_cast<std::size_t>(s - slots_);
    for (std::size_t j = (hole + 1) & mask_; slots_[j].tag != 0; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].tag);
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      move_slot(slots_[hole], slots_[j]);
      hole = j;
    }
    slots_[hole].tag = 0;
    slots_[hole].len = 0;
    slots_[hole].second = V{};
    --size_;
    return 1;
  }

  /// Asks for the home slot of a key with hash h to be brought into cache.
  void prefetch(std::uint64_t h) const noexcept {
    if (capacity_ != 0) __builtin_prefetch(&slots_[home(tag_of(h))]);
  }

  /// f(std::string_view key, V& value) for every element, in slot order.
  template <class F>
  void for_each(F&& f) {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].tag != 0) f(slots_[i].key(), slots_[i].second);
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < capacity_; ++i)
      if (slots_[i].tag != 0) f(slots_[i].key(), static_cast<const V&>(slots_[i].second));
  }

 private:
  static std::uint64_t tag_of(std::uint64_t h) noexcept { return h | (std::uint64_t{1} << 63); }
  /// The hash's low bits (string_hash.hpp mixes every bit of the key into
  /// them; the owner took its top bits, so a core's keys spread over all
  /// its slots).
  std::size_t home(std::uint64_t tag) const noexcept {
    return static_cast<std::size_t>(tag) & mask_;
  }
  static bool same_key(const slot& s, std::string_view k) noexcept {
    return s.len == k.size() && same_bytes(s.chars(), k.data(), k.size());
  }
  void store_key(slot& s, std::string_view k) {
    const auto n = static_cast<std::uint32_t>(k.size());
    if (n <= inline_bytes) {
      copy_bytes(s.bytes, k.data(), n);
    } else {
      char* p = new char[n];
      copy_bytes(p, k.data(), n);
      ++heap_keys_;
      std::memcpy(s.bytes, &p, sizeof p);
    }
    s.len = n;
  }
  /// Moves a full slot's key (bytes or the pointer, whose ownership moves
  /// with it) and value into an empty one.
  static void move_slot(slot& to, slot& from) noexcept {
    to.tag = from.tag;
    to.len = from.len;
    std::memcpy(to.bytes, from.bytes, inline_bytes);
    to.second = std::move(from.second);
  }
  /// Doubles the slots; old keys are distinct, so each goes to the first
  /// free slot of its probe run with no comparison and no hash.
  [[gnu::noinline]] void grow() {
    const std::size_t n = capacity_ == 0 ? 16 : capacity_ * 2;
    slot* const old = slots_;
    const std::size_t old_capacity = capacity_;
    slots_ = allocate(n);
    capacity_ = n;
    mask_ = n - 1;
    grow_at_ = n / 4 * 3;  // at most 3/4 full
    for (std::size_t i = 0; i < old_capacity; ++i) {
      slot& s = old[i];
      if (s.tag == 0) continue;
      std::size_t j = home(s.tag);
      while (slots_[j].tag != 0) j = (j + 1) & mask_;
      move_slot(slots_[j], s);
    }
    deallocate(old);
  }

  /// Empty slots are all zero bytes when V's default value is (V
  /// trivially default-constructible): calloc then gives a large table
  /// pages the kernel zeroed, where value-initialising a std::vector of
  /// slots wrote every byte once more (a growing table's largest cost).
  static constexpr bool zero_slots = std::is_trivially_default_constructible_v<V> &&
                                     std::is_trivially_destructible_v<V> &&
                                     alignof(slot) <= alignof(std::max_align_t);
  static slot* allocate(std::size_t n) {
    if constexpr (zero_slots) {
      void* p = std::calloc(n, sizeof(slot));
      if (p == nullptr) throw std::bad_alloc();
      return static_cast<slot*>(p);
    } else {
      return new slot[n];
    }
  }
  static void deallocate(slot* p) noexcept {
    if constexpr (zero_slots) {
      std::free(p);
    } else {
      delete[] p;
    }
  }
  /// (A table with no key on the heap is freed without a walk over its slots.)
  void free_keys() noexcept {
    for (std::size_t i = 0; i < capacity_ && heap_keys_ != 0; ++i) {
      if (slots_[i].tag != 0 && slots_[i].len > inline_bytes) {
        delete[] slots_[i].chars();
        --heap_keys_;
      }
    }
    deallocate(slots_);
    slots_ = nullptr;
    capacity_ = 0;
    size_ = 0;
  }
  void take(string_table& o) noexcept {
    slots_ = o.slots_;
    capacity_ = o.capacity_;
    mask_ = o.mask_;
    grow_at_ = o.grow_at_;
    size_ = o.size_;
    heap_keys_ = o.heap_keys_;
    o.heap_keys_ = 0;
    o.slots_ = nullptr;
    o.capacity_ = 0;
    o.mask_ = 0;
    o.grow_at_ = 0;
    o.size_ = 0;
  }

  slot* slots_ = nullptr;  // capacity_ slots (allocate())
  std::size_t capacity_ = 0;
  std::size_t mask_ = 0;
  std::size_t grow_at_ = 0;  // the size at which the next insertion grows the table
  std::size_t size_ = 0;
  std::size_t heap_keys_ = 0;  // keys longer than inline_bytes (each owns a heap block)
};

}  // namespace shoal::containers_detail
