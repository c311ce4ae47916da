// hash_map<K, V>: BCL's hash table (thesis section 6.1, table 6.1) on the
// one-sided layer: open addressing over buckets spread on every core, each
// bucket guarded by a status word that cores change with remote atomics, so
// that an insert or a find needs no code to run on the bucket's owner.
//
//   auto m = shoal::bcl::hash_map<std::uint64_t, std::uint64_t>::make(/*per core=*/1 << 16);
//   m.insert(k, v);                          // any core: CAS, rput, rflush, fetch_xor
//   std::optional<std::uint64_t> x = m.find(k);        // fetch_or, rget, fetch_and
//   shoal::barrier();                        // an insert phase ends
//   x = m.find(k, shoal::bcl::hash_promise::find_only); // one rget
//   m.destroy();                             // once, when no core uses it any more
//
// Layout. Core c holds buckets 0 .. per_core-1 of its part, contiguous in
// its heap segment (one global_alloc, block-cyclic, addressed with linear
// pointers so every backend works). A key's hash picks its home core and a
// first slot there; probing is linear and stays in the home core's part
// (so an owner can insert its own keys with CPU instructions, promise
// local, and hash_map_buffer applies inserts on the owner alone). A bucket
// is {u64 status; K key; V value}, padded to a power of two that must not
// exceed --block-bytes (64 by default: K and V of 8 bytes each fit), so one
// rget reads a whole bucket. The handle is 24 bytes: copy it to every core.
//
// Bucket states (the status word's two low bits): free (0) -> reserved (1)
// -> ready (2); ready -> reserved -> ready while a value is updated. Bits
// 32..63 are reader bits: a find (promise atomic) sets one with fetch_or
// while it reads, so that no insert reserves the bucket under it. Keys
// never change once a bucket is ready (there is no erase), so an insert
// that collides reads the key without locking.
//
// Promises (hash_promise, per call; BCL's concurrency promises): what the
// caller promises about the OTHER operations that may run at the same time
// on this table, from any core.
//   atomic       (default) inserts and finds of any core. Always safe.
//   find_only    only finds run (a traversal phase, after the barrier that
//                ends the inserts). find is one rget.
//   insert_only  only inserts run. insert costs the same as atomic (a
//                concurrent insert of the same key still needs the bucket
//                lock). It exists so that code states its phases; a find
//                with this promise contradicts it and ends the job.
//   local        only local operations run, each on the caller's own
//                process's parts (any cores of any processes). The key's
//                home core must be on the caller's process. CPU atomics and
//                plain copies, no one_sided calls. Not atomic with respect to
//                the remote forms (under rma and am they are other atomics).
//
// Costs (A = one remote atomic, R / W = one remote read / write of a bucket
// or a value, F = rflush; measured A, R, W: bench/results/one_sided.txt;
// c = buckets probed after the first, each A + R for insert, 2A + R for
// find (atomic) or R (find_only); a reserved bucket is waited for):
//   insert (atomic, insert_only), new key     2A + W + F        (+ c(A + R))
//   insert, key present (value replaced)      3A + R + W + F    (+ c(A + R))
//   find (atomic)                             2A + R            (+ c(2A + R))
//   find (find_only)                          R                 (+ c R)
//     (direct and shm: a plain copy of the bucket, l, without the one_sided
//     layer's call; under shm through the mapping of the home's heap)
//   insert / find (local)                     CPU atomics and copies
//   add (counters), new key / key present     2A + W + F / 2A + R   (+ c(A + R))
//   add_existing, key present                 2A + R            (+ c(A + R))
//   make                                      a global_alloc (round trip to rank 0) and a
//                                             delegate to every core (zeroes its part)
//   destroy                                   a global_free
// A full part is probed to the end: per_core (A + R) before insert says full.
//   place_of, home                            CPU only: one hash of the key, two multiplies
//   owned(), then its insert / add / add_existing   CPU only: plain loads and stores on
//                                             the calling core's own part (hash_map_buffer)
//
// Path (bcl/path.hpp, SHOAL_BCL_PATH): the same calls run one-sided (the
// costs above) or as one delegate to the key's home core, which runs the
// method there with CPU atomics and copies (D each: insert, find atomic,
// find find_only). make() picks for the table (every copy of the handle
// follows it): forced, or under auto one-sided when 4A + W + R + F (an
// insert and a find) is below 2D, and for find_only one-sided when R is
// below D. path() and find_only_path() say what it picked; --verbose too.
// Promise local is CPU work on this process either way.
//
// Semantics. insert(k, v) of a key already present replaces its value and
// returns hash_insert::updated; of a new key, hash_insert::inserted; when
// the key's home core's part has no free bucket, hash_insert::full,
// changing nothing (other cores' parts may still have room: the capacity is
// per core). Concurrent inserts of one key from many cores leave one bucket
// with that key, one of the values, and exactly one caller told inserted.
// find(k) returns the value of a ready bucket holding k, or nullopt. An
// insert is visible to every find that starts after it returned (atomic and
// local forms); find_only needs the barrier that ends the insert phase.
//
// Keys are compared and hashed by their bytes: K needs unique object
// representations (no padding, no floats), checked at compile time. Keys
// are stored inline: a std::string key does not compile (hash it to a fixed
// width first).
//
// Values (bcl/object.hpp). A trivially copyable V is stored in the bucket.
// Any other V with a shoal::serializer (std::string, std::vector<U>, a user
// type) is stored as a serial_ptr {global_ptr<char>, u64 length}: insert
// writes the value's bytes into the inserting core's part of the table's
// arena (make's arena_bytes_per_core, default 1 MiB per core), completes
// them (under rma: rput and rflush), and only then runs the insert above
// with the serial_ptr as the value, so a find that sees the pointer reads
// complete bytes. find
// reads the bucket as above, then rgets the bytes (find_only likewise, on
// either path: the delegate returns the pointer, the caller reads the
// bytes). Bytes are written once and never changed; a replaced value's old
// bytes stay until destroy(), so a find racing an insert of its key returns
// the old or the new value whole, never a mix. Extra costs (n: serialised
// bytes; s(n) a copy of them):
//   insert of a serialised value              + s(n)    (+ W(n) + F under rma: own part)
//   find / find_only that finds the key       + R(n) + s(n)
//   make / destroy                            + a global_alloc / global_free
// Space: every insert, updates included, takes n bytes (rounded up to 8) of
// the inserting core's part until destroy(); arena_bytes_left() says what
// is left to the calling core. The handle grows by 8 bytes (32).
//
// Errors (the job ends naming the table and the cause): a serialised value
// that does not fit the inserting core's arena part (status 2, naming the
// table, the core and arena_bytes_per_core; raised before any bucket is
// touched, so every value inserted earlier stays readable); make with 0
// buckets per core or a bucket wider than --block-bytes; any use of a
// destroyed or default handle (copies made before destroy() cannot know);
// a local operation whose key lives on another process; a find_only find
// that meets a bucket being written (an insert ran, breaking the promise);
// an insert promising find_only or a find promising insert_only.
#pragma once

