// The UPC queues paper's microbenchmark (Jose et al., PGAS 2011, section
// 7.2): every core but 0 enqueues an item to core 0, which, on dequeuing
// it, enqueues it back to its sender; each sender waits for its reply
// before sending the next. Three designs of the same exchange, in one run:
//
//   queue   shoal::queue<item> (containers/queue.hpp), coalescing off: one
//           aggregated-message record per item, appended by the receiving
//           core's handler (the paper's UPC queues).
//   lock    a lock-protected shared buffer per core (the paper's "UPC
//           locks"): a lock word, a count and P item slots in each core's
//           memory; a sender takes the receiver's lock with
//           compare_and_swap, reads the count, puts its item in the next
//           slot, puts count + 1, rflush, releases the lock; the receiver
//           takes its own lock to empty its buffer.
//   notify  a per-sender notification array (the paper's "resource
//           replication"): one item slot and one flag word per sender in
//           each core's memory; a sender puts its item in its slot, rflush,
//           then fetch_adds its flag; the receiver polls its flags.
// The baselines are built on shoal's one-sided operations (one_sided.hpp)
// on regions in the global heap, under the job's --one-sided backend:
// direct loads, stores and atomics on one process; across processes `shm`
// (node-shared memory, what UPC threads on one node share) or the default
// `am` (each operation a delegate, i.e. an active message, to the owner).
//
//   [mpirun -np R] queue-rate --cores C --block-bytes 4096 [--items N]
//       [--designs queue,lock,notify] [--one-sided shm --transport mpi]
//
// Each core's region takes one --block-bytes block (4096 holds 29 cores;
// a block too small is refused with the size it needs).
// Items are 128 bytes (the paper's Figure 4). Per design, one line on rank 0:
//   upc_queues shape=RxC cores=P design=D items=N bytes=128 us_per_op=... ops_per_s=...
// us_per_op: the run's wall time / N, the average time of one enqueue-dequeue
// round trip as each sender sees it; ops_per_s: the (P - 1) N round trips
// through core 0 per second. Every reply is checked (its sender and sequence
// number); a wrong or missing one ends the program with status 1.
#include <shoal/collective.hpp>
#include <shoal/containers/queue.hpp>
#include <shoal/global_ptr.hpp>
#include <shoal/one_sided.hpp>
#include <shoal/shoal.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_args.hpp"

