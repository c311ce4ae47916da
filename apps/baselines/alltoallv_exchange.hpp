// One all-to-all round of fixed-size records between MPI ranks, the way a
// bulk-synchronous MPI program moves data, and the one place every baseline
// does it: the send counts go out with MPI_Alltoall, the records with
// MPI_Alltoallv, and what every rank sent to this one comes back grouped by
// source rank in rank order.
//
// The send side is filled in one of three ways:
//   - outboxes: push(dest, record) in any order; exchange() copies them into
//     one buffer by destination (bfs: the records of a level trickle in);
//   - counting sort: begin_round(), count(dest) per record, lay_out(), then
//     place(dest, record) per record straight into the send buffer; a bucket
//     may be handled here and withheld (the own rank's); exchange() sends
//     (gups, histogram, indexgather: a round's destinations are known first);
//   - the caller's own buffer, already laid out by destination:
//     exchange(send, counts, displs) (intsort, pagerank).
// After an exchange, reply() sends an answer per received record back the
// other way (indexgather's reads).
//
// Buffers are kept across rounds: after the first rounds of a run (or after
// reserve()), a round allocates nothing (outboxes are cleared, not freed;
// the send and receive buffers only ever grow). Records travel as the
// matching MPI integer type when T is one, else as raw bytes, so T must be
// trivially copyable and the same layout on every rank.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <mpi.h>

namespace shoal_baseline {

/// Uninitialised storage that grows geometrically and never shrinks: a
/// vector's resize would zero what it adds, on every round that grows it.
template <class T>
class grow_buffer {
 public:
  /// Makes room for `n` records; the contents are then unspecified.
  T* reserve(std::size_t n) {
    if (n > capacity_) {
      capacity_ = std::max(n, capacity_ * 2);
      data_ = std::make_unique_for_overwrite<T[]>(capacity_);
    }
    return data_.get();
  }
  T* data() noexcept { return data_.get(); }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t capacity_ = 0;
};

/// The MPI datatype a record of T travels as: the predefined integer or
/// floating type when T is one (nothing to build or free), else `sizeof(T)`
/// contiguous bytes, built here and freed by the destructor (before
/// MPI_Finalize).
template <class T>
requires std::is_trivially_copyable_v<T>
class mpi_record_type {
 public:
  mpi_record_type() : type_(predefined()) {
    if (type_ != MPI_DATATYPE_NULL) return;
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
    built_ = true;
  }
  mpi_record_type(const mpi_record_type&) = delete;
  mpi_record_type& operator=(const mpi_record_type&) = delete;
  ~mpi_record_type() {
    if (built_) MPI_Type_free(&type_);
  }

  MPI_Datatype get() const noexcept { return type_; }

 private:
  static MPI_Datatype predefined() {
    if constexpr (std::is_same_v<T, std::uint64_t>) return MPI_UINT64_T;
    if constexpr (std::is_same_v<T, std::uint32_t>) return MPI_UINT32_T;
    if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
    if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
    if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
    return MPI_DATATYPE_NULL;
  }

  MPI_Datatype type_;
  bool built_ = false;
};

template <class T>
requires std::is_trivially_copyable_v<T>
class alltoallv_exchange {
 public:
  /// Collective over `comm` only in that every rank must call exchange() the
  /// same number of times; construction itself sends nothing.
  explicit alltoallv_exchange(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
    MPI_Comm_size(comm_, &ranks_);
    const auto n = static_cast<std::size_t>(ranks_);
    out_.resize(n);
    for (std::vector<int>* v :
         {&send_counts_, &send_displs_, &recv_counts_, &recv_displs_, &cursor_})
      v->assign(n, 0);
  }
  alltoallv_exchange(const alltoallv_exchange&) = delete;
  alltoallv_exchange& operator=(const alltoallv_exchange&) = delete;

  /// Outboxes: sizes the buffers for rounds of up to `out[d]` records to
  /// each rank d and `in` records received, and touches them, so that such
  /// rounds neither allocate nor page-fault (larger rounds still work: they
  /// grow).
  void reserve(const std::vector<std::size_t>& out, std::size_t in) {
    std::size_t total = 0;
    for (std::size_t d = 0; d < out_.size(); ++d) {
      out_[d].resize(out[d]);
      out_[d].clear();
      total += out[d];
    }
    reserve(total, in);
  }

  /// Counting sort: sizes and touches the buffers for rounds of up to `send`
  /// records sent and `in` received (see the other reserve()).
  void reserve(std::size_t send, std::size_t in) {
    if (send > 0) std::memset(static_cast<void*>(send_.reserve(send)), 0, send * sizeof(T));
    if (in > 0) std::memset(static_cast<void*>(recv_.reserve(in)), 0, in * sizeof(T));
  }

  /// Outboxes: queues `record` for rank `dest` (local; no communication).
  void push(int dest, const T& record) { out_[static_cast<std::size_t>(dest)].push_back(record); }