#include "shoal/bcl/hash_bytes.hpp"
#include "shoal/bcl/object.hpp"
#include "shoal/bcl/path.hpp"
#include "shoal/delegate.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/global_heap.hpp"
#include "shoal/one_sided.hpp"
#include "shoal/runtime.hpp"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

namespace shoal::bcl {

/// What other operations may run at the same time (see the header).
enum class hash_promise { atomic, find_only, insert_only, local };

/// The outcome of an insert.
enum class hash_insert { inserted, updated, full };

template <class K, class V>
class hash_map {
  static_assert(std::is_trivially_copyable_v<K>,
                "hash_map stores keys inline and compares them by their bytes: K must be "
                "trivially copyable (a std::string key is not supported; hash it to a fixed-width "
                "key)");
  static_assert(std::has_unique_object_representations_v<K>,
                "hash_map compares and hashes keys by their bytes: K must have no padding "
                "and no floating-point members");
  static_assert(storable<V>,
                "hash_map values are trivially copyable (stored inline) or have a "
                "shoal::serializer<V> (stored through a serial_ptr, bcl/object.hpp)");
  // What the bucket holds for a value: V itself, or a serial_ptr to its bytes.
  using S = stored_t<V>;
  static constexpr bool serial = serial_object<V>;
  struct no_arena {};
  using arena_t = std::conditional_t<serial, object_arena, no_arena>;
  struct entry {
    K key;
    S value;
  };
  struct unpadded {
    std::uint64_t status;
    entry e;
  };

 public:
  /// One bucket as stored: a power of two bytes, so buckets tile a block.
  struct alignas(std::bit_ceil(sizeof(unpadded))) bucket {
    std::uint64_t status;
    entry e;
  };
  static constexpr std::uint64_t free_state = 0, reserved_state = 1, ready_state = 2;
  static constexpr std::uint64_t state_mask = 3, readers_mask = 0xffffffff00000000ULL;

  /// A handle to nothing (every operation but valid() ends the job).
  hash_map() = default;

