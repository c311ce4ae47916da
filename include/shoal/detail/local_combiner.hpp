// The per-core accumulator of a target channel in combine-until-flush mode
// (target_channel_options::combine_until_flush, reduction.hpp): every value
// a core's tasks send is folded into one value per distinct target, kept
// here, and nothing travels until the core flushes the channel (flush(),
// end_phase(), end_phase_depth()); then one record per distinct target
// leaves. Unlike the staged cache (reduction_cache.hpp), every duplicate
// that meets before the flush is removed, whatever the timing.
//
// Two layouts, chosen by the distribution at compile time:
// - flat, when the distribution numbers its targets densely: it declares
//   both targets() (ids are 0 .. targets()-1) and local_count(core). One
//   slot per target id of the job, indexed by the id itself: no owner
//   lookup, no hashing; per value one bit test and the reduction (the
//   owner is located once per distinct target, at the flush). Memory:
//   sizeof(T) bytes and one bit per target of the job per core (pagerank's
//   hand-written combining pays sizeof(T)).
// - hashed otherwise (cyclic, hashed and user distributions without those
//   two): open addressing on (owner, local), grown at half load; memory
//   proportional to the distinct targets one core reaches between flushes.
// Both keep the touched targets in a list, so a flush costs the targets
// reached, not the job's size.
//
// Touched only by its core's thread. The owner of the storage is the
// channel's reduction_cache of that core (freed when the channel closes).
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/reduction_cache.hpp"
#include "shoal/distribution.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace shoal::detail {

/// Whether a distribution gets a flat combiner: it numbers its targets
/// densely (targets() and local_count()).
template <class D>
concept flat_combinable = requires(const D& d) {
  { d.targets() } -> std::convertible_to<std::uint64_t>;
  { d.local_count(0) } -> std::convertible_to<std::uint64_t>;
};

/// Whether a flat-combinable distribution owns contiguous regions of ids:
/// core c's targets are first_target(c) .. first_target(c) + local_count(c)
/// - 1, local index t - first_target(c) (block layouts). A flush without
/// marks then goes region by region: the owner is known per region, not
/// located per target.
template <class D>
concept region_combinable = flat_combinable<D> && requires(const D& d) {
  { d.first_target(0) } -> std::convertible_to<std::uint64_t>;
};

template <class T>
class flat_combiner final : public combiner_base {
 public:
  /// Slots for target ids 0 .. targets-1, every mark clear.
  explicit flat_combiner(std::uint64_t targets)
      : size_(targets),
        values_(std::make_unique<T[]>(targets)),
        marks_(std::make_unique<std::uint64_t[]>((targets + 63) / 64)) {}
  /// Without marks (drop_identity): every slot holds `identity` until a
  /// value folds into it, and a flush sends the slots that differ from it.
  flat_combiner(std::uint64_t targets, const T& identity)
      : size_(targets),
        values_(std::make_unique<T[]>(targets)),
        unmarked_(true),
        identity_(identity) {
    for (std::uint64_t t = 0; t < targets; ++t) values_[t] = identity;
  }
  bool unmarked() const noexcept { return unmarked_; }
  /// What an unmarked slot holds when no value reached it.
  const T& identity() const noexcept { return identity_; }
  /// Folds `v` into target `t` without marks: the reduction only.
  template <class R>
  [[gnu::always_inline]] void add_unmarked(T* values, std::uint64_t t, const T& v, const R& op) {
    ++adds;
    op(values[t], v);
  }

  /// Folds `v` into target `t`, which the caller checked is below size().
  template <class R>
  [[gnu::always_inline]] void add(std::uint64_t t, const T& v, const R& op) {
    add(values_.get(), marks_.get(), t, v, op);
  }
  /// The same with the arrays passed in (values(), marks()), so that a send
  /// loop keeps them in registers. The marks are a bitmap (one bit per
  /// target: pagerank's 2^18 targets take 32 KiB, which stays in the L1
  /// cache, where a byte per target added a cache miss per value).
  template <class R>
  [[gnu::always_inline]] void add(T* values, std::uint64_t* marks, std::uint64_t t, const T& v,
                                  const R& op) {
    ++adds;
    std::uint64_t& word = marks[t / 64];
    const std::uint64_t bit = std::uint64_t{1} << (t % 64);
    if ((word & bit) != 0) {
      op(values[t], v);
      return;
    }
    word |= bit;
    values[t] = v;
    touched_.push_back(t);
  }

