// What every distributed container shares: the per-process table that maps
// a container's id to this process's storage for it, the owner hash, the
// receive-side guard and the errors that name a container.
//
// A container handle (map, set, counting_set, ...) is small and trivially
// copyable, so closures, handlers and other processes carry it; it names
// its storage by a 64-bit id rather than pointing to it (a pointer means
// nothing on another process). Each process makes its storage for an id on
// first use (a message arriving, or a task using the handle), one slot per
// local core. destroy() removes it on every process and leaves a tombstone,
// so a stale copy of the handle is named when used, not silently given
// fresh storage. Ids carry the job's init epoch: a handle kept across
// finalize()/init() is named too.
//
// Cost: a use looks the id up in a one-entry thread-local cache (two
// compares); a miss takes the process's mutex.
#pragma once

#include "shoal/detail/check.hpp"
#include "shoal/detail/handler_id.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/runtime.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace shoal::containers_detail {

/// This process's part of one container: one T per local core, each on its
/// own cache lines.
struct storage_base {
  virtual ~storage_base() = default;
};

template <class T>
struct per_core_storage final : storage_base {
  struct alignas(64) padded {
    T value{};
  };
  explicit per_core_storage(int local_cores)
      : slots(std::make_unique<padded[]>(static_cast<std::size_t>(local_cores))) {}
  T& local() noexcept {
    return slots[static_cast<std::size_t>(detail::tls_core - detail::g_info.rank_base)].value;
  }
  T& at(int local_core) noexcept { return slots[static_cast<std::size_t>(local_core)].value; }
  std::unique_ptr<padded[]> slots;
};

/// Ends the job with a message naming the container ("shoal::map #<id>").
[[noreturn, gnu::cold, gnu::noinline]] inline void fatal_container(const char* kind,
                                                                   std::uint64_t id,
                                                                   const std::string& what) {
  detail::fatal_user(fmt::format("{} #{:x}: {}", kind, id, what));
}

/// Bumped whenever a container's storage goes away (destroy(), a new
/// job): every thread's caches of storage and parts compare against it. A
/// namespace-scope variable rather than a member, so that a cache hit does
/// not pass the registry's function-local static guard.
inline std::atomic<std::uint64_t> g_registry_generation{1};

/// The process-wide table of container storage.
class registry {
 public:
  static registry& instance() {
    static registry r;
    return r;
  }

  /// A fresh id, unique in the job: the init epoch, the calling core, and
  /// a sequence number of this process (not of the thread: each run() may
  /// start its cores on fresh threads). Never 0.
  static std::uint64_t new_id() {
    static std::atomic<std::uint64_t> seq{0};
    SHOAL_CHECK(detail::tls_core >= 0, "a shoal container is created outside shoal::run");
    const std::uint64_t n = seq.fetch_add(1, std::memory_order_relaxed) + 1;
    return ((detail::g_init_epoch & 0xffffU) << 48) |
           (static_cast<std::uint64_t>(detail::tls_core) << 24) | (n & 0xffffffU);
  }

  /// The storage of container `id` on this process (made on first use).
  template <class S>
  S& get(std::uint64_t id, const char* kind) {
    struct cache_entry {
      std::uint64_t id = 0;
      std::uint64_t generation = ~std::uint64_t{0};
      storage_base* storage = nullptr;
    };
    thread_local cache_entry cache;
    if (cache.id == id && cache.generation == g_registry_generation.load(std::memory_order_acquire))
        [[likely]]
      return *static_cast<S*>(cache.storage);
    return *static_cast<S*>(get_slow(id, kind, cache.id, cache.generation, cache.storage, [] {
      return std::make_unique<S>(detail::g_info.local_cores);
    }));
  }