  /// Makes a table of `per_core` buckets on every core. Any task; blocking:
  /// one allocation and a delegate to each core, which zeroes its part.
  /// A serialised V also gets an arena of `arena_bytes_per_core` on every
  /// core (ignored for trivially copyable V).
  static hash_map make(std::uint64_t per_core,
                       std::uint64_t arena_bytes_per_core = default_arena_bytes_per_core) {
    SHOAL_CHECK_ON_CORE("shoal::bcl::hash_map::make");
    const auto bb = static_cast<std::uint64_t>(shoal::detail::g_info.block_bytes);
    if (per_core == 0) shoal::detail::fatal_user("hash_map::make: a table of 0 buckets per core");
    if (sizeof(bucket) > bb)
      shoal::detail::fatal_user(fmt::format(
          "hash_map::make: a bucket of {} bytes (status, key of {}, value of {}) is wider than "
          "--block-bytes {}; raise --block-bytes to {} or more",
          sizeof(bucket), sizeof(K), sizeof(S), bb, sizeof(bucket)));
    hash_map m;
    if constexpr (serial) {
      m.per_core_ = per_core;  // for name()
      m.arena_ = object_arena::make(arena_bytes_per_core, m.name());
    }
    const std::uint64_t per_block = bb / sizeof(bucket);
    const std::uint64_t blocks = (per_core + per_block - 1) / per_block;
    m.per_core_ = per_core;
    m.base_ = global_alloc<bucket>(static_cast<std::int64_t>(blocks * per_block) * cores());
    const path_mode mode = path_setting();
    for (int c = 0; c < cores(); ++c) {
      const global_ptr<bucket> first = m.at(c, 0);
      const std::uint64_t bytes = blocks * bb;
      // Reused heap memory is not zero; the owner clears its part, which is
      // contiguous in its segment. Every rank checks its SHOAL_BCL_PATH too.
      delegate::call(c, [first, bytes, mode, arena = m.arena_, c, arena_bytes_per_core] {
        path_same_everywhere(mode);
        std::memset(static_cast<void*>(first.local()), 0, bytes);
        if constexpr (serial) arena.reset_part(c, arena_bytes_per_core);
      });
    }
    m.choose_paths(mode);
    return m;
  }

  /// How insert and find (atomic) reach the buckets, and find (find_only).
  bcl::path path() const noexcept { return path_; }
  bcl::path find_only_path() const noexcept { return find_only_path_; }

  bool valid() const noexcept { return static_cast<bool>(base_); }
  std::uint64_t per_core() const noexcept { return per_core_; }
  /// Buckets in the whole table.
  std::uint64_t capacity() const noexcept {
    return per_core_ * static_cast<std::uint64_t>(cores());
  }

  /// The core whose part holds k (and where a local insert of k must run).
  int home(const K& k) const noexcept { return place_of(k).core; }

  /// Where k lives: its home core and the first slot probed in that core's
  /// part (both from one hash of k; probing goes on linearly from there).
  struct place {
    int core;
    std::uint64_t slot;
  };
  place place_of(const K& k) const noexcept {
    // Multiply-shift range reduction (Lemire), not division: the high word
    // of h * cores is the home, and the low word, uniform as h is, gives the
    // slot by the same reduction. Two multiplies where h % n and h / n %
    // per_core were two 64-bit divisions.
    __extension__ using u128 = unsigned __int128;  // GCC/Clang; __extension__: no -Wpedantic
    const u128 p = static_cast<u128>(hash_of(k)) * static_cast<std::uint64_t>(cores());
    const u128 q = static_cast<u128>(static_cast<std::uint64_t>(p)) * per_core_;
    return {static_cast<int>(p >> 64), static_cast<std::uint64_t>(q >> 64)};
  }

  /// Inserts k -> v, or replaces the value of k. Blocking (suspends on
  /// remote operations; waits while a bucket is being written).
  hash_insert insert(const K& k, const V& value, hash_promise p = hash_promise::atomic) {
    check("insert");
    if (p == hash_promise::local) check_local("insert", k);
    if (p == hash_promise::find_only)
      shoal::detail::fatal_user(fmt::format(
          "{}: insert with promise find_only (it promises that no insert runs)", name()));
    // A serialised value's bytes land (and may report a full arena) before
    // any bucket is touched.
    const S v = to_stored(value);
    if (p == hash_promise::local) return insert_with(local_access{}, k, v, place_of(k));
    if (path_ == bcl::path::delegate)
      return delegate::call(home(k), [m = *this, k, v] {
        return m.insert_with(owner_access{}, k, v, m.place_of(k));
      });
    return insert_with(remote_access{}, k, v, place_of(k));
  }

  /// The value of k, or nullopt. Blocking.
  std::optional<V> find(const K& k, hash_promise p = hash_promise::atomic) {
    check("find");
    if constexpr (serial) {
      const std::optional<S> s = find_stored(k, p);
      if (!s) return std::nullopt;
      return object_arena::get<V>(*s, name());
    } else {
      return find_stored(k, p);
    }
  }

