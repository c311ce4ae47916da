// The one-sided layer (include/shoal/one_sided.hpp): address translation,
// the four backends and their set-up.
#include "shoal/one_sided.hpp"

#include "shoal/delegate.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/range_transfer.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include "memory/one_sided_copy.hpp"
#include "memory/one_sided_impl.hpp"
#include "tasks/scheduler.hpp"
#include "transport/transport.hpp"

namespace shoal::detail {

struct rma_request_state {
  std::vector<transport::rma_handle> handles;  // rma: one per piece
  std::size_t done = 0;                        // handles[0, done) completed
  future<void> am;                             // am: the range transfer
  bool has_am = false;
};

void rma_request_deleter::operator()(rma_request_state* s) const noexcept {
  if (s == nullptr) return;
  // Pending MPI operations would still write into (or read from) the
  // caller's buffer: finish them first.
  if (s->done < s->handles.size()) {
    rma_request r;
    r.s_.reset(s);
    r.wait();
    return;  // r's deleter frees s, now complete
  }
  if (s->has_am && !s->am.ready()) s->am.get();
  delete s;
}

namespace {

struct one_sided_state {
  one_sided_kind kind = one_sided_kind::direct;
  transport* net = nullptr;
  std::vector<char*> here;     // shm: rank r's heap as mapped in this process
  std::vector<char*> home;     // shm, rma: rank r's heap base in rank r's own address space
  std::size_t heap_bytes = 0;  // every rank's heap (same size everywhere)
  bool windows = false;        // shm or rma windows made (freed at stop)
  std::string auto_why;        // --one-sided auto or node: why it chose this backend
};

one_sided_state g_os;

constexpr const char* kind_names[] = {"auto", "direct", "shm", "rma", "am", "node"};

[[noreturn]] void refuse(transport& t, const std::string& why) {
  // Every rank sees the same configuration and job, so every rank comes
  // here; rank 0 says it once.
  if (t.rank() == 0) {
    std::fprintf(stderr, "shoal: error: %s\n", why.c_str());
    std::fflush(stderr);
  }
  t.barrier();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the launcher forward it
  t.abort(2);
  std::_Exit(2);  // not reached
}

/// Where one contiguous piece of a one-sided access lands.
struct place {
  int rank;
  int core;
  std::size_t offset;  // in the rank's heap (heap-relative), when in_heap
  char* raw;           // 2D: the address in the owner's process
  bool in_heap;
};

std::string describe(std::uint64_t bits) { return global_ptr<char>::from_bits(bits).to_string(); }

[[noreturn, gnu::cold]] void fail(const char* api, std::uint64_t bits, const std::string& why) {
  fatal_user(fmt::format("{} on {}: {}", api, describe(bits), why));
}

/// The place of the piece at `bits`, at most `want` bytes long; `len` gets
/// its length (to the end of its block for a linear pointer).
place locate(std::uint64_t bits, std::size_t want, std::size_t& len, const char* api) {
  if (bits == 0) fail(api, bits, "null pointer");
  const auto p = global_ptr<char>::from_bits(bits);
  const int core = p.core();
  if (core < 0 || core >= g_info.total_cores)
    fail(api, bits, fmt::format("core {} is outside the job ({} cores)", core, g_info.total_cores));
  const int rank = core / g_info.local_cores;
  const std::size_t seg = g_info.segment_bytes;
  if (p.is_linear()) {
    const auto bb = static_cast<std::uint64_t>(g_info.block_bytes);
    const auto n = static_cast<std::uint64_t>(g_info.total_cores);
    const std::uint64_t a = p.linear_address();
    const std::uint64_t block = a / bb;
    const std::uint64_t in_seg = (block / n) * bb + a % bb;
    len = std::min<std::size_t>(want, static_cast<std::size_t>(bb - a % bb));
    if (in_seg + len > seg)
      fail(api, bits,
           fmt::format("{} bytes at offset {} of core {}'s heap segment, which has {} bytes: "
                       "outside the global heap (not from global_alloc, or past its end)",
                       len, in_seg, core, seg));
    const std::size_t offset =
        static_cast<std::size_t>(core - rank * g_info.local_cores) * seg + in_seg;
    return {rank, core, offset, nullptr, true};
  }
  len = want;
  auto* raw = reinterpret_cast<char*>(bits & ((std::uint64_t{1} << 48) - 1));
  place pl{rank, core, 0, raw, false};
  if (!g_os.home.empty()) {
    const auto a = reinterpret_cast<std::uintptr_t>(raw);
    const auto h = reinterpret_cast<std::uintptr_t>(g_os.home[static_cast<std::size_t>(rank)]);
    if (a >= h && a + want <= h + g_os.heap_bytes) {
      pl.offset = a - h;
      pl.in_heap = true;
    }
  }
  if (!pl.in_heap && rank != g_info.rank &&
      (g_os.kind == one_sided_kind::shm || g_os.kind == one_sided_kind::rma))
    fail(api, bits,
         fmt::format("a 2D pointer into rank {}'s memory outside its global heap: --one-sided {} "
                     "reaches only the global heap of another process (use global_alloc, or "
                     "--one-sided am)",
                     rank, kind_names[static_cast<int>(g_os.kind)]));
  return pl;
}

/// The address in this process of a place reachable by plain loads and
/// stores (direct, shm, and this process's memory outside the rma window).
char* address_of(const place& pl) {
  if (!pl.in_heap) return pl.raw;
  if (g_os.kind == one_sided_kind::shm)
    return g_os.here[static_cast<std::size_t>(pl.rank)] + pl.offset;
  return g_info.heap_base + pl.offset;
}

bool through_window(const place& pl) { return g_os.kind == one_sided_kind::rma && pl.in_heap; }

void check_ready(const char* api) {
  SHOAL_CHECK_ON_CORE(api);
  if (g_os.net == nullptr && g_os.kind != one_sided_kind::direct)
    fatal_user(fmt::format("{} called before shoal::init()", api));
}

}  // namespace

void* plain_address_bytes(std::uint64_t bits, std::size_t bytes, const char* api) {
  check_ready(api);
  // A null pointer is misuse on every backend (one_sided.hpp's contract),
  // not "unreachable here": checked before the backend answers nullptr.
  if (bits == 0) fail(api, bits, "null pointer");
  if (g_os.kind != one_sided_kind::direct && g_os.kind != one_sided_kind::shm) return nullptr;
  std::size_t len = 0;
  const place pl = locate(bits, bytes, len, api);
  if (len < bytes)
    fail(api, bits,
         fmt::format("{} bytes from here cross the end of its block ({} bytes left in it)", bytes,
                     len));
  return address_of(pl);
}

namespace {

// Single-copy atomic copies of one naturally aligned word, so that a
// one-element rget/rput racing with atomics on the same word is not torn;
// anything else goes through copy_once (one_sided_copy.hpp: memcpy may
// store a word twice, undoing another core's write between the two).
void copy_word(void* to, const void* from, std::size_t bytes, shared_side shared) {
  const auto aligned = [bytes](const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
  };
  if ((bytes == 4 || bytes == 8) && aligned(to) && aligned(from)) {
    if (bytes == 4)
      __atomic_store_n(static_cast<std::uint32_t*>(to),
                       __atomic_load_n(static_cast<const std::uint32_t*>(from), __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    else
      __atomic_store_n(static_cast<std::uint64_t*>(to),
                       __atomic_load_n(static_cast<const std::uint64_t*>(from), __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    return;
  }
  copy_once(static_cast<char*>(to), static_cast<const char*>(from), bytes, shared);
}

template <class W>
W apply_direct(W* w, atomic_kind op, W operand, W compare) {
  std::atomic_ref<W> a(*w);
  switch (op) {
    case atomic_kind::cas: {
      W expected = compare;
      a.compare_exchange_strong(expected, operand, std::memory_order_seq_cst);
      return expected;  // the old value either way
    }
    case atomic_kind::add:
      return a.fetch_add(operand, std::memory_order_seq_cst);
    case atomic_kind::bor:
      return a.fetch_or(operand, std::memory_order_seq_cst);
    case atomic_kind::band:
      return a.fetch_and(operand, std::memory_order_seq_cst);
    case atomic_kind::bxor:
      return a.fetch_xor(operand, std::memory_order_seq_cst);
  }
  return 0;
}

// The same operation as a delegate runs it: plain loads and stores in
// handler context on the owner, atomic with respect to other delegates.
template <class W>
W apply_plain(W* w, atomic_kind op, W operand, W compare) {
  const W old = *w;
  switch (op) {
    case atomic_kind::cas:
      if (old == compare) *w = operand;
      break;
    case atomic_kind::add:
      *w = static_cast<W>(old + operand);
      break;
    case atomic_kind::bor:
      *w = old | operand;
      break;
    case atomic_kind::band:
      *w = old & operand;
      break;
    case atomic_kind::bxor:
      *w = old ^ operand;
      break;
  }
  return old;
}

}  // namespace

namespace {
/// Walks `bytes` from global address `bits` piece by piece (each piece
/// within one block of one core): pieces behind the RMA window go to
/// window(rank, offset, at, chunk) in chunks of at most 1 GiB (MPI counts
/// are ints), the others to direct(address, at, len); `at` is the piece's
/// offset from the start of the transfer.
template <class Window, class Direct>
void walk_places(std::uint64_t bits, std::size_t bytes, const char* api, Window window,
                 Direct direct) {
  for (std::size_t done = 0; done < bytes;) {
    std::size_t len = 0;
    const place pl = locate(bits + done, bytes - done, len, api);
    if (through_window(pl)) {
      for (std::size_t k = 0; k < len;) {
        const std::size_t chunk = std::min<std::size_t>(len - k, std::size_t{1} << 30);
        window(pl.rank, pl.offset + k, done + k, chunk);
        k += chunk;
      }
    } else {
      direct(address_of(pl), done, len);
    }
    done += len;
  }
}
}  // namespace

struct detail_access {
  static rma_request_state& state(rma_request& r) {
    if (!r.s_) r.s_.reset(new rma_request_state);
    return *r.s_;
  }
  static rma_request_state* peek(rma_request& r) { return r.s_.get(); }
};

rma_request async_get_bytes(std::uint64_t bits, void* dst, std::size_t elem, std::size_t n,
                            const char* api) {
  check_ready(api);
  rma_request r;
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(elem, n, &bytes)) fail(api, bits, "element count overflows");
  if (bytes == 0) return r;
  if (g_os.kind == one_sided_kind::am) {
    std::size_t len = 0;
    locate(bits, bytes, len, api);  // the checks; range_transfer does the rest
    if (len < bytes) locate(bits + bytes - 1, 1, len, api);
    auto& s = detail_access::state(r);
    s.am = async_range_read(bits, static_cast<std::byte*>(dst), static_cast<std::int64_t>(bytes));
    s.has_am = true;
    return r;
  }
  auto* out = static_cast<char*>(dst);
  walk_places(
      bits, bytes, api,
      [&](int rank, std::uint64_t offset, std::size_t at, std::size_t chunk) {
        auto& s = detail_access::state(r);
        s.handles.emplace_back();
        off_worker_stack(
            [&] { g_os.net->rma_get(rank, offset, out + at, chunk, s.handles.back()); });
      },
      [&](char* mem, std::size_t at, std::size_t len) {
        if (n == 1) {
          copy_word(out + at, mem, len, shared_side::src);
        } else {
          copy_once(out + at, mem, len, shared_side::src);
        }
      });
  return r;
}

rma_request async_put_bytes(std::uint64_t bits, const void* src, std::size_t elem, std::size_t n,
                            const char* api) {
  check_ready(api);
  rma_request r;
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(elem, n, &bytes)) fail(api, bits, "element count overflows");
  if (bytes == 0) return r;
  if (g_os.kind == one_sided_kind::am) {
    std::size_t len = 0;
    locate(bits, bytes, len, api);
    if (len < bytes) locate(bits + bytes - 1, 1, len, api);
    auto& s = detail_access::state(r);
    s.am = async_range_write(bits, static_cast<const std::byte*>(src),
                             static_cast<std::int64_t>(bytes));
    s.has_am = true;
    return r;
  }
  const auto* in = static_cast<const char*>(src);
  walk_places(
      bits, bytes, api,
      [&](int rank, std::uint64_t offset, std::size_t at, std::size_t chunk) {
        auto& s = detail_access::state(r);
        s.handles.emplace_back();
        off_worker_stack(
            [&] { g_os.net->rma_put(rank, offset, in + at, chunk, s.handles.back()); });
      },
      [&](char* mem, std::size_t at, std::size_t len) {
        if (n == 1) {
          copy_word(mem, in + at, len, shared_side::dst);
        } else {
          copy_once(mem, in + at, len, shared_side::dst);
        }
      });
  return r;
}

std::uint64_t atomic_bytes(std::uint64_t bits, int width, atomic_kind op, std::uint64_t operand,
                           std::uint64_t compare, const char* api) {
  check_ready(api);
  std::size_t len = 0;
  const place pl = locate(bits, static_cast<std::size_t>(width), len, api);
  const auto where = pl.in_heap ? pl.offset : reinterpret_cast<std::uintptr_t>(pl.raw);
  if (where % static_cast<std::size_t>(width) != 0)
    fail(api, bits,
         fmt::format("a {}-byte atomic needs an address aligned to {} bytes", width, width));
  if (g_os.kind == one_sided_kind::am) {
    const auto p = global_ptr<char>::from_bits(bits);
    if (width == 4)
      return delegate::call(pl.core, [p, op, operand, compare] {
        return apply_plain(p.reinterpret<std::uint32_t>().local(), op,
                           static_cast<std::uint32_t>(operand),
                           static_cast<std::uint32_t>(compare));
      });
    return delegate::call(pl.core, [p, op, operand, compare] {
      return apply_plain(p.reinterpret<std::uint64_t>().local(), op, operand, compare);
    });
  }
  if (through_window(pl)) {
    std::uint64_t result = 0;
    if (op == atomic_kind::cas) {
      off_worker_stack([&] {
        g_os.net->rma_compare_swap(pl.rank, pl.offset, &compare, &operand, &result, width);
      });
      return result;
    }
    static constexpr transport::rma_op ops[] = {transport::rma_op::no_op, transport::rma_op::sum,
                                                transport::rma_op::bor, transport::rma_op::band,
                                                transport::rma_op::bxor};
    rma_request r;
    auto& s = detail_access::state(r);
    s.handles.emplace_back();
    off_worker_stack([&] {
      g_os.net->rma_fetch_op(pl.rank, pl.offset, &operand, &result, width,
                             ops[static_cast<int>(op)], s.handles.back());
    });
    r.wait();
    return result;
  }
  char* a = address_of(pl);
  if (width == 4)
    return apply_direct(reinterpret_cast<std::uint32_t*>(a), op,
                        static_cast<std::uint32_t>(operand), static_cast<std::uint32_t>(compare));
  return apply_direct(reinterpret_cast<std::uint64_t*>(a), op, operand, compare);
}

// ---- Set-up.

/// What one rank tells the others for --one-sided auto.
struct shm_vote {
  std::uint64_t host = 0;  // hash of the host name
  std::int64_t free = 0;   // bytes free in /dev/shm (-1: unknown; -2: bad SHOAL_SHM_FREE_MB)
};

/// Free bytes in /dev/shm, where the MPI libraries put shared windows
/// (OpenMPI's osc_sm_backing_directory, MPICH's MPL shm). SHOAL_SHM_FREE_MB
/// replaces the measured figure (tests simulate a small /dev/shm with it).
std::int64_t shm_free_bytes() {
  if (const char* v = std::getenv("SHOAL_SHM_FREE_MB")) {
    char* end = nullptr;
    errno = 0;
    const long long mb = std::strtoll(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || mb < 0 || mb > (std::int64_t{1} << 40)) return -2;
    return static_cast<std::int64_t>(mb) << 20;
  }
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return -1;
  return static_cast<std::int64_t>(fs.f_bavail) * static_cast<std::int64_t>(fs.f_frsize);
}

std::string mib(std::int64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

/// How this rank's node-shared mapping went, as the ranks tell each other
/// (--one-sided node falls back to am when any is not `mapped`, naming the
/// first such rank and this cause).
struct shm_mapping {
  enum : std::int32_t { mapped, none, peer_missing, simulated, bad_knob } status = mapped;
  std::int32_t peer = -1;  // peer_missing: the rank whose segment this rank does not see
};

/// SHOAL_SHM_MAP_FAIL=1 makes this rank drop the node-shared mapping it
/// got, as if mapping had failed here (tests of --one-sided node's fall
/// back); 0 or unset: it keeps it. Read where a node-shared heap is made.
shm_mapping check_mapping(char* mine, const std::vector<char*>& here) {
  if (const char* v = std::getenv("SHOAL_SHM_MAP_FAIL"); v != nullptr) {
    const std::string_view t = v;
    if (t == "1") return {shm_mapping::simulated};
    if (t != "0") return {shm_mapping::bad_knob};
  }
  if (mine == nullptr) return {shm_mapping::none};
  for (std::size_t r = 0; r < here.size(); ++r)
    if (here[r] == nullptr) return {shm_mapping::peer_missing, static_cast<std::int32_t>(r)};
  return {};
}

std::string mapping_failure(const shm_mapping& m, std::size_t rank) {
  switch (m.status) {
    case shm_mapping::none:
      return fmt::format(
          "rank {} could not map the node-shared heap (the MPI library gave it no "
          "segment)",
          rank);
    case shm_mapping::peer_missing:
      return fmt::format(
          "rank {} could not map the node-shared heap (it sees no segment of rank "
          "{})",
          rank, m.peer);
    default:
      return fmt::format(
          "rank {} could not map the node-shared heap (SHOAL_SHM_MAP_FAIL=1 there: "
          "a simulated failed mapping)",
          rank);
  }
}

/// --one-sided auto: direct for one process, am for several. Not shm: a
/// node-shared heap is tmpfs memory, which gets no transparent huge pages
/// (shmem_enabled is "never" on stock kernels), and random access to a
/// large heap table lost 18-22% to TLB misses (gups 2^26 at 2 x 1); and
/// under shm one-sided atomics are not atomic with delegates on one word.
one_sided_kind choose_automatic(const transport& t) {
  g_os.auto_why = t.ranks() == 1 ? "one process"
                                 : "several processes (--one-sided node for the node-shared heap)";
  return t.ranks() == 1 ? one_sided_kind::direct : one_sided_kind::am;
}

/// --one-sided node: direct for one process; shm when every process of the
/// job is on one node and every one's /dev/shm holds all the node's heaps
/// (the node-shared heap runs one-sided operations as plain loads and
/// stores, 2-3x faster than delegates in isx and kmer); am otherwise. The
/// votes are gathered, so every rank takes the same choice (a rank that
/// cannot use shm makes the whole job fall back, it does not hang it).
one_sided_kind choose_node(transport& t, std::size_t heap_bytes) {
  if (t.ranks() == 1) {
    g_os.auto_why = "one process";
    return one_sided_kind::direct;
  }
  if (std::string_view(t.name()) != "mpi") {
    g_os.auto_why = fmt::format("the {} transport shares no memory between processes", t.name());
    return one_sided_kind::am;
  }
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  shm_vote mine{std::hash<std::string_view>{}(std::string_view(name)), shm_free_bytes()};
  std::vector<shm_vote> votes(static_cast<std::size_t>(t.ranks()));
  t.allgather(&mine, votes.data(), sizeof mine);
  for (std::size_t r = 0; r < votes.size(); ++r)
    if (votes[r].free == -2)
      refuse(t, fmt::format("SHOAL_SHM_FREE_MB on rank {}: expected a whole number of MiB "
                            "(0 .. 2^40)",
                            r));
  for (std::size_t r = 1; r < votes.size(); ++r)
    if (votes[r].host != votes[0].host) {
      g_os.auto_why = fmt::format("rank {} is on another node than rank 0", r);
      return one_sided_kind::am;
    }
  // Every rank's heap plus a page, all on this node.
  const auto need = static_cast<std::int64_t>((heap_bytes + 4096) * votes.size());
  for (std::size_t r = 0; r < votes.size(); ++r) {
    if (votes[r].free == -1) {
      g_os.auto_why = fmt::format("rank {} cannot read /dev/shm's free space", r);
      return one_sided_kind::am;
    }
    if (votes[r].free < need) {
      g_os.auto_why = fmt::format(
          "/dev/shm has {} free on rank {}, the {} heaps need {} (lower --heap-mb or "
          "enlarge /dev/shm for shm)",
          mib(votes[r].free), r, votes.size(), mib(need));
      return one_sided_kind::am;
    }
  }
  g_os.auto_why = fmt::format("all {} processes on one node, /dev/shm has {} free for {} of heaps",
                              votes.size(), mib(votes[0].free), mib(need));
  return one_sided_kind::shm;
}

char* one_sided_prepare(const config& cfg, transport& t, std::size_t heap_bytes) {
  g_os = one_sided_state{};
  g_os.net = &t;
  g_os.heap_bytes = heap_bytes;
  one_sided_kind kind = cfg.one_sided;
  if (kind == one_sided_kind::automatic) kind = choose_automatic(t);
  if (kind == one_sided_kind::node) kind = choose_node(t, heap_bytes);
  g_os.kind = kind;
  const bool has_mpi = std::string_view(t.name()) == "mpi";
  if (kind == one_sided_kind::direct && t.ranks() > 1)
    refuse(t, fmt::format("--one-sided direct reaches only the cores of one process, but this job "
                          "has {} processes; use shm (one node), rma or am",
                          t.ranks()));
  if ((kind == one_sided_kind::shm || kind == one_sided_kind::rma) && !has_mpi)
    refuse(t, fmt::format("--one-sided {} needs the mpi transport (start under mpirun, or add "
                          "--transport mpi)",
                          kind_names[static_cast<int>(kind)]));
  if (kind != one_sided_kind::shm) return nullptr;
  char* mine = t.make_shared_heap(heap_bytes, g_os.here);
  g_os.windows = true;
  // Every rank must see every segment; if one does not, under node all
  // fall back (the ranks tell each other how their mapping went), under
  // shm the job ends.
  const shm_mapping how = check_mapping(mine, g_os.here);
  std::vector<shm_mapping> hows(static_cast<std::size_t>(t.ranks()));
  t.allgather(&how, hows.data(), sizeof how);
  for (std::size_t r = 0; r < hows.size(); ++r)
    if (hows[r].status == shm_mapping::bad_knob)
      refuse(t, fmt::format("SHOAL_SHM_MAP_FAIL on rank {}: expected 0 or 1", r));
  if (how.status == shm_mapping::simulated) mine = nullptr;
  if (cfg.one_sided == one_sided_kind::node) {
    const auto bad = std::ranges::find_if(
        hows, [](const shm_mapping& m) { return m.status != shm_mapping::mapped; });
    if (bad == hows.end()) return mine;
    t.unexpose_heap();
    g_os.windows = false;
    g_os.here.clear();
    g_os.kind = one_sided_kind::am;
    g_os.auto_why = mapping_failure(*bad, static_cast<std::size_t>(bad - hows.begin()));
    return nullptr;
  }
  for (std::size_t r = 0; r < g_os.here.size(); ++r)
    if (mine == nullptr || g_os.here[r] == nullptr)
      refuse(t, fmt::format("--one-sided shm needs every process of the job on one node, but rank "
                            "{} shares no memory with rank {}; use rma or am",
                            r, t.rank()));
  return mine;
}

void one_sided_start(const config& cfg, transport& t, char* heap_base, std::size_t heap_bytes) {
  if (g_os.kind == one_sided_kind::rma) {
    if (!t.expose_heap(heap_base, heap_bytes))
      refuse(t, "--one-sided rma: this transport offers no RMA window");
    g_os.windows = true;
  }
  if (g_os.kind == one_sided_kind::shm || g_os.kind == one_sided_kind::rma) {
    g_os.home.assign(static_cast<std::size_t>(t.ranks()), nullptr);
    t.allgather(&heap_base, g_os.home.data(), sizeof(char*));
  }
  if (cfg.verbose && t.rank() == 0) {
    std::string how;
    switch (g_os.kind) {
      case one_sided_kind::direct:
        how = "plain loads, stores and atomic_ref";
        break;
      case one_sided_kind::shm:
        how = "the global heap in node-shared memory";
        break;
      case one_sided_kind::rma:
        how = fmt::format("MPI-3 RMA passive target, {} memory model", t.rma_model());
        break;
      default:
        how = "delegates to the owning core";
        break;
    }
    const bool chose =
        cfg.one_sided == one_sided_kind::automatic || cfg.one_sided == one_sided_kind::node;
    const std::string chosen =
        chose ? fmt::format(", chosen by --one-sided {}: {}",
                            kind_names[static_cast<int>(cfg.one_sided)], g_os.auto_why)
              : std::string();
    std::fprintf(stderr, "shoal: one-sided backend: %s (%s%s)\n",
                 kind_names[static_cast<int>(g_os.kind)], how.c_str(), chosen.c_str());
  }
}

void one_sided_stop() {
  // shm's window is left to MPI_Finalize: freeing it is collective, and a
  // rank that leaves the job early (returns from main while the others
  // run) would meet the others' traffic in that barrier (OpenMPI ended such
  // jobs with MPI_ERR_TRUNCATE instead of the departure protocol's message,
  // tests/apps/faults.cmake). The segment stays mapped until the next
  // init's make_shared_heap frees it (every rank of the node is there) or
  // MPI_Finalize does: one kept at a time, not one per init/finalize cycle.
  if (g_os.windows && g_os.net != nullptr && g_os.kind != one_sided_kind::shm)
    g_os.net->unexpose_heap();
  g_os = one_sided_state{};
}

}  // namespace shoal::detail

namespace shoal {

bool rma_request::test() {
  detail::rma_request_state* s = s_.get();
  if (s == nullptr) return true;
  while (s->done < s->handles.size()) {
    bool done = false;
    detail::off_worker_stack([&] { done = detail::g_os.net->rma_test(s->handles[s->done]); });
    if (!done) return false;
    ++s->done;
  }
  return !s->has_am || s->am.ready();
}

void rma_request::wait() {
  detail::rma_request_state* s = s_.get();
  if (s == nullptr) return;
  if (s->has_am) {
    if (!s->am.ready()) s->am.get();
    return;
  }
  while (!test()) {
    // Let other tasks of this core run (they may be what the target waits
    // for in the same process); in handler context, poll on.
    if (detail::tls_core >= 0 && detail::in_worker()) detail::yield_worker();
  }
}

one_sided_kind one_sided_backend() noexcept { return detail::g_os.kind; }
const char* one_sided_backend_name() noexcept {
  return detail::kind_names[static_cast<int>(detail::g_os.kind)];
}

void rflush() {
  SHOAL_CHECK_ON_CORE("shoal::rflush");
  if (detail::g_os.kind == one_sided_kind::rma && detail::g_os.windows)
    detail::off_worker_stack([] { detail::g_os.net->rma_flush_all(); });
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void rfence() {
  SHOAL_CHECK_ON_CORE("shoal::rfence");
  rflush();
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace shoal