  /// Counting sort, step 1: a round starts with no record for anyone.
  void begin_round() noexcept { std::fill(send_counts_.begin(), send_counts_.end(), 0); }
  /// Counting sort, step 2: one more record of this round goes to `dest`.
  void count(int dest) noexcept { ++send_counts_[static_cast<std::size_t>(dest)]; }
  /// Counting sort, step 3: gives each destination its place in the send
  /// buffer (after every count() of the round).
  void lay_out() {
    send_.reserve(static_cast<std::size_t>(displacements(send_counts_, send_displs_)));
    std::copy(send_displs_.begin(), send_displs_.end(), cursor_.begin());
    laid_out_ = true;
  }
  /// Counting sort, step 4: writes the next record counted for `dest` and
  /// returns its slot in the send buffer (for arrays kept beside it).
  std::size_t place(int dest, const T& record) noexcept {
    const auto at = static_cast<std::size_t>(cursor_[static_cast<std::size_t>(dest)]++);
    send_.data()[at] = record;
    return at;
  }
  /// Where `dest`'s records start in the send buffer, and the records.
  std::size_t offset(int dest) const noexcept {
    return static_cast<std::size_t>(send_displs_[static_cast<std::size_t>(dest)]);
  }
  std::span<const T> bucket(int dest) noexcept {
    return {send_.data() + offset(dest),
            static_cast<std::size_t>(send_counts_[static_cast<std::size_t>(dest)])};
  }
  /// Sends nothing to `dest` this round (the caller handled its bucket,
  /// typically its own rank's, which stays in place).
  void withhold(int dest) noexcept { send_counts_[static_cast<std::size_t>(dest)] = 0; }

  /// Every rank collectively: sends the outboxes (emptying them) or the laid
  /// out buckets, and returns the records received, grouped by source rank
  /// in rank order. The span is valid until the next exchange(). Throws
  /// std::length_error when a round would exceed MPI's int counts (callers
  /// size their rounds to avoid it).
  std::span<const T> exchange() {
    if (!laid_out_) pack();
    laid_out_ = false;
    return round(send_.data(), send_counts_.data(), send_displs_.data());
  }

  /// Every rank collectively: sends `counts[d]` records from `send +
  /// displs[d]` to each rank d (the caller's buffer, laid out by
  /// destination; the three must stay valid until reply() or the next
  /// exchange). Returns what exchange() returns.
  std::span<const T> exchange(const T* send, std::span<const int> counts,
                              std::span<const int> displs) {
    return round(send, counts.data(), displs.data());
  }

  /// Every rank collectively, after an exchange: sends `answers[i]`, the
  /// answer to received record i, back to that record's sender, and writes
  /// the answers this rank gets into `back`, laid out as its send buffer was
  /// (the answer to the record at send slot s lands in back[s]; a withheld
  /// bucket's slots are left alone).
  template <class U>
  requires std::is_trivially_copyable_v<U>
  void reply(const U* answers, U* back) {
    const mpi_record_type<U> type;
    MPI_Alltoallv(answers, recv_counts_.data(), recv_displs_.data(), type.get(), back, sent_counts_,
                  sent_displs_, type.get(), comm_);
  }

 private:
  std::span<const T> round(const T* send, const int* counts, const int* displs) {
    MPI_Alltoall(counts, 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, comm_);
    const int received = displacements(recv_counts_, recv_displs_);
    T* in = recv_.reserve(static_cast<std::size_t>(received));
    MPI_Alltoallv(send, counts, displs, type_.get(), in, recv_counts_.data(), recv_displs_.data(),
                  type_.get(), comm_);
    sent_counts_ = counts;
    sent_displs_ = displs;
    return {in, static_cast<std::size_t>(received)};
  }

  /// Copies the outboxes into one contiguous send buffer and empties them.
  void pack() {
    std::size_t total = 0;
    for (std::size_t d = 0; d < out_.size(); ++d) {
      check_count(out_[d].size());
      send_counts_[d] = static_cast<int>(out_[d].size());
      total += out_[d].size();
    }
    check_count(total);
    T* buf = send_.reserve(total);
    displacements(send_counts_, send_displs_);
    for (std::size_t d = 0; d < out_.size(); ++d) {
      if (!out_[d].empty())
        std::memcpy(buf + send_displs_[d], out_[d].data(), out_[d].size() * sizeof(T));
      out_[d].clear();
    }
  }

  /// Exclusive prefix sums of `counts` into `displs`; returns the total.
  static int displacements(const std::vector<int>& counts, std::vector<int>& displs) {
    std::size_t at = 0;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      displs[d] = static_cast<int>(at);
      at += static_cast<std::size_t>(counts[d]);
      check_count(at);
    }
    return static_cast<int>(at);
  }

  static void check_count(std::size_t n) {
    if (n > static_cast<std::size_t>(INT_MAX))
      throw std::length_error("alltoallv round exceeds MPI's int counts");
  }

  MPI_Comm comm_;
  int ranks_ = 1;
  mpi_record_type<T> type_;
  bool laid_out_ = false;
  std::vector<std::vector<T>> out_;
  grow_buffer<T> send_;
  grow_buffer<T> recv_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  std::vector<int> cursor_;           ///< counting sort: the next slot of each destination
  const int* sent_counts_ = nullptr;  ///< the last round's, for reply()
  const int* sent_displs_ = nullptr;
};

}  // namespace shoal_baseline
