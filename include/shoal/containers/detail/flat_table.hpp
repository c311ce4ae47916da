// An open-addressing hash table for trivially copyable keys and values: the
// per-core table of the keyed containers when both are (std::unordered_map
// otherwise). One array of (key, value) slots and one of occupancy bytes,
// linear probing, at most 3/4 full, doubling; erase shifts the following
// run back (no tombstones). Against std::unordered_map: no allocation per
// element and one cache line per lookup instead of a bucket and a node
// (counting 2^20 distinct 8-byte keys: 8.7 M/s against 3-4 M/s,
// sequentially on the development machine).
//
// The subset of std::unordered_map's interface the containers use. Any
// insertion may move every element: references and iterators are good
// only until the next insertion (the containers' busy-part rule guarantees
// that no operation inserts while a visitor or for_all holds one).
#pragma once

#include "shoal/containers/detail/registry.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include <sys/mman.h>

namespace shoal::containers_detail {

template <class K, class V, class Hash, class Eq>
class flat_table {
  static_assert(std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<V> &&
                std::is_default_constructible_v<K> && std::is_default_constructible_v<V>);

 public:
  using value_type = std::pair<K, V>;

  template <bool Const>
  class basic_iterator {
    using table = std::conditional_t<Const, const flat_table, flat_table>;

   public:
    basic_iterator() = default;
    basic_iterator(table* t, std::size_t i) : t_(t), i_(i) { skip(); }
    /// At slot i, known to be full (no skip: a lookup's answer).
    basic_iterator(table* t, std::size_t i, bool /*full*/) : t_(t), i_(i) {}
    using reference = std::conditional_t<Const, const value_type&, value_type&>;
    reference operator*() const { return t_->slots_[i_]; }
    auto* operator->() const { return &static_cast<reference>(t_->slots_[i_]); }
    basic_iterator& operator++() {
      ++i_;
      skip();
      return *this;
    }
    bool operator==(const basic_iterator& o) const { return i_ == o.i_; }