  /// Calls f(target, value) once per target reached since the last flush
  /// and forgets them. When the targets reached are a fair share of the
  /// slots (1 in 64 or more), in target order: the marks are scanned a
  /// word at a time from slot `first` round to `first` - 1, so records
  /// leave, and the owners' handlers touch their arrays, in order (a cache
  /// line serves several); else in the order they were first added, which
  /// costs only the targets reached.
  /// Adds made meanwhile (a task of this core resuming while f waits for a
  /// buffer) are safe: one to a target not yet handed on joins its value,
  /// one to a target already handed on starts the next flush's list.
  template <class F>
  void drain(std::uint64_t first, F f) {
    sender_added = false;
    if (unmarked_) {
      const std::uint64_t from = first < size_ ? first : 0;
      scan_values(from, size_, f);
      scan_values(0, from, f);
      return;
    }
    std::vector<std::uint64_t> list;
    list.swap(touched_);
    touched_.swap(spare_);  // spare_ is empty: keeps the capacity of two flushes ago
    if (list.size() * 64 >= size_) {
      const std::uint64_t words = (size_ + 63) / 64;
      const std::uint64_t w0 = first < size_ ? first / 64 : 0;
      scan(w0, words, f);
      scan(0, w0, f);
    } else {
      for (const std::uint64_t t : list)
        // Skips entries whose target a scan during an earlier drain sent.
        if ((marks_[t / 64] >> (t % 64) & 1) != 0) hand_on(t, f);
    }
    list.clear();
    spare_.swap(list);
  }

  /// Without marks: calls f(t, value) for each slot t of [lo, hi) that
  /// differs from the identity, in order, resetting it first. The caller
  /// clears sender_added (drain() does).
  template <class F>
  void drain_range(std::uint64_t lo, std::uint64_t hi, F f) {
    scan_values(lo, hi, f);
  }

  /// Nothing to flush: no value added since the last flush and no
  /// local_combine running (its sender counts in a register, so adds lags).
  bool empty() const noexcept { return adds == 0 && open_senders == 0 && !sender_added; }
  std::uint64_t size() const noexcept { return size_; }
  T* values() noexcept { return values_.get(); }
  std::uint64_t* marks() noexcept { return marks_.get(); }

  std::uint64_t adds = 0;      // values folded in since the last flush
  std::uint64_t distinct = 0;  // records sent by the drains
  int open_senders = 0;        // local_combine calls running on this core
  bool sender_added = false;   // a local_combine's sender added since the last flush

 private:
  std::uint64_t size_;
  std::unique_ptr<T[]> values_;
  std::unique_ptr<std::uint64_t[]> marks_;  // bit t % 64 of word t / 64: t reached
  std::vector<std::uint64_t> touched_;      // target ids, in first-add order
  std::vector<std::uint64_t> spare_;
  bool unmarked_ = false;
  T identity_{};

  /// Hands on the slots of [lo, hi) that differ from the identity.
  template <class F>
  void scan_values(std::uint64_t lo, std::uint64_t hi, F& f) {
    for (std::uint64_t t = lo; t < hi; ++t) {
      if (values_[t] == identity_) continue;
      const T v = values_[t];
      values_[t] = identity_;  // first: f may suspend, and adds resume
      ++distinct;
      f(t, v);
    }
  }

  template <class F>
  void hand_on(std::uint64_t t, F& f) {
    // A copy, and the mark cleared, before f: f may suspend, and an add
    // resuming meanwhile starts slot t afresh for the next flush.
    const T v = values_[t];
    marks_[t / 64] &= ~(std::uint64_t{1} << (t % 64));
    ++distinct;
    f(t, v);
  }
  /// Hands on the marked slots of words [lo, hi).
  template <class F>
  void scan(std::uint64_t lo, std::uint64_t hi, F& f) {
    for (std::uint64_t i = lo; i < hi; ++i)
      for (std::uint64_t w = marks_[i]; w != 0; w &= w - 1)
        hand_on(i * 64 + static_cast<unsigned>(__builtin_ctzll(w)), f);
  }
};

/// What target_channel::local_combine hands a task's loop over a flat
/// combiner without marks (drop_identity): send() is a range check and the
/// reduction into the slot, inlined, with the count of values kept in the
/// sender (a register once the loop is inlined), not in the combiner.
/// Made and read only by local_combine; D names the distribution in the
/// error of a target out of range.
template <class T, class R, class D>
class unmarked_sender {
 public:
  unmarked_sender(T* values, std::uint64_t size, const R& op, const D* dist)
      : values_(values), size_(size), dist_(dist), op_(op) {}
  unmarked_sender(const unmarked_sender&) = delete;
  unmarked_sender& operator=(const unmarked_sender&) = delete;

  /// Folds `value` into `target`'s slot; ends the job when `target` is not
  /// below the distribution's targets().
  [[gnu::always_inline]] void send(std::uint64_t target, const T& value) const {
    if (target >= size_) [[unlikely]]
      fatal_target_range(*dist_, target, size_, "shoal::target_channel::local_combine");
    op_(values_[target], value);
    ++adds_;
  }
  std::uint64_t adds() const noexcept { return adds_; }

 private:
  T* values_;
  std::uint64_t size_;
  const D* dist_;
  [[no_unique_address]] R op_;
  mutable std::uint64_t adds_ = 0;
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
    // The entries leave the table before f runs: f may suspend, and an add
    // resuming meanwhile starts the next flush's list (it may grow entries_,
    // which must not move the batch being handed on).
    std::vector<entry> batch;
    batch.swap(entries_);
    for (const entry& e : batch)
      f(static_cast<int>((e.key - 1) >> 40), (e.key - 1) & ((std::uint64_t{1} << 40) - 1), e.value);
    if (entries_.empty()) {  // keep the capacity for the next flush
      batch.clear();
      entries_.swap(batch);
    }
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