namespace {

using u64 = std::uint64_t;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// One 128-byte item: who sent it, its sequence number, padding.
struct item {
  std::int32_t sender = 0;
  std::int32_t seq = 0;
  char pad[120] = {};
};
static_assert(sizeof(item) == 128);
constexpr std::size_t item_words = sizeof(item) / sizeof(u64);

std::atomic<int> g_errors{0};

void expect_reply(const item& r, int me, int seq) {
  if (r.sender != 0 || r.seq != seq) {
    std::fprintf(stderr, "queue-rate: core %d got reply (%d, %d), wanted (0, %d)\n", me, r.sender,
                 r.seq, seq);
    g_errors.fetch_add(1);
  }
}

// ---- queue: shoal::queue ----

void run_queue(shoal::queue<item> q, int items) {
  const int me = shoal::mycore();
  const int p = shoal::cores();
  if (me == 0) {
    for (int n = 0; n < (p - 1) * items; ++n) {
      const auto v = q.dequeue(60s);
      if (!v) {
        std::fprintf(stderr, "queue-rate: core 0 waited 60 s for item %d\n", n);
        g_errors.fetch_add(1);
        return;
      }
      item r = *v;
      const int to = r.sender;
      r.sender = 0;
      q.enqueue(to, r);
    }
    return;
  }
  for (int i = 0; i < items; ++i) {
    item x;
    x.sender = me;
    x.seq = i;
    q.enqueue(0, x);
    const auto r = q.dequeue(60s);
    if (!r) {
      std::fprintf(stderr, "queue-rate: core %d waited 60 s for reply %d\n", me, i);
      g_errors.fetch_add(1);
      return;
    }
    expect_reply(*r, me, i);
  }
}

// ---- the shared-memory layouts of the two baselines ----
//
// Each core's region, in words: [0] lock, [1] count, [2 .. 8) unused (the
// slots start on a cache line of their own), [8 .. 8 + P) one flag per
// sender, then P item slots. The regions live in the global heap (so that
// every --one-sided backend, shm and rma included, reaches them), one
// --block-bytes block per core: block c of a global_alloc is core c's.

std::size_t region_words(int p) { return 8 + static_cast<std::size_t>(p) * (1 + item_words); }

struct layout {
  int p;
  static shoal::global_ptr<u64> lock(shoal::global_ptr<u64> base) { return base; }
  static shoal::global_ptr<u64> count(shoal::global_ptr<u64> base) { return base + 1; }
  static shoal::global_ptr<u64> flag(shoal::global_ptr<u64> base, int s) { return base + 8 + s; }
  shoal::global_ptr<u64> slot(shoal::global_ptr<u64> base, int s) const {
    return base + 8 + p + static_cast<std::int64_t>(s) * static_cast<std::int64_t>(item_words);
  }
};

void put_item(shoal::global_ptr<u64> at, const item& x) {
  u64 w[item_words];
  std::memcpy(w, &x, sizeof x);
  shoal::rput(at, w, item_words);
}
item get_item(shoal::global_ptr<u64> at) {
  u64 w[item_words];
  shoal::rget(at, w, item_words);
  item x;
  std::memcpy(&x, w, sizeof x);
  return x;
}

// ---- lock: a lock-protected shared buffer ----

void acquire(shoal::global_ptr<u64> lock) {
  while (shoal::compare_and_swap(lock, u64{0}, u64{1}) != 0) shoal::yield();
}
void release(shoal::global_ptr<u64> lock) { (void)shoal::compare_and_swap(lock, u64{1}, u64{0}); }

/// Appends x to the buffer at `base` under its lock.
void locked_append(const layout& l, shoal::global_ptr<u64> base, const item& x) {
  acquire(layout::lock(base));
  const u64 n = shoal::rget(layout::count(base));
  put_item(l.slot(base, static_cast<int>(n)), x);
  shoal::rput(layout::count(base), n + 1);
  shoal::rflush();
  release(layout::lock(base));
}

/// Takes every item of this core's buffer at `base` under its lock.
void locked_take(const layout& l, shoal::global_ptr<u64> base, std::vector<item>& out) {
  acquire(layout::lock(base));
  const u64 n = shoal::rget(layout::count(base));
  for (u64 k = 0; k < n; ++k) out.push_back(get_item(l.slot(base, static_cast<int>(k))));
  if (n != 0) {
    shoal::rput(layout::count(base), u64{0});
    shoal::rflush();
  }
  release(layout::lock(base));
}

void run_lock(const std::vector<shoal::global_ptr<u64>>& bases, int items) {
  const int me = shoal::mycore();
  const int p = shoal::cores();
  const layout l{p};
  std::vector<item> got;
  if (me == 0) {
    int served = 0;
    while (served < (p - 1) * items) {
      got.clear();
      locked_take(l, bases[0], got);
      if (got.empty()) shoal::yield();
      for (item r : got) {
        const int to = r.sender;
        r.sender = 0;
        locked_append(l, bases[static_cast<std::size_t>(to)], r);
        ++served;
      }
    }
    return;
  }
  for (int i = 0; i < items; ++i) {
    item x;
    x.sender = me;
    x.seq = i;
    locked_append(l, bases[0], x);
    got.clear();
    while (got.empty()) {
      locked_take(l, bases[static_cast<std::size_t>(me)], got);
      if (got.empty()) shoal::yield();
    }
    expect_reply(got[0], me, i);
  }
}

// ---- notify: a per-sender notification array ----

/// The flag word `s` of this core's region, read without a message.
u64 local_flag(shoal::global_ptr<u64> base, int s) {
  return std::atomic_ref<u64>(*layout::flag(base, s).local()).load(std::memory_order_acquire);
}

void notify_put(const layout& l, shoal::global_ptr<u64> base, int slot, const item& x) {
  put_item(l.slot(base, slot), x);
  shoal::rflush();
  (void)shoal::fetch_add(layout::flag(base, slot), u64{1});
}

void run_notify(const std::vector<shoal::global_ptr<u64>>& bases, int items) {
  const int me = shoal::mycore();
  const int p = shoal::cores();
  const layout l{p};
  const shoal::global_ptr<u64> mine = bases[static_cast<std::size_t>(me)];
  if (me == 0) {
    std::vector<u64> seen(static_cast<std::size_t>(p), 0);
    int served = 0;
    while (served < (p - 1) * items) {
      bool any = false;
      for (int s = 1; s < p; ++s) {  // poll every sender's flag
        if (local_flag(mine, s) == seen[static_cast<std::size_t>(s)]) continue;
        ++seen[static_cast<std::size_t>(s)];
        item r = *reinterpret_cast<const item*>(l.slot(mine, s).local());
        r.sender = 0;
        notify_put(l, bases[static_cast<std::size_t>(s)], 0, r);
        ++served;
        any = true;
      }
      if (!any) shoal::yield();
    }
    return;
  }
  for (int i = 0; i < items; ++i) {
    item x;
    x.sender = me;
    x.seq = i;
    notify_put(l, bases[0], me, x);
    while (local_flag(mine, 0) != static_cast<u64>(i) + 1) shoal::yield();
    expect_reply(*reinterpret_cast<const item*>(l.slot(mine, 0).local()), me, i);
  }
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  int items = 1000;
  std::string designs = "queue,lock,notify";
  bench_args::read_flags("queue-rate", argc, argv, {"--items", "--designs"},
                         [&](const bench_args::value& v) {
                           if (v.flag == "--items")
                             items = static_cast<int>(v.whole(1, 10'000'000));
                           else
                             designs = v.text;
                         });
  if (shoal::cores() < 2) {
    std::fprintf(stderr, "queue-rate: the job needs 2 cores or more (--cores)\n");
    shoal::finalize();
    return 2;
  }
  const auto block = static_cast<std::size_t>(shoal::current_config().block_bytes);
  if (region_words(shoal::cores()) * 8 > block) {
    std::fprintf(stderr,
                 "queue-rate: a core's region of %zu bytes does not fit one --block-bytes block "
                 "(%zu bytes); raise --block-bytes (4096 holds 29 cores)\n",
                 region_words(shoal::cores()) * 8, block);
    shoal::finalize();
    return 2;
  }
  const int p = shoal::cores();
  const std::string shape =
      std::to_string(shoal::ranks()) + "x" + std::to_string(p / shoal::ranks());
  shoal::run([&] {
    const auto report = [&](const char* design, double seconds) {
      std::printf(
          "upc_queues shape=%s cores=%d design=%s items=%d bytes=%zu us_per_op=%.2f "
          "ops_per_s=%.0f\n",
          shape.c_str(), p, design, items, sizeof(item), seconds / items * 1e6,
          static_cast<double>(p - 1) * items / seconds);
      std::fflush(stdout);
    };
    // Runs body(start) on every core; body sets up, then calls start(),
    // which passes a barrier and starts core 0's clock; the wall time ends
    // once every core has passed the barrier after body.
    const auto timed = [&](const auto& body) {
      clock_type::time_point t0;
      clock_type::time_point* at = &t0;
      shoal::on_all_cores([at, body] {
        body([at] {
          shoal::barrier();
          if (shoal::mycore() == 0) *at = clock_type::now();
        });
        shoal::barrier();
      });
      return std::chrono::duration<double>(clock_type::now() - t0).count();
    };
    for (std::size_t at = 0; at <= designs.size();) {
      const std::size_t end = std::min(designs.find(',', at), designs.size());
      const std::string d = designs.substr(at, end - at);
      at = end + 1;
      if (d == "queue") {
        const auto q = shoal::queue<item>::create({.coalesce = false});
        report("queue", timed([q, items](const auto& start) {
                 start();
                 run_queue(q, items);
               }));
        auto owned = q;
        owned.destroy();
      } else if (d == "lock" || d == "notify") {
        const bool lock = d == "lock";
        const auto heap = shoal::global_alloc<u64>(static_cast<std::int64_t>(p) *
                                                   (shoal::current_config().block_bytes / 8));
        report(d.c_str(), timed([items, lock, heap](const auto& start) {
                 const int me = shoal::mycore();
                 const auto block_words =
                     static_cast<std::int64_t>(shoal::current_config().block_bytes / 8);
                 std::vector<shoal::global_ptr<u64>> bases;
                 for (int c = 0; c < shoal::cores(); ++c) bases.push_back(heap + c * block_words);
                 // The heap may hold an earlier run's words: each core clears its own.
                 const shoal::global_ptr<u64> mine = bases[static_cast<std::size_t>(me)];
                 std::fill_n(mine.local(), region_words(shoal::cores()), u64{0});
                 start();
                 if (lock) {
                   run_lock(bases, items);
                 } else {
                   run_notify(bases, items);
                 }
               }));
        shoal::global_free(heap);
      } else {
        std::fprintf(stderr, "queue-rate: unknown design '%s' in --designs (queue, lock, notify)\n",
                     d.c_str());
        g_errors.fetch_add(1);
        break;
      }
    }
  });
  const int errors = g_errors.load();
  shoal::finalize();
  return errors == 0 ? 0 : 1;
}
