// One all-to-all round of fixed-size records between MPI ranks, the way a
// bulk-synchronous MPI program moves data: records are appended to a
// per-destination outbox, then exchange() (collective) ships every outbox with
// MPI_Alltoall (counts) and MPI_Alltoallv (records) and hands back what every
// rank sent to this one.
//
// Buffers are kept across rounds: after the first rounds of a run, a round
// allocates nothing (outboxes are cleared, not freed; the packed send buffer
// and the receive buffer only ever grow). Records are sent as raw bytes, so
// T must be trivially copyable and the same layout on every rank.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
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

template <class T>
requires std::is_trivially_copyable_v<T>
class alltoallv_exchange {
 public:
  /// Collective over `comm` only in that every rank must call exchange() the
  /// same number of times; construction itself sends nothing.
  explicit alltoallv_exchange(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_size(comm_, &ranks_);
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
    out_.resize(static_cast<std::size_t>(ranks_));
    for (std::vector<int>* v : {&send_counts_, &send_displs_, &recv_counts_, &recv_displs_})
      v->assign(static_cast<std::size_t>(ranks_), 0);
  }
  alltoallv_exchange(const alltoallv_exchange&) = delete;
  alltoallv_exchange& operator=(const alltoallv_exchange&) = delete;
  /// Must run before MPI_Finalize.
  ~alltoallv_exchange() { MPI_Type_free(&type_); }

  /// Sizes the buffers for rounds of up to `out[d]` records to each rank d
  /// and `in` records received, and touches them, so that such rounds
  /// neither allocate nor page-fault (larger rounds still work: they grow).
  void reserve(const std::vector<std::size_t>& out, std::size_t in) {
    std::size_t total = 0;
    for (std::size_t d = 0; d < out_.size(); ++d) {
      out_[d].resize(out[d]);
      out_[d].clear();
      total += out[d];
    }
    if (total > 0) std::memset(static_cast<void*>(send_.reserve(total)), 0, total * sizeof(T));
    if (in > 0) std::memset(static_cast<void*>(recv_.reserve(in)), 0, in * sizeof(T));
  }

  /// Queues `record` for rank `dest` (local; no communication).
  void push(int dest, const T& record) { out_[static_cast<std::size_t>(dest)].push_back(record); }

  /// Every rank collectively: sends the outboxes, empties them, and returns
  /// the records received, grouped by source rank in rank order. The span is
  /// valid until the next exchange(). Throws std::length_error when a round
  /// would exceed MPI's int counts (callers size their rounds to avoid it).
  std::span<const T> exchange() {
    pack();
    MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, comm_);
    const int received = displacements(recv_counts_, recv_displs_);
    T* in = recv_.reserve(static_cast<std::size_t>(received));
    MPI_Alltoallv(send_.data(), send_counts_.data(), send_displs_.data(), type_, in,
                  recv_counts_.data(), recv_displs_.data(), type_, comm_);
    return {in, static_cast<std::size_t>(received)};
  }

 private:
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
  MPI_Datatype type_{};
  std::vector<std::vector<T>> out_;
  grow_buffer<T> send_;
  grow_buffer<T> recv_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
};

}  // namespace shoal_baseline
