// How a BCL container stores one element (thesis section 3.3, "object
// containers"): inline when the type is trivially copyable, otherwise as a
// serial pointer to its bytes in an arena of the global heap.
//
//   stored_t<std::uint64_t>          std::uint64_t  (the value itself, as before)
//   stored_t<std::string>            serial_ptr     {global_ptr<char>, u64 length}
//   stored_t<std::vector<float>>     serial_ptr
//   stored_t<my_record>              serial_ptr, given shoal::serializer<my_record>
//
// The customisation point is shoal's own serializer<T> (serialize.hpp, the
// one messages and object channels use): size(), write() and read(). The
// built-ins cover std::string, std::vector<T>, std::pair and std::tuple; a
// user type specialises serializer<T>. A value's bytes are exactly what
// write() adds (for std::string: a 32-bit length, then the characters).
//
// Arena. A container of serialised values makes an object_arena with it:
// one global_alloc of `arena_bytes_per_core` on every core (symmetric; the
// default, default_arena_bytes_per_core, is 1 MiB). Core c's part is
// contiguous in its heap segment; its first 8 bytes count the bytes used.
// put() runs on the inserting core and bump-allocates in THAT core's part
// only: no remote allocation and no atomics (the tasks of one core run one
// at a time, and the space is reserved before anything can suspend), so the
// cores of one process never share a part. Under direct, shm and am the
// bytes are serialised in place (direct and shm readers load the owner's
// stores; am's rgets run on this core); under rma they go with rput to a
// 2D pointer into the part, as every access to the window must, and
// rflush() completes them. Either way they are complete when put()
// returns: the caller then publishes the serial_ptr (e.g. in a hash_map
// bucket) with an atomic or a delegate, ordered after them, so whoever
// reads the pointer reads complete bytes. Bytes are never written twice: a
// replaced value gets new bytes and the old ones stay, unchanged, until the
// container is destroyed. A reader holding an old serial_ptr therefore
// reads the whole old value, never a mix (no torn values), at the price of
// space: replaced values are not reclaimed until destroy().
//
// Costs (W(n) / R(n): a remote write / read of n contiguous bytes; F:
// rflush; s(n): serializer's write or read of n bytes, a copy):
//   put(v)        s(n)                  (direct, shm, am: serialised in place)
//                 s(n) + W(n) + F       (rma: a copy, an MPI_Put to this
//                                        process, MPI_Win_flush_all)
//   get(p)        R(n) + s(n)           (plus one heap allocation for the bytes;
//                                        s(n) alone for bytes of this process,
//                                        read in place, but under rma)
//   make          a global_alloc; the container's make zeroes each part's counter
//   destroy       a global_free
//
// Errors (the job ends, status 2, naming the container, the core and the
// option): a value that does not fit the rest of the inserting core's part
// (reported by put() before the container is touched, so nothing inserted
// earlier is lost; left() says what fits); arena_bytes_per_core of 0 or
// over 2^40. A serializer whose write() adds other than size() bytes, or
// whose read() leaves bytes, is named too.
#pragma once

#include "shoal/bcl/path.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"
#include "shoal/serialize.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

namespace shoal::bcl {

/// Where a serialised value's bytes are: a 2D pointer into the writer's
/// arena part and their number.
struct serial_ptr {
  global_ptr<char> bytes;
  std::uint64_t length = 0;
};
static_assert(std::is_trivially_copyable_v<serial_ptr> && sizeof(serial_ptr) == 16);

/// Stored in place: its bytes are the element.
template <class T>
concept inline_object = std::is_trivially_copyable_v<T>;
/// Stored through a serial_ptr: needs shoal::serializer<T>.
template <class T>
concept serial_object = !std::is_trivially_copyable_v<T> && shoal::serializable<T>;
/// What a BCL object container can hold.
template <class T>
concept storable = inline_object<T> || serial_object<T>;

/// What a container writes into its slot for an element of type T.
template <class T>
struct stored {
  using type = T;
};
template <serial_object T>
struct stored<T> {
  using type = serial_ptr;
};
template <class T>
using stored_t = typename stored<T>::type;

inline constexpr std::uint64_t default_arena_bytes_per_core = std::uint64_t{1} << 20;

/// Per-core bump arenas for serialised values (see the header). An 8-byte
/// handle (each part's header holds its size and what is used); copy it to
/// every core.
class object_arena {
 public:
  /// A handle to nothing.
  object_arena() = default;

  /// One global_alloc of `bytes_per_core` on every core (rounded up to
  /// --block-bytes). `owner` names the container in errors. The container
  /// must then run reset_part(c, bytes_per_core) on each core c's process
  /// before use.
  static object_arena make(std::uint64_t bytes_per_core, const std::string& owner) {
    if (bytes_per_core == 0 || bytes_per_core > (std::uint64_t{1} << 40))
      path_detail::usage_error(fmt::format(
          "{}: arena_bytes_per_core {} (the bytes for serialised values on each core) must be "
          "between 1 and 2^40",
          owner, bytes_per_core));
    object_arena a;
    a.base_ = global_alloc<char>(static_cast<std::int64_t>(part_bytes(bytes_per_core)) * cores());
    return a;
  }

  bool valid() const noexcept { return static_cast<bool>(base_); }

  /// Empties core `core`'s part, `bytes_per_core` as given to make(). Any
  /// thread of that core's process.
  void reset_part(int core, std::uint64_t bytes_per_core) const {
    counter(core) = 0;
    capacity(core) = part_bytes(bytes_per_core) - header;
  }