  /// Removes container `id`'s storage from this process; later uses of the
  /// id are fatal errors naming `kind`.
  void forget(std::uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    reset_if_new_job();
    live_.erase(id);
    dead_.insert(id);
    g_registry_generation.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  // Out of line: inlined, its lock and error paths made every caller of
  // get() a full function (callgrind: 33 instructions per container
  // operation for a cache hit); the hit is now a few inline compares.
  template <class Make>
  [[gnu::noinline, gnu::cold]] storage_base* get_slow(std::uint64_t id, const char* kind,
                                                      std::uint64_t& cache_id,
                                                      std::uint64_t& cache_generation,
                                                      storage_base*& cache_storage, Make make) {
    if (id == 0) fatal_container(kind, id, "used through a default-constructed handle");
    std::lock_guard<std::mutex> lock(mutex_);
    reset_if_new_job();
    if ((id >> 48) != (detail::g_init_epoch & 0xffffU))
      fatal_container(kind, id,
                      "used in a later job than the one that created it (a handle kept across "
                      "shoal::finalize()/init())");
    if (dead_.contains(id)) fatal_container(kind, id, "used after destroy()");
    auto [it, fresh] = live_.try_emplace(id);
    if (fresh) it->second = make();
    cache_id = id;
    cache_generation = g_registry_generation.load(std::memory_order_acquire);
    cache_storage = it->second.get();
    return it->second.get();
  }

  void reset_if_new_job() {
    if (epoch_ == detail::g_init_epoch) return;
    live_.clear();
    dead_.clear();
    epoch_ = detail::g_init_epoch;
    g_registry_generation.fetch_add(1, std::memory_order_acq_rel);
  }

  std::mutex mutex_;
  std::unordered_map<std::uint64_t, std::unique_ptr<storage_base>> live_;
  std::unordered_set<std::uint64_t> dead_;
  std::uint64_t epoch_ = 0;
};

template <class S, class Slot>
[[gnu::noinline]] Slot* local_part_slow(std::uint64_t id, const char* kind, std::uint64_t& cache_id,
                                        std::uint64_t& cache_generation, int& cache_core,
                                        Slot*& cache_slot) {
  if (detail::tls_core < 0) detail::fatal_outside_run(kind);
  // The generation before the lookup: a destroy() meanwhile leaves the
  // entry stale, never a stale entry marked current.
  const std::uint64_t generation = g_registry_generation.load(std::memory_order_acquire);
  Slot* slot = &registry::instance().get<S>(id, kind).local();
  cache_id = id;
  cache_generation = generation;
  cache_core = detail::tls_core;
  cache_slot = slot;
  return slot;
}

/// The calling core's slot of container `id`'s storage S (a
/// per_core_storage), through a one-entry thread-local cache of the slot
/// itself: a hit is three compares (id, core, generation) and no registry
/// access. Off a shoal core it ends the job naming `kind`.
/// Inlined (the hit): every container operation asks for it, and the call
/// cost ~11 instructions of counting_set's ~105 per remote insert.
template <class S>
[[gnu::always_inline]] inline auto& local_part(std::uint64_t id, const char* kind) {
  using slot_type = std::remove_reference_t<decltype(std::declval<S&>().local())>;
  struct entry {
    std::uint64_t id = 0;
    std::uint64_t generation = 0;  // never current: the generation starts at 1
    int core = -1;
    slot_type* slot = nullptr;
  };
  thread_local entry cache;
  if (cache.id == id && cache.core == detail::tls_core &&
      cache.generation == g_registry_generation.load(std::memory_order_acquire)) [[likely]]
    return *cache.slot;
  return *local_part_slow<S>(id, kind, cache.id, cache.generation, cache.core, cache.slot);
}

/// Depth of container operations running on this thread: a task that calls
/// a container op while none runs may apply it to its own core's part at
/// once (no handler holds a reference into that part); inside one, ops to
/// this core go by message.
inline thread_local int tls_applying = 0;

struct applying_guard {
  applying_guard() noexcept { ++tls_applying; }
  ~applying_guard() { --tls_applying; }
  applying_guard(const applying_guard&) = delete;
  applying_guard& operator=(const applying_guard&) = delete;
};

/// Spreads a hash over the cores (std::hash of an integer is the identity;
/// scale_hash takes the top bits): the high half folded into the low, times
/// an odd constant (Fibonacci-style hashing). flat_table's home slot folds
/// the same way but multiplies by the golden ratio: a different multiplier,
/// so that a core's keys still spread over all its slots. Against murmur3's
/// finaliser (two multiplies, three shifts: counting_set_u64 at 1 x 2 took
/// 8 more instructions per insert, callgrind), simulated over 2^20 keys on
/// 2, 3 and 4 cores: the same balance (largest core within 0.3% of the
/// mean) for sequential, random, strided (x 3, x 1024) and shifted (<< 32,
/// << 40) keys, and probes per insert in the cores' tables of 1.3-3.3
/// against 1.9-3.5 (more only for multiples of 3 on 3 and 4 cores: 2.6
/// and 3.0 against 2.5 and 2.6; random keys 3.3 with either).
inline std::uint64_t mix_hash(std::uint64_t h) noexcept {
  return (h ^ (h >> 32)) * 0xd6e8feb86659fd93ULL;
}

/// Scales a mixed hash to [0, n) by its top bits (a multiply-high: a
/// fraction of the 64-bit range times n), where `h % n` would divide.
inline std::uint64_t scale_hash(std::uint64_t h, std::uint64_t n) noexcept {
  __extension__ using u128 = unsigned __int128;  // -Wpedantic: a GCC/Clang extension
  return static_cast<std::uint64_t>((static_cast<u128>(h) * n) >> 64);
}

/// A function of the program as a 32-bit distance from the handler anchor
/// (the same in every process of the job, whatever the load address).
template <class Fn>
std::int32_t to_op_id(Fn* fn) noexcept {
  return static_cast<std::int32_t>(detail::to_code_offset(fn));
}
template <class Fn>
Fn* from_op_id(std::int32_t id) noexcept {
  return detail::from_code_offset<Fn>(id);
}

}  // namespace shoal::containers_detail
