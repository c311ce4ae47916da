// Synchronisation objects: completion_event, future/promise, full_empty,
// mutex, condition_variable and global_completion_event, on one core and
// across cores.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <vector>

#include "test_support.hpp"

namespace {

using shoal_test::cores_test;
using shoal_test::padded_counter;
constexpr auto relaxed = std::memory_order_relaxed;

/// The core "next to" the calling one (itself on one core).
int other_core() { return (shoal::mycore() + 1) % shoal::cores(); }

// -------------------------------------------------------- completion_event

class completion_events : public cores_test {};

TEST_P(completion_events, EnrollCompleteWaitOnOneCore) {
  std::int64_t count_before_wait = -1;
  std::int64_t done_at_wake = -1;
  std::int64_t after_zero_wait = -1;
  run([&] {
    shoal::completion_event ev;
    EXPECT_EQ(ev.count(), 0);
    EXPECT_EQ(ev.home(), 0);
    ev.wait();  // count 0: returns at once
    after_zero_wait = ev.count();
    ev.enroll(10);
    ev.enroll();
    count_before_wait = ev.count();
    std::int64_t done = 0;
    auto* d = &done;
    auto* e = &ev;
    for (int i = 0; i < 11; ++i) {
      shoal::spawn([d, e] {
        shoal::yield();
        ++*d;
        e->complete();
      });
    }
    ev.wait();
    done_at_wake = done;
  });
  EXPECT_EQ(after_zero_wait, 0);
  EXPECT_EQ(count_before_wait, 11);
  EXPECT_EQ(done_at_wake, 11);
}

constexpr int completions_per_core = 100;

TEST_P(completion_events, CompleteFromOtherCoresByMessage) {
  std::int64_t done_at_wake = -1;
  std::atomic<std::int64_t> done{0};
  std::atomic<int> bad_core{0};
  run([&] {
    shoal::completion_event ev(static_cast<std::int64_t>(completions_per_core) * shoal::cores());
    auto* e = &ev;
    auto* d = &done;
    auto* bc = &bad_core;
    for (int c = 0; c < shoal::cores(); ++c) {
      shoal::send(c, [e, d, bc, c] {
        for (int i = 0; i < completions_per_core; ++i) {
          shoal::spawn([e, d, bc, c] {
            if (shoal::mycore() != c) bc->fetch_add(1);
            d->fetch_add(1);
            e->complete();  // off its home core this is one message
          });
        }
      });
    }
    ev.wait();
    done_at_wake = done.load();
  });
  EXPECT_EQ(bad_core.load(), 0);
  EXPECT_EQ(done_at_wake, static_cast<std::int64_t>(completions_per_core) * ncores());
}

TEST_P(completion_events, SeveralWaitersAllWake) {
  constexpr int waiters = 20;
  int woken = 0;
  run([&] {
    shoal::completion_event ev(1);
    shoal::completion_event all_woken(waiters);
    auto* e = &ev;
    auto* aw = &all_woken;
    int* w = &woken;
    for (int i = 0; i < waiters; ++i) {
      shoal::spawn([e, aw, w] {
        e->wait();
        ++*w;
        aw->complete();
      });
    }
    // Complete from another core's handler: the message comes back here.
    shoal::send(other_core(), [e] { e->complete(); });
    all_woken.wait();
  });
  EXPECT_EQ(woken, waiters);
}

TEST_P(completion_events, CompleteWithCountAndReuse) {
  std::vector<std::int64_t> seen;
  run([&] {
    shoal::completion_event ev;
    for (int round = 1; round <= 5; ++round) {
      ev.enroll(round * 3);
      auto* e = &ev;
      const int r = round;
      shoal::send(other_core(), [e, r] {
        e->complete(r);
        e->complete(r * 2);
      });
      ev.wait();
      seen.push_back(ev.count());
    }
  });
  EXPECT_EQ(seen, std::vector<std::int64_t>(5, 0));
}

SHOAL_TEST_CORES(completion_events);

// ---------------------------------------------------------- future/promise

class futures : public cores_test {};

TEST_P(futures, SetOnTheSameCore) {
  int value = 0;
  bool ready_before = true;
  bool ready_after = false;
  int again = 0;
  run([&] {
    auto pf_pair = shoal::make_promise_pair<int>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    ready_before = f.ready();
    EXPECT_EQ(p.home(), shoal::mycore());
    p.set_value(42);
    ready_after = f.ready();
    value = f.get();
    again = f.get();  // get() may be called repeatedly
  });
  EXPECT_FALSE(ready_before);
  EXPECT_TRUE(ready_after);
  EXPECT_EQ(value, 42);
  EXPECT_EQ(again, 42);
}

TEST_P(futures, SetFromAnotherCoresTaskAndHandler) {
  int from_task = 0;
  double from_handler = 0;
  run([&] {
    auto p1f1_pair = shoal::make_promise_pair<int>();
    const auto p1 = p1f1_pair.first;
    auto& f1 = p1f1_pair.second;
    auto p2f2_pair = shoal::make_promise_pair<double>();
    const auto p2 = p2f2_pair.first;
    auto& f2 = p2f2_pair.second;
    shoal::send(other_core(), [p1] {
      // From a task, after it suspended once.
      shoal::spawn([p1] {
        shoal::yield();
        p1.set_value(shoal::mycore() + 100);
      });
    });
    shoal::send(other_core(), [p2] { p2.set_value(2.5); });  // from a handler
    from_handler = f2.get();
    from_task = f1.get();
  });
  EXPECT_EQ(from_task, 100 + (ncores() > 1 ? 1 : 0));
  EXPECT_EQ(from_handler, 2.5);
}

TEST_P(futures, ManyWaitersOnOneFuture) {
  constexpr int waiters = 16;
  std::vector<int> got;
  run([&] {
    auto pf_pair = shoal::make_promise_pair<int>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    shoal::completion_event done(waiters);
    auto* fp = &f;
    auto* d = &done;
    auto* g = &got;
    for (int i = 0; i < waiters; ++i) {
      shoal::spawn([fp, d, g] {
        g->push_back(fp->get());
        d->complete();
      });
    }
    shoal::send(other_core(), [p] { p.set_value(7); });
    done.wait();
  });
  EXPECT_EQ(got, std::vector<int>(waiters, 7));
}

TEST_P(futures, ThenChainsThreeLevels) {
  long result = 0;
  std::vector<int> order;
  run([&] {
    auto pf_pair = shoal::make_promise_pair<int>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    auto* o = &order;
    auto last = std::move(f)
                    .then([o](int x) {
                      o->push_back(1);
                      return x + 1;
                    })
                    .then([o](int x) {
                      o->push_back(2);
                      return x * 2.5;
                    })
                    .then([o](double d) {
                      o->push_back(3);
                      return static_cast<long>(d) * 10;
                    });
    EXPECT_FALSE(last.ready());
    shoal::send(other_core(), [p] { p.set_value(3); });
    result = last.get();
  });
  EXPECT_EQ(result, 100);  // ((3 + 1) * 2.5) * 10
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST_P(futures, ThenOnVoidFuturesAndVoidResults) {
  int then_value = 0;
  bool void_then_ran = false;
  run([&] {
    auto p2f2_pair = shoal::make_promise_pair<void>();
    const auto p2 = p2f2_pair.first;
    auto& f2 = p2f2_pair.second;
    auto f3 = std::move(f2).then([] { return 5; });
    p2.set_value();
    then_value = f3.get();

    auto p4f4_pair = shoal::make_promise_pair<int>();
    const auto p4 = p4f4_pair.first;
    auto& f4 = p4f4_pair.second;
    bool* vr = &void_then_ran;
    auto f5 = std::move(f4).then([vr](int x) { *vr = x == 9; });
    shoal::send(other_core(), [p4] { p4.set_value(9); });
    f5.get();
  });
  EXPECT_EQ(then_value, 5);
  EXPECT_TRUE(void_then_ran);
}

TEST_P(futures, VoidFutureFromAnotherCore) {
  bool ready_before = true;
  bool waited = false;
  int waiters_woken = 0;
  run([&] {
    auto pf_pair = shoal::make_promise_pair<void>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    ready_before = f.ready();
    shoal::completion_event done(3);
    auto* fp = &f;
    auto* d = &done;
    int* w = &waiters_woken;
    for (int i = 0; i < 3; ++i) {
      shoal::spawn([fp, d, w] {
        fp->get();  // void get() waits too
        ++*w;
        d->complete();
      });
    }
    shoal::send(other_core(), [p] { p.set_value(); });
    f.wait();
    waited = f.ready();
    done.wait();
  });
  EXPECT_FALSE(ready_before);
  EXPECT_TRUE(waited);
  EXPECT_EQ(waiters_woken, 3);
}


TEST_P(futures, ReadyFutureAndLargeValue) {
  struct big {
    std::int64_t v[16];
  };
  std::int64_t ready_value = 0;
  std::int64_t big_sum = 0;
  run([&] {
    auto r = shoal::make_ready_future<std::int64_t>(-5);
    ready_value = r.ready() ? r.get() : 0;
    auto pf_pair = shoal::make_promise_pair<big>();
    const auto p = pf_pair.first;
    auto& f = pf_pair.second;
    shoal::send(other_core(), [p] {
      big b{};
      for (int i = 0; i < 16; ++i) b.v[i] = i * 1000;
      p.set_value(b);
    });
    const big b = f.get();
    for (auto x : b.v) big_sum += x;
  });
  EXPECT_EQ(ready_value, -5);
  EXPECT_EQ(big_sum, 120 * 1000);
}

TEST_P(futures, AsyncDelegateFutures) {
  std::vector<std::int64_t> got;
  bool cas_yes = false;
  bool cas_no = true;
  int call_core = -1;
  bool void_call = false;
  run([&] {
    auto a = shoal::global_alloc<std::int64_t>(64);
    // An element on the last core (remote unless cores == 1).
    const auto p = a + (shoal::cores() - 1) * 8;
    shoal::delegate::write(p, std::int64_t{10});
    auto f1 = shoal::delegate::async_fetch_add(p, std::int64_t{5});
    auto f2 = shoal::delegate::async_fetch_add(p, std::int64_t{7});
    auto f3 = shoal::delegate::async_read(p);
    auto f4 = shoal::delegate::async_compare_and_swap(p, std::int64_t{22}, std::int64_t{0});
    auto f5 = shoal::delegate::async_compare_and_swap(p, std::int64_t{22}, std::int64_t{1});
    auto f6 = shoal::delegate::async_call(shoal::cores() - 1, [] { return shoal::mycore(); });
    auto f7 = shoal::delegate::async_call(shoal::cores() - 1, [] {});
    got = {f1.get(), f2.get(), f3.get(), shoal::delegate::read(p)};
    cas_yes = f4.get();
    cas_no = f5.get();
    call_core = f6.get();
    f7.wait();
    void_call = f7.ready();
    shoal::global_free(a);
  });
  // Messages to one core run in order: +5, +7, read, CAS 22->0, CAS fails.
  EXPECT_EQ(got, (std::vector<std::int64_t>{10, 15, 22, 0}));
  EXPECT_TRUE(cas_yes);
  EXPECT_FALSE(cas_no);
  EXPECT_EQ(call_core, ncores() - 1);
  EXPECT_TRUE(void_call);
}

TEST_P(futures, ThousandsOfOutstandingFutures) {
  constexpr int n = 5000;
  std::int64_t sum = 0;
  std::int64_t expected = 0;
  run([&] {
    std::vector<shoal::future<std::int64_t>> fs;
    fs.reserve(n);
    for (int i = 0; i < n; ++i) {
      const int c = i % shoal::cores();
      fs.push_back(
          shoal::delegate::async_call(c, [i] { return std::int64_t{i} * shoal::mycore(); }));
      expected += std::int64_t{i} * c;
    }
    for (auto& f : fs) sum += f.get();
  });
  EXPECT_EQ(sum, expected);
}

// A future's state returns to its home core's pool, which lives until
// finalize(), so a future may be destroyed on the main thread after run().
TEST_P(futures, DestroyedAfterRunReturnsItsStateSafely) {
  shoal::init(config());
  {
    shoal::future<std::int64_t> f;
    std::int64_t got = -1;
    shoal_test::run_once([&] {
      auto table = shoal::global_alloc<std::int64_t>(64);
      shoal::delegate::write(table + 17, std::int64_t{42});
      f = shoal::delegate::async_read(table + 17);
      got = f.get();
      shoal::global_free(table);
    });
    EXPECT_EQ(got, 42);
  }  // f's state is released here, on the main thread
  shoal::finalize();
}

SHOAL_TEST_CORES(futures);

// -------------------------------------------------------------- full_empty

class full_empty_words : public cores_test {};

TEST_P(full_empty_words, ProducerConsumerInOrder) {
  constexpr int n = 10'000;
  std::vector<int> received;
  received.reserve(n);
  run([&] {
    shoal::full_empty<int> word;
    shoal::completion_event done(2);
    auto* w = &word;
    auto* d = &done;
    auto* r = &received;
    shoal::spawn([w, d, r] {  // consumer first: it must wait for the first value
      for (int i = 0; i < n; ++i) r->push_back(w->read_fe());
      d->complete();
    });
    shoal::spawn([w, d] {
      for (int i = 0; i < n; ++i) w->write_ef(i);
      d->complete();
    });
    done.wait();
  });
  ASSERT_EQ(received.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(received[static_cast<std::size_t>(i)], i);
}

TEST_P(full_empty_words, PingPong) {
  constexpr int n = 10'000;
  int mismatches = 0;
  int last = -1;
  run([&] {
    shoal::full_empty<int> ping;
    shoal::full_empty<int> pong;
    shoal::completion_event done(1);
    auto* pi = &ping;
    auto* po = &pong;
    auto* d = &done;
    shoal::spawn([pi, po, d] {
      for (int i = 0; i < n; ++i) po->write_ef(pi->read_fe() + 1);
      d->complete();
    });
    for (int i = 0; i < n; ++i) {
      ping.write_ef(2 * i);
      const int v = pong.read_fe();
      if (v != 2 * i + 1) ++mismatches;
      last = v;
    }
    done.wait();
  });
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(last, 2 * (n - 1) + 1);
}

TEST_P(full_empty_words, ReadFfKeepsFullAndClearEmpties) {
  std::vector<int> reads;
  bool full_after_ff = false;
  bool full_after_clear = true;
  run([&] {
    shoal::full_empty<int> word(5);
    reads.push_back(word.read_ff());
    reads.push_back(word.read_ff());
    full_after_ff = word.full();
    word.clear();
    full_after_clear = word.full();
    // Readers block until a write; read_ff readers all see it.
    shoal::completion_event arrived(3);
    shoal::completion_event done(3);
    auto* w = &word;
    auto* a = &arrived;
    auto* d = &done;
    auto* r = &reads;
    for (int i = 0; i < 3; ++i) {
      shoal::spawn([w, a, d, r] {
        a->complete();
        r->push_back(w->read_ff());
        d->complete();
      });
    }
    arrived.wait();  // all three now block in read_ff
    word.write_ef(9);
    done.wait();
    reads.push_back(word.read_fe());
  });
  EXPECT_TRUE(full_after_ff);
  EXPECT_FALSE(full_after_clear);
  EXPECT_EQ(reads, (std::vector<int>{5, 5, 9, 9, 9, 9}));
}

TEST_P(full_empty_words, WritersWaitForEmpty) {
  // Several writers on one full word: each value is read exactly once.
  constexpr int writers = 8;
  constexpr int each = 500;
  std::vector<int> seen;
  run([&] {
    shoal::full_empty<int> word;
    shoal::completion_event done(writers);
    auto* w = &word;
    auto* d = &done;
    for (int k = 0; k < writers; ++k) {
      shoal::spawn([w, d, k] {
        for (int i = 0; i < each; ++i) w->write_ef(k * each + i);
        d->complete();
      });
    }
    for (int i = 0; i < writers * each; ++i) seen.push_back(word.read_fe());
    done.wait();
  });
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(writers * each));
  for (int i = 0; i < writers * each; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
}

SHOAL_TEST_CORES(full_empty_words);

// One cell, many producer and consumer tasks (issue 11 item 7): each state
// change wakes one waiter, so the switches grow linearly with the items. On
// the base code every read woke every parked writer: 2.5k/5k/10k/20k items
// took 0.4/2.0/15.8/41 s.
struct pipeline_result {
  std::int64_t items = 0;
  std::uint64_t switches = 0;
  double seconds = 0;
  bool each_item_once = false;
};

pipeline_result run_pipeline(int n) {
  constexpr int per_producer = 10;
  constexpr int consumers = 10;  // divides every n below
  shoal::full_empty<int> cell;
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  shoal::completion_event done(n / per_producer + consumers);
  auto* c = &cell;
  auto* s = &seen;
  auto* d = &done;
  auto& stats = shoal::detail::this_core().stats;
  const std::uint64_t switches_before = stats.context_switches;
  const auto start = std::chrono::steady_clock::now();
  // Consumers first, so that they have workers before the producers park.
  for (int k = 0; k < consumers; ++k) {
    shoal::spawn([c, s, d, n] {
      for (int i = 0; i < n / consumers; ++i) ++(*s)[static_cast<std::size_t>(c->read_fe())];
      d->complete();
    });
  }
  for (int p = 0; p < n / per_producer; ++p) {
    shoal::spawn([c, d, p] {
      for (int i = 0; i < per_producer; ++i) c->write_ef(p * per_producer + i);
      d->complete();
    });
  }
  done.wait();
  pipeline_result r;
  r.items = n;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.switches = stats.context_switches - switches_before;
  r.each_item_once = std::all_of(seen.begin(), seen.end(), [](int x) { return x == 1; });
  return r;
}

TEST_P(full_empty_words, ManyProducersAndConsumersScaleLinearly) {
  std::vector<pipeline_result> results;
  run([&] {
    for (int n : {2'500, 5'000, 10'000, 20'000}) results.push_back(run_pipeline(n));
  });
  for (const auto& r : results) {
    std::printf("full_empty pipeline: %lld items, %.3f s, %llu switches (%.2f per item)\n",
                static_cast<long long>(r.items), r.seconds,
                static_cast<unsigned long long>(r.switches),
                static_cast<double>(r.switches) / static_cast<double>(r.items));
    EXPECT_TRUE(r.each_item_once) << r.items << " items";
    // Wake-one: a handful of switches per item (wake-all: hundreds at 20k).
    EXPECT_LE(r.switches, static_cast<std::uint64_t>(8 * r.items)) << r.items << " items";
  }
  ASSERT_EQ(results.size(), 4u);
  EXPECT_LE(results[3].switches, 10 * results[0].switches)
      << "8x the items, at most ~8x the switches";
}

TEST_P(full_empty_words, FullWakesEveryReadFfAndOneReadFe) {
  constexpr int peekers = 4;
  constexpr int takers = 3;
  std::vector<int> peeked;
  std::vector<int> taken;
  run([&] {
    shoal::full_empty<int> word;
    shoal::completion_event arrived(peekers + takers);
    shoal::completion_event done(peekers + takers);
    auto* w = &word;
    auto* a = &arrived;
    auto* d = &done;
    auto* pk = &peeked;
    auto* tk = &taken;
    for (int i = 0; i < peekers; ++i)
      shoal::spawn([w, a, d, pk] {
        a->complete();
        pk->push_back(w->read_ff());
        d->complete();
      });
    for (int i = 0; i < takers; ++i)
      shoal::spawn([w, a, d, tk] {
        a->complete();
        tk->push_back(w->read_fe());
        d->complete();
      });
    arrived.wait();  // every reader now waits on the empty word
    for (int v = 1; v <= takers; ++v) word.write_ef(10 * v);
    done.wait();
  });
  EXPECT_EQ(peeked, std::vector<int>(peekers, 10));
  std::sort(taken.begin(), taken.end());
  EXPECT_EQ(taken, (std::vector<int>{10, 20, 30}));
}

// ------------------------------------------------------------------ mutex

class worker_mutex : public cores_test {};

struct counter_job {
  shoal::mutex* m;  // null: no locking
  std::int64_t* value;
  shoal::completion_event* arrived;
  shoal::completion_event* gate;
  shoal::completion_event* done;
};

// Each task: (lock;) read; yield; write read+1; (unlock). All tasks first
// suspend on a gate so that they are all runnable workers when released.
std::int64_t increment_with_yield(int tasks, bool use_mutex) {
  std::int64_t value = 0;
  shoal::mutex m;
  shoal::completion_event arrived(tasks);
  shoal::completion_event gate(1);
  shoal::completion_event done(tasks);
  const counter_job job{use_mutex ? &m : nullptr, &value, &arrived, &gate, &done};
  for (int i = 0; i < tasks; ++i) {
    shoal::spawn([job] {
      job.arrived->complete();
      job.gate->wait();
      if (job.m != nullptr) job.m->lock();
      const std::int64_t read = *job.value;
      shoal::yield();
      *job.value = read + 1;
      if (job.m != nullptr) job.m->unlock();
      job.done->complete();
    });
  }
  arrived.wait();
  gate.complete();
  done.wait();
  return value;
}

TEST_P(worker_mutex, CriticalSectionThatYieldsIsExact) {
  constexpr int tasks = 1000;
  std::int64_t with_mutex = -1;
  std::int64_t without_mutex = -1;
  run([&] {
    with_mutex = increment_with_yield(tasks, true);
    without_mutex = increment_with_yield(tasks, false);
  });
  EXPECT_EQ(with_mutex, tasks);
  // The same pattern without the mutex loses updates, so the test can fail.
  EXPECT_LT(without_mutex, tasks);
}

TEST_P(worker_mutex, EveryCoreWithItsOwnMutex) {
  constexpr int tasks = 300;
  std::vector<padded_counter> result(static_cast<std::size_t>(ncores()));
  run([&] {
    auto* r = result.data();
    shoal::on_all_cores([r] { r[shoal::mycore()].value.store(increment_with_yield(tasks, true)); });
  });
  for (int c = 0; c < ncores(); ++c)
    EXPECT_EQ(result[static_cast<std::size_t>(c)].value.load(), tasks) << c;
}

TEST_P(worker_mutex, TryLockAndFifoHandOff) {
  bool first_try = false;
  bool second_try = true;
  bool locked_after_unlock = true;
  std::vector<int> order;
  run([&] {
    shoal::mutex m;
    first_try = m.try_lock();
    second_try = m.try_lock();
    m.unlock();
    locked_after_unlock = m.locked();
    // Waiters get the mutex in arrival order.
    m.lock();
    shoal::completion_event arrived(5);
    shoal::completion_event done(5);
    auto* mp = &m;
    auto* a = &arrived;
    auto* d = &done;
    auto* o = &order;
    for (int i = 0; i < 5; ++i) {
      shoal::spawn([mp, a, d, o, i] {
        a->complete();
        mp->lock();
        o->push_back(i);
        shoal::yield();
        mp->unlock();
        d->complete();
      });
    }
    arrived.wait();  // all five now wait in lock()
    m.unlock();
    done.wait();
  });
  EXPECT_TRUE(first_try);
  EXPECT_FALSE(second_try);
  EXPECT_FALSE(locked_after_unlock);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

SHOAL_TEST_CORES(worker_mutex);

// ------------------------------------------------------ condition_variable

class condition_variables : public cores_test {};

struct bounded_queue {
  static constexpr std::size_t capacity = 8;
  shoal::mutex m;
  shoal::condition_variable not_full;
  shoal::condition_variable not_empty;
  std::deque<std::int64_t> items;
  std::size_t max_size = 0;

  void push(std::int64_t v) {
    m.lock();
    not_full.wait(m, [this] { return items.size() < capacity; });
    items.push_back(v);
    max_size = std::max(max_size, items.size());
    not_empty.notify_one();
    m.unlock();
  }
  std::int64_t pop() {
    m.lock();
    not_empty.wait(m, [this] { return !items.empty(); });
    const std::int64_t v = items.front();
    items.pop_front();
    not_full.notify_one();
    m.unlock();
    return v;
  }
};

TEST_P(condition_variables, BoundedQueueProducersConsumers) {
  constexpr int producers = 3;
  constexpr int consumers = 2;
  constexpr std::int64_t per_producer = 4000;
  std::vector<std::int64_t> got[consumers];
  std::size_t max_size = 0;
  run([&] {
    bounded_queue q;
    shoal::completion_event produced(producers);
    shoal::completion_event consumed(consumers);
    auto* qp = &q;
    auto* pd = &produced;
    auto* cd = &consumed;
    for (int c = 0; c < consumers; ++c) {
      auto* out = &got[c];
      shoal::spawn([qp, cd, out] {
        for (;;) {
          const std::int64_t v = qp->pop();
          if (v < 0) break;
          out->push_back(v);
        }
        cd->complete();
      });
    }
    for (int p = 0; p < producers; ++p) {
      shoal::spawn([qp, pd, p] {
        for (std::int64_t i = 0; i < per_producer; ++i) {
          qp->push(p * per_producer + i);
          if (i % 7 == 0) shoal::yield();
        }
        pd->complete();
      });
    }
    // Once the producers are done, stop each consumer with a sentinel.
    produced.wait();
    for (int c = 0; c < consumers; ++c) q.push(-1);
    consumed.wait();
    max_size = q.max_size;
  });
  EXPECT_LE(max_size, bounded_queue::capacity);
  std::vector<std::int64_t> all;
  for (const auto& g : got) {
    // Values of one producer reach one consumer in production order.
    for (int p = 0; p < producers; ++p) {
      std::int64_t prev = -1;
      for (auto v : g) {
        if (v / per_producer != p) continue;
        EXPECT_GT(v, prev);
        prev = v;
      }
    }
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<std::size_t>(producers * per_producer));
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<std::int64_t>(i));
}

TEST_P(condition_variables, NotifyAllWakesEveryWaiter) {
  constexpr int waiters = 10;
  int woke = 0;
  run([&] {
    shoal::mutex m;
    shoal::condition_variable cv;
    bool go = false;
    shoal::completion_event arrived(waiters);
    shoal::completion_event done(waiters);
    auto* mp = &m;
    auto* cvp = &cv;
    bool* g = &go;
    int* w = &woke;
    auto* a = &arrived;
    auto* d = &done;
    for (int i = 0; i < waiters; ++i) {
      shoal::spawn([mp, cvp, g, w, a, d] {
        mp->lock();
        a->complete();
        cvp->wait(*mp, [g] { return *g; });
        ++*w;
        mp->unlock();
        d->complete();
      });
    }
    arrived.wait();
    m.lock();
    go = true;
    cv.notify_all();
    m.unlock();
    done.wait();
  });
  EXPECT_EQ(woke, waiters);
}

SHOAL_TEST_CORES(condition_variables);

// ------------------------------------------------ global_completion_event

class global_completion_events : public cores_test {};

TEST_P(global_completion_events, WaitReturnsOnlyWhenAllWorkIsDone) {
  constexpr int per_core = 2000;
  std::atomic<std::int64_t> done{0};
  std::int64_t done_at_wake = -1;
  bool done_flag = false;
  run([&] {
    shoal::global_completion_event gce;
    auto* g = &gce;
    auto* d = &done;
    // Every core enrolls units and sends them to the next core, where a
    // task finishes each one after yielding a few times.
    shoal::on_all_cores([g, d] {
      const int next = (shoal::mycore() + 1) % shoal::cores();
      for (int i = 0; i < per_core; ++i) {
        g->enroll();
        shoal::send(next, [g, d, i] {
          shoal::spawn([g, d, i] {
            for (int k = 0; k < i % 4; ++k) shoal::yield();
            d->fetch_add(1);
            g->complete();
          });
        });
      }
    });
    gce.wait();
    done_at_wake = done.load();
    done_flag = gce.done();
  });
  EXPECT_EQ(done_at_wake, static_cast<std::int64_t>(per_core) * ncores());
  EXPECT_TRUE(done_flag);
}

TEST_P(global_completion_events, ReusableAndCompletedOnAThirdCore) {
  constexpr int rounds = 20;
  constexpr int units = 500;
  std::vector<std::int64_t> at_wake;
  run([&] {
    shoal::global_completion_event gce;
    std::atomic<std::int64_t> done{0};
    auto* g = &gce;
    auto* d = &done;
    for (int r = 0; r < rounds; ++r) {
      // Enrolled on core 0, handed through core 1 to core 2 (mod cores).
      gce.enroll(units);
      for (int i = 0; i < units; ++i) {
        shoal::send(1 % shoal::cores(), [g, d] {
          shoal::send(2 % shoal::cores(), [g, d] {
            d->fetch_add(1);
            g->complete();
          });
        });
      }
      gce.wait();
      at_wake.push_back(done.load());
    }
  });
  ASSERT_EQ(at_wake.size(), static_cast<std::size_t>(rounds));
  for (int r = 0; r < rounds; ++r)
    EXPECT_EQ(at_wake[static_cast<std::size_t>(r)], std::int64_t{units} * (r + 1));
}

TEST_P(global_completion_events, WaitWithNothingEnrolledReturnsAtOnce) {
  bool done = false;
  run([&] {
    shoal::global_completion_event gce;
    gce.wait();
    done = gce.done();
  });
  EXPECT_TRUE(done);
}

TEST_P(global_completion_events, EveryCoreWaitsOnTheSameEventAtOnce) {
  // As in the histogram demo: each core's SPMD task issues async delegates
  // and then waits on default_gce() itself.
  constexpr std::int64_t per_core = 200'000;
  std::int64_t total = -1;
  std::vector<shoal_test::padded_counter> returned(static_cast<std::size_t>(ncores()));
  run([&] {
    auto counters = shoal::global_alloc<std::int64_t>(8 * shoal::cores());
    for (int c = 0; c < shoal::cores(); ++c) *(counters + 8 * c).local() = 0;
    auto* ret = returned.data();
    shoal::on_all_cores([counters, ret] {
      for (std::int64_t i = 0; i < per_core; ++i)
        shoal::delegate::async_add(counters + 8 * (i % shoal::cores()), std::int64_t{1});
      shoal::default_gce().wait();
      ret[shoal::mycore()].value.store(1);
    });
    total = 0;
    for (int c = 0; c < shoal::cores(); ++c) total += *(counters + 8 * c).local();
    shoal::global_free(counters);
  });
  EXPECT_EQ(total, per_core * ncores());
  for (const auto& r : returned) EXPECT_EQ(r.value.load(), 1);
}

SHOAL_TEST_CORES(global_completion_events);

}  // namespace