  /// Bytes for values in the calling core's part (make's bytes_per_core
  /// rounded up so that header and values fill whole blocks).
  std::uint64_t bytes_per_core() const { return capacity(mycore()); }

  /// Bytes still free in the calling core's part.
  std::uint64_t left() const {
    const std::uint64_t used = align(counter(mycore()));
    return used >= bytes_per_core() ? 0 : bytes_per_core() - used;
  }

  /// Writes v's bytes into the calling core's part and returns where they
  /// are, remotely complete. Ends the job (status 2) naming `owner` when
  /// they do not fit; nothing is written then.
  template <serial_object T>
  serial_ptr put(const T& v, const std::string& owner) const {
    const std::size_t n = serializer<T>::size(v);
    const int me = mycore();
    std::uint64_t& used = counter(me);
    const std::uint64_t at = align(used);
    if (at > bytes_per_core() || n > bytes_per_core() - at)
      path_detail::usage_error(fmt::format(
          "{}: a value of {} serialised bytes does not fit core {}'s arena ({} of {} bytes left; "
          "bytes of replaced values stay until destroy); raise arena_bytes_per_core of make()",
          owner, n, me, at > bytes_per_core() ? 0 : bytes_per_core() - at, bytes_per_core()));
    // Reserved before the rput below can suspend: another task of this core
    // inserting meanwhile gets the bytes after these.
    used = at + n;
    char* const to = part(me) + header + at;
    const serial_ptr p{global_ptr<char>::make_2d(me, to), n};
    if (n == 0) return p;
    if (one_sided_backend() != one_sided_kind::rma) {
      // direct, shm: readers load this memory directly, after an atomic (or
      // a barrier) that the caller's publishing orders after these stores;
      // am: readers' rgets run here, on this core, after this task. So the
      // bytes are written in place, once.
      write_checked(v, to, n, owner);
      std::atomic_thread_fence(std::memory_order_release);
      return p;
    }
    // rma: every access to the window goes through MPI, this process's too.
    std::vector<char> bytes(n);
    write_checked(v, bytes.data(), n, owner);
    rput(p.bytes, bytes.data(), n);
    rflush();  // complete before the caller publishes p
    return p;
  }

  /// Gives back the bytes of p, the calling core's latest put(), when no
  /// put of this core came after it (a refused queue push): true if so.
  bool unput(serial_ptr p) const {
    const int me = mycore();
    if (p.length == 0 || p.bytes.core() != me) return false;
    std::uint64_t& used = counter(me);
    char* const end = part(me) + header + used;
    if (p.bytes.local() + p.length != end) return false;
    used -= p.length;
    return true;
  }

  /// Reads back the value put() wrote at p. Any core; blocking.
  template <serial_object T>
  static T get(serial_ptr p, const std::string& owner) {
    if (p.length != 0 && one_sided_backend() != one_sided_kind::rma &&
        rank_of(p.bytes.core()) == myrank()) {
      // Bytes of a core of this process, written once before the pointer
      // was published: read in place (under am this saves a round trip to
      // that core; under direct and shm it is what rget would do).
      const char* at = p.bytes.local();
      return read_checked<T>(at, p.length, owner);
    }
    std::vector<char> bytes(p.length);
    if (p.length != 0) rget(p.bytes, bytes.data(), p.length);
    return read_checked<T>(bytes.data(), p.length, owner);
  }

 private:
  template <class T>
  static T read_checked(const char* at, std::uint64_t n, const std::string& owner) {
    byte_reader r(at, at + n);
    T v = serializer<T>::read(r);
    if (r.left() != 0)
      shoal::detail::fatal_user(fmt::format(
          "{}: serializer::read left {} of a value's {} bytes unread", owner, r.left(), n));
    return v;
  }

 public:
  /// Frees every part. Once, when no core uses the container.
  void destroy() {
    global_free(base_);
    *this = object_arena();
  }

 private:
  template <class T>
  static void write_checked(const T& v, char* to, std::size_t n, const std::string& owner) {
    byte_writer w(to);
    serializer<T>::write(w, v);
    if (static_cast<std::size_t>(w.position() - to) != n)
      shoal::detail::fatal_user(fmt::format(
          "{}: serializer::write added {} bytes, but size() said {}", owner, w.position() - to, n));
  }

  // The counter and the capacity, so values start 16-byte aligned.
  static constexpr std::uint64_t header = 16;
  static std::uint64_t part_bytes(std::uint64_t bytes_per_core) noexcept {
    const auto bb = static_cast<std::uint64_t>(shoal::detail::g_info.block_bytes);
    return (header + bytes_per_core + bb - 1) / bb * bb;
  }
  static std::uint64_t align(std::uint64_t n) noexcept { return (n + 7) & ~std::uint64_t{7}; }

  // Core c's part: its blocks of the allocation, contiguous in its segment.
  char* part(int core) const {
    const auto bb = static_cast<std::int64_t>(shoal::detail::g_info.block_bytes);
    return (base_ + static_cast<std::int64_t>(core) * bb).local();
  }
  std::uint64_t& counter(int core) const { return *reinterpret_cast<std::uint64_t*>(part(core)); }
  std::uint64_t& capacity(int core) const {
    return *reinterpret_cast<std::uint64_t*>(part(core) + 8);
  }

  global_ptr<char> base_;
};

}  // namespace shoal::bcl
