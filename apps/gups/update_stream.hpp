// One core's share of the GUPS updates, generated chunk by chunk: the loop
// both implementations share (updater.hpp says what a chunk is for).
//
// Updates to words of other cores are handed to the implementation as they
// are generated, so they can leave with the chunk's flush. Updates to the
// core's own words are applied after that flush: each is prefetched when
// generated and applied in a second pass, by which time its cache line is
// (mostly) in, so the core overlaps its own misses instead of stalling on
// each in turn.
#pragma once

#include <shoal/shoal.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

#include "gups/gups_table.hpp"
#include "gups/plain/hpcc_stream.hpp"
#include "gups/updater.hpp"

namespace shoal_apps::gups {

class update_stream {
 public:
  /// Updates [first, last) of the calling core, `chunk` (<= max_outstanding)
  /// at a time. Task (reads this core's part).
  update_stream(const gups_table& t, std::int64_t first, std::int64_t last, int chunk)
      : t_(t),
        chunk_(std::min(chunk, max_outstanding)),
        me_(shoal::mycore()),
        mine_(local_part.local()),
        r_(hpcc_starts(static_cast<std::uint64_t>(first))),
        left_(last - first) {}

  bool done() const noexcept { return left_ <= 0; }

  /// Generates the next chunk (at most `chunk` updates): calls remote(h, i, r)
  /// for each update of a word i on core h != this core; keeps the others
  /// for apply_own().
  template <class F>
  void next_chunk(const F& remote) {
    own_count_ = 0;
    next_chunk(remote, [this](std::uint64_t at, std::uint64_t r) {
      __builtin_prefetch(mine_ + at, 1);
      own_[static_cast<std::size_t>(own_count_++)] = {at, r};
    });
  }

  /// As above, but hands each update of this core's own words to
  /// own(at, r) (at: its index in this core's part) as it is generated.
  template <class F, class G>
  void next_chunk(const F& remote, const G& own) {
    const auto n = static_cast<int>(std::min<std::int64_t>(chunk_, left_));
    left_ -= n;
    for (int u = 0; u < n; ++u) {
      r_ = hpcc_next(r_);
      const std::uint64_t i = r_ & t_.mask();
      const int h = t_.home(i);
      if (h != me_) {
        remote(h, i, r_);
      } else {
        own(t_.local_index(i), r_);
      }
    }
  }

  /// Applies the last chunk's updates of this core's own words. No handler
  /// runs in the middle of a task, so this is atomic with respect to the
  /// handlers and delegates that update the same words.
  void apply_own() noexcept {
    for (int k = 0; k < own_count_; ++k) {
      const own_update& o = own_[static_cast<std::size_t>(k)];
      mine_[o.at] ^= o.r;
    }
  }

 private:
  struct own_update {
    std::uint64_t at;
    std::uint64_t r;
  };

  gups_table t_;
  int chunk_;
  int me_;
  std::uint64_t* mine_;
  std::uint64_t r_;
  std::int64_t left_;
  int own_count_ = 0;
  std::array<own_update, max_outstanding> own_;  // 16 KiB: fits a worker stack
};

}  // namespace shoal_apps::gups