  /// Bytes left for serialised values in the calling core's arena part
  /// (0 for trivially copyable V, which needs none).
  std::uint64_t arena_bytes_left() const {
    check("arena_bytes_left");
    if constexpr (serial) return arena_.left();
    return 0;
  }

  /// Counters (V an integer of 4 or 8 bytes): adds d to the value of k,
  /// or inserts k -> d when k is absent. Returns inserted, updated, or full
  /// (nothing changed). Adds of one key from many cores are atomic with
  /// each other (the value changes by a remote fetch_add, or a CPU one under
  /// promise local), so no count is lost; they are not atomic with an
  /// insert() replacing the same key's value at the same time. Costs: new
  /// key 2A + W + F (as insert); key present 2A + R (the CAS that finds the
  /// bucket taken, the key read, the fetch_add) (+ c(A + R)). Like insert,
  /// add and add_existing take the table's path (bcl/path.hpp): on the
  /// delegate path each is one delegate to the key's home core (D), so all
  /// four methods stay atomic with each other whichever path was chosen.
  hash_insert add(const K& k, const V& d,
                  hash_promise p = hash_promise::atomic) requires detail::atomic_word<V> {
    check("add");
    if (p == hash_promise::local) {
      check_local("add", k);
      return add_with(local_access{}, k, d, place_of(k));
    }
    if (p == hash_promise::find_only)
      shoal::detail::fatal_user(
          fmt::format("{}: add with promise find_only (it promises that no insert runs)", name()));
    if (path_ == bcl::path::delegate)
      return delegate::call(
          home(k), [m = *this, k, d] { return m.add_with(owner_access{}, k, d, m.place_of(k)); });
    return add_with(remote_access{}, k, d, place_of(k));
  }

  class owned_part;
  /// The calling core's own part, for operations on keys whose home is this
  /// core while no other operation of any core runs on the map
  /// (hash_map_buffer's flush applies its queue so). Any task on a core of
  /// the job; no communication (one address translation, here).
  owned_part owned() const {
    check("owned");
    return owned_part(*this);
  }

  /// Counters: adds d to the value of k when k is present (true); inserts
  /// nothing when it is absent (false). Atomic with add and add_existing as
  /// add is. Costs: per bucket probed A + R (an atomic read of the status,
  /// the key read), then A (fetch_add); a reserved bucket is waited for.
  bool add_existing(const K& k, const V& d,
                    hash_promise p = hash_promise::atomic) requires detail::atomic_word<V> {
    check("add_existing");
    if (p == hash_promise::local) {
      check_local("add_existing", k);
      return add_existing_with(local_access{}, k, d, place_of(k));
    }
    if (p == hash_promise::find_only)
      shoal::detail::fatal_user(fmt::format(
          "{}: add_existing with promise find_only (it promises that no insert runs)", name()));
    if (path_ == bcl::path::delegate)
      return delegate::call(home(k), [m = *this, k, d] {
        return m.add_existing_with(owner_access{}, k, d, m.place_of(k));
      });
    return add_existing_with(remote_access{}, k, d, place_of(k));
  }

  /// Calls fn(key, value&) for every ready bucket of the calling core's
  /// part (CPU only; the value may be changed in place). Only while no other
  /// operation runs on that part (between barriers): it reads buckets
  /// without their state machine.
  template <class F>
  void for_each_local(F&& fn) {
    static_assert(!serial,
                  "hash_map::for_each_local: values stored through a serial_ptr are not "
                  "handed out in place; use find");
    check("for_each_local");
    const int me = mycore();
    for (std::uint64_t slot = 0; slot < per_core_; ++slot) {
      bucket* b = at(me, slot).local();
      if ((b->status & state_mask) == ready_state) fn(static_cast<const K&>(b->e.key), b->e.value);
    }
  }

  /// Frees the table. Once, when no core uses it; this handle becomes
  /// invalid (copies do not know).
  void destroy() {
    check("destroy");
    global_free(base_);
    if constexpr (serial) arena_.destroy();
    *this = hash_map();
  }

  /// The bucket at `slot` of core `core`'s part (for tests and tools).
  global_ptr<bucket> at(int core, std::uint64_t slot) const noexcept {
    const std::uint64_t per_block =
        static_cast<std::uint64_t>(shoal::detail::g_info.block_bytes) / sizeof(bucket);
    const std::uint64_t index = (slot / per_block * static_cast<std::uint64_t>(cores()) +
                                 static_cast<std::uint64_t>(core)) *
                                    per_block +
                                slot % per_block;
    return base_ + static_cast<std::int64_t>(index);
  }

