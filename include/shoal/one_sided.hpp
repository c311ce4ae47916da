// One-sided access to the global heap (BCL, chapter 3): read, write and
// atomically update memory of any core without running code on it.
// Delegates (delegate.hpp) send the operation to the owner; these reach the
// memory itself where the machine allows, and fall back to delegates where
// it does not.
//
//   shoal::global_ptr<std::uint64_t> c = shoal::global_alloc<std::uint64_t>(1);
//   shoal::fetch_add(c, std::uint64_t{1});                // atomic, done on return
//   shoal::rput(a + 7, 3.5);                              // src reusable on return
//   shoal::rflush();                                       // now visible to every core
//   double x = shoal::rget(a + 7);
//   shoal::rma_request r = shoal::async_rget(a, buf.data(), buf.size());
//   ... r.wait();                                         // buf filled
//
// Backends (--one-sided, chosen once per job at init, named by --verbose and
// one_sided_backend_name()):
//   direct  plain loads and stores, std::atomic_ref for atomics. A job of one
//           process only (init refuses it for more).
//   shm     the global heap of every process lives in node-shared memory
//           (MPI_Win_allocate_shared); every access is the direct path into
//           the owner's segment as mapped here. All processes on one node;
//           needs the mpi transport.
//   rma     MPI-3 RMA, passive target: one window over every process's heap,
//           locked with MPI_Win_lock_all for the whole job; MPI_Rget /
//           MPI_Rput / MPI_Rget_accumulate / MPI_Compare_and_swap,
//           MPI_Win_flush_all. Every access, this process's included, goes
//           through the window (so that MPI's atomics are the only ones on a
//           word). Needs the mpi transport. OpenMPI is told to use its pt2pt
//           RMA component (see mpi_transport.cpp), which MPI allows to need
//           calls into MPI at the target for progress (shoal's cores make
//           them whenever they poll). Measured on one node (bench, R_busy):
//           an rget completed within about 1 ms while the target's only core
//           spun in a handler; the same rget under am waited for the
//           handler to end (90 ms).
//           MPICH 4.0 runs the target side of an operation on the caller's
//           own rank inside the call, which needs more than a worker's
//           stack: every MPI call a worker makes runs on its core's 1 MiB
//           service stack instead (two fiber switches, tens of ns).
//   am      every operation is a delegate to the owning core (active
//           messages through the aggregator): works everywhere, costs a round
//           trip, needs no progress from MPI RMA.
//   auto    (default) direct in a job of one process, am in a job of
//           several: a node-shared heap is tmpfs memory, which gets no
//           transparent huge pages (random access to a large heap table
//           lost 18-22% in gups 2^26 at 2 x 1), and under shm one-sided
//           atomics are not atomic with delegates on the same word.
//   node    direct in a job of one process; shm when every process of the
//           job is on one node (the ranks compare host names) and /dev/shm,
//           where MPI puts shared windows, has room on every rank for all
//           the node's heaps (statvfs; SHOAL_SHM_FREE_MB replaces the
//           figure, for tests); am otherwise. The ranks vote by allgather,
//           so all take the same choice, and a rank that then fails to map
//           the shared heap makes all of them fall back to am (--verbose
//           names the first such rank and why; SHOAL_SHM_MAP_FAIL=1 on a
//           rank simulates a failed mapping there, for tests). The choice
//           for programs whose heap traffic is one-sided (BCL containers:
//           `shoal isx --impl queue` and `shoal kmer` default to it).
//           --verbose names the choice and why. rma is never chosen by
//           itself (its progress depends on the MPI library).
//
// Memory model (cf. BCL 3.1). "This core" is the calling shoal core. The
// flush is named rflush() (and the fence rfence()) because shoal::flush()
// already sends this core's aggregated messages (message.hpp).
// - rget (blocking): returns the value read at the target after the call
//   started. async_rget: dst holds it once the request completes (wait()
//   returns or test() said true); dst must not be read or freed before.
// - rput (blocking): returns when the source may be reused ("local
//   completion"). The value is guaranteed visible to other cores' rget and
//   atomics only after this core calls rflush() (remote completion), and to
//   the owner's plain loads (global_ptr::local()) after rflush() and then a
//   barrier both sides pass. direct, shm and am complete remotely already on
//   return; only rma needs the flush, but portable code calls it.
//   async_rput: the source must stay unchanged until the request completes;
//   a completed request is then remotely completed by the next rflush().
// - compare_and_swap and fetch_{add,or,and,xor}: complete at the target on
//   return (the old value came back). They are atomic with respect to each
//   other on the same word, from any core of the job, under one backend.
//   The whole job uses one backend, so that always holds for one-sided
//   atomics.
// - Not atomic with respect to each other: a one-sided atomic and a
//   concurrent rput/rget of the same word (the put may be lost under rma;
//   under direct/shm a one-element rget/rput of an aligned 4- or 8-byte
//   word is a relaxed atomic load/store and so is not torn); and, under
//   direct, shm and rma, a one-sided atomic and a delegate (delegate.hpp)
//   updating the same word: delegates read-modify-write in handler context
//   with plain loads and stores, so an atomic by another core can fall
//   between them and one update is lost. Under am the one-sided atomics ARE
//   delegates and are atomic with them (tests/test_one_sided.cpp checks the
//   exact total of mixed updates under am). Keep a word either to one-sided
//   atomics or to delegates between barriers.
// - Puts of several words under direct and shm store each naturally
//   aligned 8-byte word of the target exactly once, and gets load each
//   once (src/memory/one_sided_copy.hpp): whole aligned words by aligned
//   16- or 32-byte vector stores (x86-64) or relaxed atomic word stores,
//   never memcpy, which may store a word twice (glibc's small sizes
//   overlap a head and a tail piece). So another core's write to a word
//   of a range being put lands before or after the put's store of it, and
//   is never undone by a second store of the same put (the cause of
//   checksum_queue's hang: a pop's free mark overwritten by the push's
//   repeated store of the slot). Words are not torn by the put (aligned
//   16-byte accesses are atomic on CPUs with AVX); bytes outside whole
//   aligned words go one store each. Cost against memcpy (bench/
//   one_sided_copy.cpp, in cache): 0.6-0.9x to 48 B, 1.6-2.8x from 128 B
//   to 16 KiB, 0.8-1.3x from 64 KiB to 1 MiB (a per-word atomic loop:
//   3.6-8x).
// - rflush(): every rput of this core that has returned, and every
//   async_rput of this core whose request completed, is remotely complete
//   when it returns. rfence(): rflush() and a full memory fence: nothing of
//   this core after it is started before everything before it completed.
//   Costs: direct, shm, am: a memory fence; rma: MPI_Win_flush_all (one
//   round trip to every process with operations pending).
// - Ordering: two puts of this core to the same word without a flush
//   between them may land in either order under rma; every other backend
//   keeps this core's program order.
//
// Costs (one element; measured figures in bench/results/one_sided.txt):
// direct and shm: a load, a store or one atomic instruction, plus a call;
// rma: one MPI operation (two for CAS: the operation and its flush) and the
// polling of its request, one network round trip for gets and atomics;
// am: one delegate round trip (two messages through the aggregator; a put
// waits for its acknowledgement).
//
// Contract and errors. Call from a shoal core (a task; the blocking forms
// suspend or poll). A null pointer, a core outside the job, a range that
// leaves its core's heap segment, an atomic on a misaligned word, or (shm and
// rma) a 2D pointer to another process's memory outside its global heap end
// the job with a message naming the call, the pointer and the cause.
// T is trivially copyable; atomics take 32- and 64-bit integers. A linear
// range spans blocks and cores freely (it is split at block boundaries); a
// 2D range stays in its core's memory.
#pragma once

