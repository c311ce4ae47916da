// The per-core accumulator of a target channel in combine-until-flush mode
// (target_channel_options::combine_until_flush, reduction.hpp): every value
// a core's tasks send is folded into one value per distinct target, kept
// here, and nothing travels until the core flushes the channel (flush(),
// end_phase(), end_phase_depth()); then one record per distinct target
// leaves. Unlike the staged cache (reduction_cache.hpp), every duplicate
// that meets before the flush is removed, whatever the timing.
//
// Two layouts, chosen by the distribution at compile time:
// - dense, when the distribution says how many targets each core owns
//   (local_count(core)): one slot per target of the job, in one flat array
//   of per-owner regions, indexed by (region start of the owner + local
//   index). No hashing: one load of the region start, one bounds check, one
//   flag test per value. Memory: sizeof(T) + 1 bytes per target of the job
//   per core (pagerank's hand-written combining pays sizeof(T)).
// - hashed otherwise (cyclic, hashed and user distributions without a
//   count): open addressing on (owner, local), grown at half load; memory
//   proportional to the distinct targets one core reaches between flushes.
// Both keep the touched targets in a list, so a flush costs the targets
// reached, not the job's size.
//
// Touched only by its core's thread. The owner of the storage is the
// channel's reduction_cache of that core (freed when the channel closes).
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/reduction_cache.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace shoal::detail {

template <class T>
class dense_combiner final : public combiner_base {
 public:
  /// `count(c)` targets on each core c of `cores`.
  template <class Count>
  dense_combiner(int cores, int me, const Count& count) : me_(me) {
    start_.resize(static_cast<std::size_t>(cores) + 1);
    std::uint64_t total = 0;
    for (int c = 0; c < cores; ++c) {
      start_[static_cast<std::size_t>(c)] = total;
      total += count(c);
    }
    start_.back() = total;
    values_ = std::make_unique<T[]>(total);
    seen_ = std::make_unique<std::uint8_t[]>(total);  // zeroed
    touched_.resize(static_cast<std::size_t>(cores));
  }

  /// Folds `v` into target (owner, local). False when the local index is
  /// outside the owner's count (the distribution broke its contract).
  template <class R>
  bool add(int owner, std::uint64_t local, const T& v, const R& op) {
    const std::uint64_t i = start_[static_cast<std::size_t>(owner)] + local;
    if (i >= start_[static_cast<std::size_t>(owner) + 1]) [[unlikely]]
      return false;
    ++adds;
    if (seen_[i]) {
      op(values_[i], v);
      return true;
    }
    seen_[i] = 1;
    values_[i] = v;
    touched_[static_cast<std::size_t>(owner)].push_back(local);
    return true;
  }

  /// Calls f(owner, local, value) once per target reached since the last
  /// flush, owners in the order me+1, me+2, ... me (so that cores do not all
  /// send to core 0 first), and forgets them.
  template <class F>
  void drain(F f) {
    const auto cores = static_cast<int>(touched_.size());
    for (int k = 1; k <= cores; ++k) {
      const int owner = (me_ + k) % cores;
      auto& list = touched_[static_cast<std::size_t>(owner)];
      const std::uint64_t base = start_[static_cast<std::size_t>(owner)];
      distinct += list.size();
      for (const std::uint64_t l : list) {
        seen_[base + l] = 0;
        f(owner, l, values_[base + l]);
      }
      list.clear();
    }
  }

  bool empty() const noexcept { return adds == 0; }

  std::uint64_t adds = 0;      // values folded in since the last flush
  std::uint64_t distinct = 0;  // records sent by the last drains

 private:
  int me_;
  std::vector<std::uint64_t> start_;  // region start per owner; start_[cores] = total
  std::unique_ptr<T[]> values_;
  std::unique_ptr<std::uint8_t[]> seen_;
  std::vector<std::vector<std::uint64_t>> touched_;  // local indices per owner
};

template <class T>
class hashed_combiner final : public combiner_base {
 public:
  template <class R>
  bool add(int owner, std::uint64_t local, const T& v, const R& op) {
    const std::uint64_t key = (static_cast<std::uint64_t>(owner) << 40 | local) + 1;
    if ((entries_.size() + 1) * 2 > table_.size()) grow();
    ++adds;
    for (std::uint64_t s = hash(key);; s = (s + 1) & mask_) {
      const std::uint32_t e = table_[s];
      if (e == 0) {
        entries_.push_back({key, v});
        table_[s] = static_cast<std::uint32_t>(entries_.size());
        return true;
      }
      if (entries_[e - 1].key == key) {
        op(entries_[e - 1].value, v);
        return true;
      }
    }
  }

  template <class F>
  void drain(F f) {
    distinct += entries_.size();
    // Clearing every used slot at once keeps linear probing consistent.
    if (entries_.size() * 8 > table_.size()) {
      std::memset(table_.data(), 0, table_.size() * sizeof(std::uint32_t));
    } else {
      for (const entry& e : entries_)
        for (std::uint64_t s = hash(e.key);; s = (s + 1) & mask_)
          if (table_[s] != 0 && entries_[table_[s] - 1].key == e.key) {
            table_[s] = 0;
            break;
          }
    }
    for (const entry& e : entries_)
      f(static_cast<int>((e.key - 1) >> 40), (e.key - 1) & ((std::uint64_t{1} << 40) - 1), e.value);
    entries_.clear();
  }

  bool empty() const noexcept { return adds == 0; }

  std::uint64_t adds = 0;
  std::uint64_t distinct = 0;

 private:
  struct entry {
    std::uint64_t key;  // (owner << 40 | local) + 1
    T value;
  };
  std::uint64_t hash(std::uint64_t key) const noexcept {
    return (key * 0x9e3779b97f4a7c15ULL >> 20) & mask_;
  }
  void grow() {
    const std::size_t size = table_.empty() ? 1024 : table_.size() * 2;
    SHOAL_CHECK(size <= (std::size_t{1} << 33),
                "target_channel combine_until_flush: more than 2^31 distinct targets staged on "
                "one core; flush more often");
    table_.assign(size, 0);
    mask_ = size - 1;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      std::uint64_t s = hash(entries_[i].key);
      while (table_[s] != 0) s = (s + 1) & mask_;
      table_[s] = static_cast<std::uint32_t>(i + 1);
    }
  }

  std::vector<std::uint32_t> table_;  // entry index + 1; 0 = empty
  std::uint64_t mask_ = 0;
  std::vector<entry> entries_;
};

}  // namespace shoal::detail