 private:
  S to_stored(const V& v) const {
    if constexpr (serial)
      return arena_.put(v, name());
    else
      return v;
  }

  // find() up to what the bucket holds.
  std::optional<S> find_stored(const K& k, hash_promise p) const {
    switch (p) {
      case hash_promise::find_only: {
        const place first = place_of(k);
        if (find_only_path_ == bcl::path::delegate)
          return delegate::call(first.core, [m = *this, k, first] {
            return m.find_only_with(k, first, [](global_ptr<bucket> b) { return *b.local(); });
          });
        if (find_only_plain_) {
          // rget under direct and shm is plain loads of memory this process
          // maps: the same copy, without the one_sided layer's translation
          // per probe (the home part is contiguous, as exclusive_access
          // says; another process's part through the shm mapping). Ordered
          // by the barrier that ended the insert phase (find_only's promise).
          const bucket* const part = on_this_process(first.core)
                                         ? at(first.core, 0).local()
                                         : shoal::plain_address(at(first.core, 0));
          return find_only_with(k, first, [part](std::uint64_t slot) { return part[slot]; });
        }
        return find_only_with(k, first, [](global_ptr<bucket> b) { return rget(b); });
      }
      case hash_promise::local:
        check_local("find", k);
        return find_with<local_access>(k);
      case hash_promise::insert_only:
        shoal::detail::fatal_user(fmt::format(
            "{}: find with promise insert_only (it promises that only inserts run)", name()));
      default:
        if (path_ == bcl::path::delegate)
          return delegate::call(home(k),
                                [m = *this, k] { return m.template find_with<owner_access>(k); });
        return find_with<remote_access>(k);
    }
  }

  // The two ways to touch a bucket: one_sided calls, or CPU atomics and
  // copies on this process's memory (promise local). Same state machine.
  struct remote_access {
    static global_ptr<bucket> locate(const hash_map& m, int c, std::uint64_t slot) {
      return m.at(c, slot);
    }
    static std::uint64_t cas(global_ptr<bucket> b, std::uint64_t e, std::uint64_t d) {
      return compare_and_swap(status(b), e, d);
    }
    static std::uint64_t fetch_or(global_ptr<bucket> b, std::uint64_t x) {
      return shoal::fetch_or(status(b), x);
    }
    static void fetch_and(global_ptr<bucket> b, std::uint64_t x) { shoal::fetch_and(status(b), x); }
    static void fetch_xor(global_ptr<bucket> b, std::uint64_t x) { shoal::fetch_xor(status(b), x); }
    static K key(global_ptr<bucket> b) { return rget(field<K>(b, offsetof(entry, key))); }
    static entry read(global_ptr<bucket> b) { return rget(field<entry>(b, 0)); }
    static void write(global_ptr<bucket> b, const entry& e) { rput(field<entry>(b, 0), e); }
    static void write_value(global_ptr<bucket> b, const S& v) {
      rput(field<S>(b, offsetof(entry, value)), v);
    }
    static void add_value(global_ptr<bucket> b, const V& d) {
      (void)shoal::fetch_add(field<V>(b, offsetof(entry, value)), d);
    }
    // The entry lands before the status says ready (rma completes puts only here).
    static void flush() { rflush(); }
    static void pause() { yield(); }
  };
  struct local_access {
    static global_ptr<bucket> locate(const hash_map& m, int c, std::uint64_t slot) {
      return m.at(c, slot);
    }
    static std::atomic_ref<std::uint64_t> word(global_ptr<bucket> b) {
      return std::atomic_ref<std::uint64_t>(b.local()->status);
    }
    static std::uint64_t cas(global_ptr<bucket> b, std::uint64_t e, std::uint64_t d) {
      word(b).compare_exchange_strong(e, d);
      return e;
    }
    static std::uint64_t fetch_or(global_ptr<bucket> b, std::uint64_t x) {
      return word(b).fetch_or(x);
    }
    static void fetch_and(global_ptr<bucket> b, std::uint64_t x) { word(b).fetch_and(x); }
    static void fetch_xor(global_ptr<bucket> b, std::uint64_t x) { word(b).fetch_xor(x); }
    // Plain copies are ordered by the status word's seq_cst atomics: an
    // entry written while reserved is visible to whoever then sees ready.
    static K key(global_ptr<bucket> b) { return b.local()->e.key; }
    static entry read(global_ptr<bucket> b) { return b.local()->e; }
    static void write(global_ptr<bucket> b, const entry& e) { b.local()->e = e; }
    static void write_value(global_ptr<bucket> b, const S& v) { b.local()->e.value = v; }
    static void add_value(global_ptr<bucket> b, const V& d) {
      std::atomic_ref<V>(b.local()->e.value).fetch_add(d);
    }
    static void flush() {}
    static void pause() { yield(); }
  };
  // The home core alone on its part, no other operation on the map running
  // (hash_map_buffer's flush): plain loads and stores, no lock prefix. A
  // locked instruction waits for its cache miss before the next one starts;
  // plain ones let the misses of consecutive entries overlap.
  struct exclusive_access {
    // The home core's part is contiguous in its segment (a symmetric
    // block-cyclic allocation whose element size divides the block), so a
    // bucket is the part's first bucket plus its slot: one address
    // translation per owned_part, where at(c, slot).local() per access cost
    // two divisions and a translation each (4 per insert; callgrind).
    bucket* locate(const hash_map& m, int c, std::uint64_t slot) const {
      SHOAL_ASSERT(part + slot == m.at(c, slot).local(),
                   "hash_map: an owned operation off its home core, or a part not contiguous");
      (void)m, (void)c;
      return part + slot;
    }
    bucket* part;  // the home core's first bucket (translated once per owned_part)
    static std::uint64_t& word(bucket* b) { return b->status; }
    static std::uint64_t cas(bucket* b, std::uint64_t e, std::uint64_t d) {
      const std::uint64_t old = word(b);
      if (old == e) word(b) = d;
      return old;
    }
    static std::uint64_t fetch_or(bucket* b, std::uint64_t x) {
      const std::uint64_t old = word(b);
      word(b) = old | x;
      return old;
    }
    static void fetch_and(bucket* b, std::uint64_t x) { word(b) &= x; }
    static void fetch_xor(bucket* b, std::uint64_t x) { word(b) ^= x; }
    static K key(bucket* b) { return b->e.key; }
    static entry read(bucket* b) { return b->e; }
    static void write(bucket* b, const entry& e) { b->e = e; }
    static void write_value(bucket* b, const S& v) { b->e.value = v; }
    static void add_value(bucket* b, const V& d) { b->e.value += d; }
    static void flush() {}
    // Nobody else holds a bucket: a reserved one is a broken promise.
    static void pause() {
      shoal::detail::fatal_user(
          "hash_map: an owned (exclusive) operation met a bucket held by another operation: "
          "something else used the map during a hash_map_buffer flush");
    }
  };
  // The delegate path: local_access run by the home core in handler context,
  // which cannot yield. Handlers of one core run one at a time and each
  // finishes its method, so a handler meets a reserved bucket or its own
  // reader bit only if a local-promise operation runs at the same time,
  // which promise local excludes (only local operations run). Were one to
  // run on another core anyway, it finishes without waiting, so spinning
  // ends; one suspended on this core would not: that breaks the promise.
  struct owner_access : local_access {
    static void pause() { std::this_thread::yield(); }
  };