#include "shoal/config.hpp"
#include "shoal/global_ptr.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

namespace shoal {

namespace detail {
struct rma_request_state;
struct detail_access;
struct rma_request_deleter {
  void operator()(rma_request_state* s) const noexcept;
};
}  // namespace detail

/// Completion of one asynchronous rget/rput. Default-constructed: complete.
/// Movable. Used on the core that started it. Destroying a pending request
/// waits for it (the buffers it names are then safe to free).
class rma_request {
 public:
  rma_request() = default;
  /// True once complete (see the memory model above); polls, never blocks.
  bool test();
  /// Returns once complete; a worker lets other tasks of its core run
  /// meanwhile.
  void wait();

 private:
  friend struct detail::detail_access;
  friend struct detail::rma_request_deleter;
  std::unique_ptr<detail::rma_request_state, detail::rma_request_deleter> s_;
};

namespace detail {
enum class atomic_kind : int { cas, add, bor, band, bxor };
rma_request async_get_bytes(std::uint64_t bits, void* dst, std::size_t elem, std::size_t n,
                            const char* api);
rma_request async_put_bytes(std::uint64_t bits, const void* src, std::size_t elem, std::size_t n,
                            const char* api);
/// plain_address's untyped form: nullptr when the n bytes at `bits` are not
/// reachable by plain loads from this process.
void* plain_address_bytes(std::uint64_t bits, std::size_t bytes, const char* api);
/// Old value of the `width`-byte word (4 or 8) at `bits`, after applying `op`.
std::uint64_t atomic_bytes(std::uint64_t bits, int width, atomic_kind op, std::uint64_t operand,
                           std::uint64_t compare, const char* api);
template <class T>
concept atomic_word = std::is_integral_v<T> &&(sizeof(T) == 4 || sizeof(T) == 8);
template <class T>
std::uint64_t widen(T v) {
  std::uint64_t w = 0;
  std::memcpy(&w, &v, sizeof v);
  return w;
}
template <class T>
T narrow(std::uint64_t w) {
  T v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}
}  // namespace detail

/// The backend this job uses (auto resolved), and its name. After init().
one_sided_kind one_sided_backend() noexcept;
const char* one_sided_backend_name() noexcept;

/// The address in this process at which plain loads and stores reach the n
/// elements at p, p + 1, ...: under the direct backend (one process) and the
/// shm backend (the processes of one node map each other's global heaps);
/// nullptr under rma and am, where only rget/rput reach another process.
/// A pointer into another process's heap is for code that orders its own
/// accesses: plain loads and stores are not one-sided operations, so
/// rflush/rfence do not order them; a barrier() does (it is a full fence on
/// every core), which is how BCL's phase promises (find_only after the
/// insert phase's barrier) use it. The n elements must lie in one block of
/// p's allocation (a 2D pointer's part; a linear pointer's block): an
/// access that crosses out of it ends the job naming p, as rget would. A
/// null p ends the job ("plain_address on global_ptr(null): null pointer")
/// under every backend, rma and am included: a null pointer is misuse, not
/// memory out of this process's reach.
template <class T>
T* plain_address(global_ptr<T> p, std::size_t n = 1) {
  return static_cast<T*>(detail::plain_address_bytes(p.bits(), n * sizeof(T), "plain_address"));
}

/// Starts reading n elements at src, src + 1, ... into dst.
template <class T>
requires std::is_trivially_copyable_v<T> rma_request async_rget(global_ptr<T> src, T* dst,
                                                                std::size_t n) {
  return detail::async_get_bytes(src.bits(), dst, sizeof(T), n, "shoal::async_rget");
}
/// Starts writing n elements from src at dst, dst + 1, ....
template <class T>
requires std::is_trivially_copyable_v<T> rma_request async_rput(global_ptr<T> dst, const T* src,
                                                                std::size_t n) {
  return detail::async_put_bytes(dst.bits(), src, sizeof(T), n, "shoal::async_rput");
}
/// Reads n elements into dst. Blocking.
template <class T>
requires std::is_trivially_copyable_v<T>
void rget(global_ptr<T> src, T* dst, std::size_t n) {
  detail::async_get_bytes(src.bits(), dst, sizeof(T), n, "shoal::rget").wait();
}
/// The element at src. Blocking.
template <class T>
requires std::is_trivially_copyable_v<T> T rget(global_ptr<T> src) {
  T v;
  detail::async_get_bytes(src.bits(), &v, sizeof(T), 1, "shoal::rget").wait();
  return v;
}
/// Writes n elements; returns when src may be reused (rflush() for remote completion).
template <class T>
requires std::is_trivially_copyable_v<T>
void rput(global_ptr<T> dst, const T* src, std::size_t n) {
  detail::async_put_bytes(dst.bits(), src, sizeof(T), n, "shoal::rput").wait();
}
/// Writes one element (rflush() for remote completion).
template <class T>
requires std::is_trivially_copyable_v<T>
void rput(global_ptr<T> dst, const T& v) {
  detail::async_put_bytes(dst.bits(), &v, sizeof(T), 1, "shoal::rput").wait();
}

/// If *p == expected, stores desired. Returns the old value (equal to
/// expected when it swapped). Atomic; complete at the target on return.
template <detail::atomic_word T>
T compare_and_swap(global_ptr<T> p, T expected, T desired) {
  return detail::narrow<T>(detail::atomic_bytes(p.bits(), sizeof(T), detail::atomic_kind::cas,
                                                detail::widen(desired), detail::widen(expected),
                                                "shoal::compare_and_swap"));
}
/// *p += v (wrapping); returns the old value. Atomic; complete on return.
template <detail::atomic_word T>
T fetch_add(global_ptr<T> p, T v) {
  return detail::narrow<T>(detail::atomic_bytes(p.bits(), sizeof(T), detail::atomic_kind::add,
                                                detail::widen(v), 0, "shoal::fetch_add"));
}
/// *p |= v; returns the old value.
template <detail::atomic_word T>
T fetch_or(global_ptr<T> p, T v) {
  return detail::narrow<T>(detail::atomic_bytes(p.bits(), sizeof(T), detail::atomic_kind::bor,
                                                detail::widen(v), 0, "shoal::fetch_or"));
}
/// *p &= v; returns the old value.
template <detail::atomic_word T>
T fetch_and(global_ptr<T> p, T v) {
  return detail::narrow<T>(detail::atomic_bytes(p.bits(), sizeof(T), detail::atomic_kind::band,
                                                detail::widen(v), 0, "shoal::fetch_and"));
}
/// *p ^= v; returns the old value.
template <detail::atomic_word T>
T fetch_xor(global_ptr<T> p, T v) {
  return detail::narrow<T>(detail::atomic_bytes(p.bits(), sizeof(T), detail::atomic_kind::bxor,
                                                detail::widen(v), 0, "shoal::fetch_xor"));
}

/// Remote completion of this core's finished puts (see the memory model).
void rflush();
/// rflush() and a full memory fence.
void rfence();

}  // namespace shoal