   private:
    friend class flat_table;
    void skip() {
      while (i_ < t_->capacity_ && t_->used_[i_] == 0) ++i_;
    }
    table* t_ = nullptr;
    std::size_t i_ = 0;
  };
  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, capacity_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, capacity_}; }
  std::size_t size() const noexcept { return size_; }

  iterator find(const K& k) {
    if (size_ == 0) return end();
    for (std::size_t i = home(k);; i = (i + 1) & mask_) {
      if (used_[i] == 0) return end();
      if (Eq{}(slots_[i].first, k)) return iterator(this, i, true);
    }
  }

  template <class... Args>
  std::pair<iterator, bool> try_emplace(const K& k, Args&&... v) {
    if (size_ >= grow_at_) [[unlikely]]
      grow();
    unsigned char* const used = used_.get();
    value_type* const slots = slots_.get();
    std::size_t i = home(k);
    for (; used[i] != 0; i = (i + 1) & mask_)
      if (Eq{}(slots[i].first, k)) return {iterator(this, i, true), false};
    used[i] = 1;
    slots[i] = value_type(k, V(std::forward<Args>(v)...));
    ++size_;
    return {iterator(this, i, true), true};
  }
  std::pair<iterator, bool> insert_or_assign(const K& k, const V& v) {
    auto r = try_emplace(k, v);
    if (!r.second) r.first->second = v;
    return r;
  }
  V& operator[](const K& k) { return try_emplace(k).first->second; }
  /// f(value) for each of `count` keys key(0) .. key(count - 1), in order,
  /// each key's value made (V{}) first when missing: a batch's loop
  /// (counting_set's bare keys). Grows first, once, for the whole batch
  /// (the batch then probes with the table's arrays, mask and shift in
  /// registers, and computes each key's home slot once: prefetched 16 keys
  /// ahead and probed from). Strong guarantee only for the growth: a
  /// throwing f leaves the keys before it applied.
  /// (One table fed the 2 M keys a core owns in counting_set_u64 at 2 x 1,
  /// about 2^19 distinct, in batches of 1300; thread CPU time, best of 10,
  /// development machine: 16 ahead 14.2 ns per key, 8 ahead 15.0, 12 or
  /// 24, whose ring index divides, 18.5. bench-containers --only
  /// table_only runs such a loop per core.)
  template <class KeyAt, class F>
  void update_each(const KeyAt& key, std::uint32_t count, const F& f) {
    upsert_each(key, count, [&f](std::uint32_t, V& v, bool) { f(v); });
  }
  /// update_each's loop with f(i, value, fresh): fresh when key(i) was
  /// missing (its value just made, V{}); the keyed containers' runs of
  /// insert and reduce records (keyed.hpp) give each key its own operand.
  template <class KeyAt, class F>
  void upsert_each(const KeyAt& key, std::uint32_t count, const F& f) {
    if (count == 0) return;
    while (size_ + count > grow_at_) grow();
    unsigned char* const used = used_.get();
    value_type* const slots = slots_.get();
    const std::size_t mask = mask_;
    const unsigned shift = shift_;
    auto home_of = [shift](const K& k) { return home_at(k, shift); };
    auto apply = [&](std::uint32_t i, const K& k, std::size_t j) {
      for (;; j = (j + 1) & mask) {
        if (used[j] == 0) {
          used[j] = 1;
          slots[j] = value_type(k, V());
          ++size_;
          f(i, slots[j].second, true);
          return;
        }
        if (Eq{}(slots[j].first, k)) break;
      }
      f(i, slots[j].second, false);
    };
    constexpr std::uint32_t ahead = 16;
    std::size_t homes[ahead];
    const std::uint32_t first = count < ahead ? count : ahead;
    for (std::uint32_t i = 0; i < first; ++i) {
      homes[i] = home_of(key(i));
      fetch(slots, used, homes[i]);
    }
    // The keys with a key `ahead` further on, then the last ones (no test
    // per key).
    std::uint32_t i = 0;
    for (; i + ahead < count; ++i) {
      const std::size_t j = homes[i % ahead];
      const std::size_t next = home_of(key(i + ahead));
      homes[i % ahead] = next;
      fetch(slots, used, next);
      apply(i, key(i), j);
    }
    for (; i < count; ++i) apply(i, key(i), homes[i % ahead]);
  }
  /// Asks for k's home slot to be brought into cache (a batch's loop calls
  /// it a few keys ahead: a table larger than the cache otherwise waits on
  /// memory once per key).
  void prefetch(const K& k) const noexcept {
    if (capacity_ != 0) fetch(slots_.get(), used_.get(), home(k));
  }

  std::size_t erase(const K& k) {
    iterator it = find(k);
    if (it == end()) return 0;
    // Backward shift: move later members of the probe run into the hole
    // when their home does not lie cyclically in (hole, their slot].
    std::size_t hole = it.i_;
    for (std::size_t j = (hole + 1) & mask_; used_[j] != 0; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].first);
      const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
      if (stays) continue;
      slots_[hole] = slots_[j];
      hole = j;
    }
    used_[hole] = 0;
    --size_;
    return 1;
  }

  void clear() { *this = flat_table{}; }

 private:
  /// The home slot: Fibonacci hashing (the top bits of the hash, folded,
  /// times 2^64 / golden ratio), not the owner's mix: the owner takes the
  /// top bits of mix_hash(h), the same fold times another constant, so a
  /// core's keys still spread over all its slots, and this costs 4
  /// instructions where a full mix cost 12 (per table operation:
  /// counting_set's insert).
  static std::size_t home_at(const K& k, unsigned shift) noexcept {
    const auto h = static_cast<std::uint64_t>(Hash{}(k));
    return static_cast<std::size_t>(((h ^ (h >> 32)) * 0x9e3779b97f4a7c15ULL) >> shift);
  }
  std::size_t home(const K& k) const noexcept { return home_at(k, shift_); }
  static void fetch(const value_type* slots, const unsigned char* used, std::size_t i) noexcept {
    __builtin_prefetch(&slots[i]);
    __builtin_prefetch(&used[i]);
  }
  /// Doubles the slots. The old keys are distinct, so each goes to the
  /// first free slot of its probe run with no comparison and no growth
  /// check (through try_emplace this loop cost ~46 instructions per moved
  /// element; it runs about twice per element a table ever holds).
  /// The slots' bytes are written before they are read, so they are not
  /// zeroed (allocate); value-initialising std::vectors of both arrays
  /// wrote every byte once more per growth.
  [[gnu::noinline]] void grow() {
    const std::size_t n = capacity_ == 0 ? 16 : capacity_ * 2;
    array<value_type> old_slots(allocate<value_type>(n, false));
    array<unsigned char> old_used(allocate<unsigned char>(n, true));
    old_slots.swap(slots_);
    old_used.swap(used_);
    const std::size_t old_capacity = capacity_;
    capacity_ = n;
    mask_ = n - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
    grow_at_ = n / 4 * 3;  // at most 3/4 full
    unsigned char* const used = used_.get();
    value_type* const slots = slots_.get();
    for (std::size_t i = 0; i < old_capacity; ++i) {
      if (old_used[i] == 0) continue;
      std::size_t j = home(old_slots[i].first);
      while (used[j] != 0) j = (j + 1) & mask_;
      used[j] = 1;
      slots[j] = old_slots[i];
    }
  }

  struct free_delete {
    void operator()(void* p) const noexcept { std::free(p); }
  };
  template <class T>
  using array = std::unique_ptr<T[], free_delete>;
  /// n elements of a trivially copyable T (objects of such types begin
  /// their lifetime in malloc'd storage), zeroed when asked. An array of
  /// 2 MiB or more is 2 MiB-aligned and asks for transparent huge pages
  /// (madvise: the kernels' usual "madvise" mode), so that a table larger
  /// than the TLB's reach does not miss the TLB on most probes and a growth
  /// faults its pages in 512 times fewer steps (the loop of update_each's
  /// note: 19.5 -> 15.3 ns per key, growth 7.4 -> 3.5 of them). Where huge
  /// pages are off, madvise fails and nothing changes.
  template <class T>
  static T* allocate(std::size_t n, bool zeroed) {
    constexpr std::size_t huge = std::size_t{1} << 21;
    const std::size_t bytes = n * sizeof(T);
    void* p = nullptr;
    if (bytes >= huge) {
      const std::size_t rounded = (bytes + huge - 1) & ~(huge - 1);
      p = std::aligned_alloc(huge, rounded);
      if (p == nullptr) throw std::bad_alloc();
      (void)madvise(p, rounded, MADV_HUGEPAGE);
      if (zeroed) std::memset(p, 0, bytes);
    } else {
      p = zeroed ? std::calloc(n, sizeof(T)) : std::malloc(bytes);
      if (p == nullptr) throw std::bad_alloc();
    }
    return static_cast<T*>(p);
  }

  array<value_type> slots_;
  array<unsigned char> used_;
  std::size_t capacity_ = 0;
  std::size_t mask_ = 0;
  unsigned shift_ = 63;
  std::size_t grow_at_ = 0;  // the size at which the next insertion grows the table
  std::size_t size_ = 0;
};

}  // namespace shoal::containers_detail