  template <class F>
  static global_ptr<F> field(global_ptr<bucket> b, std::size_t offset) {
    return (b.template reinterpret<std::byte>() +
            static_cast<std::int64_t>(offsetof(bucket, e) + offset))
        .template reinterpret<F>();
  }
  static global_ptr<std::uint64_t> status(global_ptr<bucket> b) {
    return b.template reinterpret<std::uint64_t>();
  }

  static std::uint64_t hash_of(const K& k) noexcept {
    return shoal::detail::bcl_hash_bytes(&k, sizeof k);
  }
  static bool same(const K& a, const K& b) noexcept { return std::memcmp(&a, &b, sizeof a) == 0; }

  // BCL's insert (table 6.1a): reserve a free bucket by CAS, write, flush,
  // flip reserved -> ready with fetch_xor (reader bits may have come and
  // must stay). A ready bucket's key is read without a lock (keys never
  // change); if it is k, the bucket is locked ready -> reserved to replace
  // the value. A reserved bucket may be becoming k: wait for it.
  template <class Access>
  hash_insert insert_with(const Access& acc, const K& k, const S& v, place first) const {
    std::uint64_t slot = first.slot;
    for (std::uint64_t probed = 0; probed < per_core_;) {
      const auto b = acc.locate(*this, first.core, slot);
      const std::uint64_t old = Access::cas(b, free_state, reserved_state);
      const std::uint64_t state = old & state_mask;
      if (old == free_state) {
        Access::write(b, entry{k, v});
        Access::flush();
        Access::fetch_xor(b, reserved_state ^ ready_state);
        return hash_insert::inserted;
      }
      if (state == ready_state) {
        if (!same(Access::key(b), k)) {
          slot = slot + 1 == per_core_ ? 0 : slot + 1;
          ++probed;
          continue;
        }
        if (Access::cas(b, ready_state, reserved_state) == ready_state) {
          Access::write_value(b, v);
          Access::flush();
          Access::fetch_xor(b, reserved_state ^ ready_state);
          return hash_insert::updated;
        }
      }
      // Reserved (being written), or free / ready with readers inside: the
      // holder finishes without waiting for us, so yielding makes progress.
      Access::pause();
    }
    return hash_insert::full;
  }

  // BCL's find (table 6.1c): hold a reader bit (fetch_or) so no insert
  // reserves the bucket, wait while it is reserved, read, drop the bit.
  template <class Access>
  std::optional<S> find_with(const K& k) const {
    const place first = place_of(k);
    const int c = first.core;
    const std::uint64_t bit = std::uint64_t{1} << (32 + mycore() % 32);
    std::uint64_t slot = first.slot;
    for (std::uint64_t probed = 0; probed < per_core_;) {
      const auto b = Access::locate(*this, c, slot);
      std::uint64_t old = Access::fetch_or(b, bit);
      if (old & bit) {  // another core with the same reader bit holds it
        Access::pause();
        continue;
      }
      while ((old & state_mask) == reserved_state) {
        Access::pause();
        old = Access::fetch_or(b, 0);  // an atomic read of the status
      }
      if ((old & state_mask) == free_state) {
        Access::fetch_and(b, ~bit);
        return std::nullopt;  // probing ends at a free bucket
      }
      const entry e = Access::read(b);
      Access::fetch_and(b, ~bit);
      if (same(e.key, k)) return e.value;
      slot = slot + 1 == per_core_ ? 0 : slot + 1;
      ++probed;
    }
    return std::nullopt;
  }

  // add: insert's probe; a ready bucket holding k takes the addition by
  // fetch_add on its value, without the lock (its key never changes, and
  // adds commute).
  template <class Access>
  hash_insert add_with(const Access& acc, const K& k, const V& d, place first) const {
    std::uint64_t slot = first.slot;
    for (std::uint64_t probed = 0; probed < per_core_;) {
      const auto b = acc.locate(*this, first.core, slot);
      const std::uint64_t old = Access::cas(b, free_state, reserved_state);
      if (old == free_state) {
        Access::write(b, entry{k, d});
        Access::flush();
        Access::fetch_xor(b, reserved_state ^ ready_state);
        return hash_insert::inserted;
      }
      if ((old & state_mask) == ready_state) {
        if (same(Access::key(b), k)) {
          Access::add_value(b, d);
          return hash_insert::updated;
        }
        slot = slot + 1 == per_core_ ? 0 : slot + 1;
        ++probed;
        continue;
      }
      Access::pause();  // reserved (maybe becoming k), or free with readers inside
    }
    return hash_insert::full;
  }

  // add_existing: probing as find, but the status is read with an atomic
  // that sets nothing (fetch_or 0), since the value is changed by atomics.
  template <class Access>
  bool add_existing_with(const Access& acc, const K& k, const V& d, place first) const {
    std::uint64_t slot = first.slot;
    for (std::uint64_t probed = 0; probed < per_core_;) {
      const auto b = acc.locate(*this, first.core, slot);
      const std::uint64_t state = Access::fetch_or(b, 0) & state_mask;
      if (state == free_state) return false;
      if (state == reserved_state) {
        Access::pause();
        continue;
      }
      if (same(Access::key(b), k)) {
        Access::add_value(b, d);
        return true;
      }
      slot = slot + 1 == per_core_ ? 0 : slot + 1;
      ++probed;
    }
    return false;
  }

  // Table 6.1d: no insert runs, so one read of the whole bucket is enough
  // (rget, or a copy on the home core: the promise leaves no writer).
  // `read` takes the bucket's global_ptr, or its slot in core c's part.
  template <class Read>
  std::optional<S> find_only_with(const K& k, place first, const Read& read) const {
    const int c = first.core;
    std::uint64_t slot = first.slot;
    for (std::uint64_t probed = 0; probed < per_core_; ++probed) {
      bucket b;
      if constexpr (std::is_invocable_v<const Read&, std::uint64_t>)
        b = read(slot);
      else
        b = read(at(c, slot));
      const std::uint64_t state = b.status & state_mask;
      if (state == free_state) return std::nullopt;
      if (state == reserved_state)
        shoal::detail::fatal_user(fmt::format(
            "{}: find with promise find_only met a bucket being written (core {}, slot {}): an "
            "insert runs concurrently, which the promise excludes; end the insert phase with a "
            "barrier or use hash_promise::atomic",
            name(), c, slot));
      if (same(b.e.key, k)) return b.e.value;
      slot = slot + 1 == per_core_ ? 0 : slot + 1;
    }
    return std::nullopt;
  }

  std::string name() const {
    if constexpr (serial)
      return fmt::format("hash_map<{}-byte key, serialised value>({} buckets per core)", sizeof(K),
                         per_core_);
    else
      return fmt::format("hash_map<{}-byte key, {}-byte value>({} buckets per core)", sizeof(K),
                         sizeof(V), per_core_);
  }
  void check(const char* op) const {
    SHOAL_CHECK_ON_CORE("shoal::bcl::hash_map");
    if (!valid())
      shoal::detail::fatal_user(fmt::format(
          "hash_map::{} on a table that was destroyed or never made (default-constructed)", op));
  }
  void check_local(const char* op, const K& k) const {
    const int c = home(k);
    if (rank_of(c) != myrank())
      shoal::detail::fatal_user(fmt::format(
          "{}: {} with promise local of a key whose home core {} is on rank {}, called on rank "
          "{}; use hash_promise::atomic",
          name(), op, c, rank_of(c), myrank()));
  }

  static bool on_this_process(int core) noexcept {
    const auto& info = shoal::detail::g_info;
    return static_cast<unsigned>(core - info.rank_base) < static_cast<unsigned>(info.local_cores);
  }

  // bcl/path.hpp: the decision, once per table, made by the making core.
  void choose_paths(path_mode mode) {
    const one_sided_kind backend = one_sided_backend();
    find_only_plain_ = backend == one_sided_kind::direct || backend == one_sided_kind::shm;
    std::string why = "forced by SHOAL_BCL_PATH";
    if (mode == path_mode::automatic) {
      const op_costs c = path_costs(status(at(path_probe_core(), 0)));
      const double one = 4 * c.A + c.W + c.R + c.F, two_d = 2 * c.D;
      path_ = choose_path(mode, one, two_d);
      find_only_path_ = choose_path(mode, c.R, c.D);
      why = fmt::format("auto, costs {}: {}; find_only R = {:.0f} ns, D = {:.0f} ns", c.source,
                        path_comparison("insert+find", "4A+W+R+F", one, 2, c.D), c.R, c.D);
    } else {
      path_ = find_only_path_ = choose_path(mode, 0, 0);
    }
    if (shoal::current_config().verbose)
      fmt::print(stderr, "shoal: bcl {} made on core {}: path {}, find_only path {} ({})\n", name(),
                 mycore(), path_name(path_), path_name(find_only_path_), why);
  }

  global_ptr<bucket> base_;  // linear: core c's part is its local blocks of this allocation
  std::uint64_t per_core_ = 0;
  bcl::path path_ = bcl::path::onesided;
  bcl::path find_only_path_ = bcl::path::onesided;
  // direct or shm: a one-sided find_only of a bucket is a plain copy (set by
  // make; the same on every core of the job).
  bool find_only_plain_ = false;
  [[no_unique_address]] arena_t arena_;  // serialised V: where the bytes are
};

template <class K, class V>
class hash_map<K, V>::owned_part {
 public:
  /// Starts loading the bucket at `slot` (place_of(k).slot of a key of this
  /// core) into this core's cache: a hint, nothing else.
  void prefetch(std::uint64_t slot) const noexcept { __builtin_prefetch(access_.part + slot, 1); }
  /// insert, add and add_existing of a key k whose place_of(k) is {this
  /// core, slot}: plain loads and stores, nothing checked (debug builds
  /// assert the home). Cost: l (insert into a free slot: two stores).
  hash_insert insert(const K& k, const V& value, std::uint64_t slot) const {
    const S v = map_.to_stored(value);
    // A free first slot (most entries, a table filling up) takes the entry
    // and turns ready at once: what insert_with does there (free -> reserved,
    // write, -> ready) in two stores, nobody else looking.
    if (bucket* const b = access_.part + slot; b->status == free_state) {
      b->e = entry{k, v};
      b->status = ready_state;
      return hash_insert::inserted;
    }
    return map_.insert_with(access_, k, v, place{me_, slot});
  }
  hash_insert add(const K& k, const V& d,
                  std::uint64_t slot) const requires detail::atomic_word<V> {
    return map_.add_with(access_, k, d, place{me_, slot});
  }
  bool add_existing(const K& k, const V& d,
                    std::uint64_t slot) const requires detail::atomic_word<V> {
    return map_.add_existing_with(access_, k, d, place{me_, slot});
  }

 private:
  friend class hash_map;
  explicit owned_part(const hash_map& m)
      : map_(m), access_{m.at(mycore(), 0).local()}, me_(mycore()) {}
  hash_map map_;
  exclusive_access access_;
  int me_;
};

}  // namespace shoal::bcl
