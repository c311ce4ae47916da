// `shoal chma --impl split-phase`: the distributed map and split-phase tasks
// on two typed channels, each access a request and a reply.
//
// The map: key k belongs to core key_owner(hash(k)), which holds it in its
// key_set shard (per_core). Only the owner touches a shard, from handlers,
// so no lock or atomic is needed.
//
// The tasks: task t lives on core t % cores as a step counter. A step sends
// a lookup {key, t} on the request channel to the key's owner, which answers
// {t, found|absent} on the reply channel. On "found" the task sends an
// insert {reverse(key), t} to that key's owner, which answers {t, inserted};
// on "absent" or "inserted" the step is over and the task sends its next
// lookup. The replies run on the task's core, where its state is, so a task
// is a small state machine driven by its replies: the W tasks of the job
// (--tasks, spread over the cores) all have one operation in flight, which
// hides each round trip behind the others (GMT's many tasks, without a
// stack each). A core's task of the job waits until its own tasks are done.
#include <shoal/shoal.hpp>

#include <algorithm>
#include <chrono>

#include "common/yield_every.hpp"
#include "chma/map_runs.hpp"

namespace shoal_apps::chma {

namespace {

enum op : std::uint32_t { lookup = 0, insert = 1 };
enum answer : std::uint32_t { absent = 0, found = 1, inserted = 2 };

struct request {
  str_key key;
  std::uint32_t task;
  std::uint32_t op;
};

struct reply {
  std::uint32_t task;
  std::uint32_t answer;
};

/// A core's shard of the map, its tasks and its counts.
struct core_state {
  key_set shard;
  shoal::channel<request> requests;
  shoal::channel<reply> replies;
  std::vector<std::uint32_t> step;  // of local task j (task j * cores + me)
  std::int64_t tasks_left = 0;
  shoal::completion_event* done = nullptr;  // this core's tasks, while they run
  std::int64_t lookups = 0;                 // handled here (as owner)
  std::int64_t inserts = 0;
  std::vector<str_key> gathered;  // core 0: every shard's keys, for the element check
};
shoal::per_core<core_state> states;

/// The problem, the same on every process (set before each run).
const chma_problem* the_problem = nullptr;

/// Sends step k of task t: a lookup of its input string.
void send_lookup(const core_state& s, std::uint32_t t, std::uint32_t k) {
  const str_key& x = the_problem->input(t, k);
  s.requests.send(key_owner(key_hash(x), shoal::cores()), request{x, t, lookup});
}

/// Request handler, at the key's owner.
struct serve {
  void operator()(const request& r) const {
    core_state& s = states.local();
    const std::uint64_t h = key_hash(r.key);
    const int home = static_cast<int>(r.task % static_cast<std::uint32_t>(shoal::cores()));
    if (r.op == lookup) {
      ++s.lookups;
      s.replies.send(home, reply{r.task, s.shard.contains(r.key, h) ? found : absent});
    } else {
      ++s.inserts;
      s.shard.insert(r.key, h);
      s.replies.send(home, reply{r.task, inserted});
    }
  }
};

/// Reply handler, on the task's core: the task's next operation.
struct advance {
  void operator()(const reply& a) const {
    core_state& s = states.local();
    const chma_problem& p = *the_problem;
    const auto cores = static_cast<std::uint32_t>(shoal::cores());
    std::uint32_t& k = s.step[a.task / cores];
    if (a.answer == found) {
      const str_key& x = p.input(a.task, k);
      const str_key y = a.task == p.corrupt_task ? faulty(x) : reversed(x);
      s.requests.send(key_owner(key_hash(y), shoal::cores()), request{y, a.task, insert});
      return;
    }
    if (++k < p.length) {
      send_lookup(s, a.task, k);
    } else if (--s.tasks_left == 0) {
      s.done->complete();
    }
  }
};

/// Inserts the initial strings this core owns. Task, every core.
void populate_shard() {
  const chma_problem& p = *the_problem;
  core_state& s = states.local();
  const int me = shoal::mycore();
  const auto mine = static_cast<std::size_t>(p.populate / shoal::cores() + 16);
  s.shard = key_set(mine);
  for (std::int64_t i = 0; i < p.populate; ++i) {
    const str_key& k = p.pool[static_cast<std::size_t>(i)];
    const std::uint64_t h = key_hash(k);
    if (key_owner(h, shoal::cores()) == me) s.shard.insert(k, h);
  }
}

/// Starts this core's tasks and waits until they have taken every step. Task, every core.
void run_tasks() {
  core_state& s = states.local();
  const auto cores = static_cast<std::uint32_t>(shoal::cores());
  const auto me = static_cast<std::uint32_t>(shoal::mycore());
  const std::uint32_t mine = (the_problem->tasks + cores - 1 - me) / cores;
  s.step.assign(mine, 0);
  s.tasks_left = mine;
  if (mine == 0) return;
  shoal::completion_event done(1);
  s.done = &done;
  yield_every pacing;  // let this core serve others meanwhile
  for (std::uint32_t j = 0; j < mine; ++j) {
    send_lookup(s, j * cores + me, 0);
    pacing.tick();
  }
  done.wait();
  s.done = nullptr;
}

void collect(map_totals* out, shoal::channel<str_key> to_core0, bool gather) {
  collect_totals(states.local(), out, to_core0, gather);
}

}  // namespace

channel_result run_split_phase(const chma_problem& p, bool gather_keys) {
  the_problem = &p;
  channel_result r;
  shoal::run([&r, gather_keys] {
    auto req = shoal::make_channel<request>(serve{});
    auto rep = shoal::make_channel<reply>(advance{});
    shoal::on_all_cores([req, rep] {
      core_state& s = states.local();
      s = core_state{};
      s.requests = req;
      s.replies = rep;
      populate_shard();
    });
    const auto t0 = std::chrono::steady_clock::now();
    shoal::on_all_cores([] { run_tasks(); });
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    map_totals* out = &r.totals;
    std::vector<str_key>* keys = &r.keys;
    auto gather = shoal::make_channel<str_key>(
        [](const str_key& k) { states.local().gathered.push_back(k); });
    shoal::on_all_cores([out, keys, gather, gather_keys] {
      collect(out, gather, gather_keys);
      if (shoal::mycore() == 0) *keys = std::move(states.local().gathered);
    });
    gather.close();
    shoal::on_all_cores([] { states.local() = core_state{}; });
    req.close();
    rep.close();
  });
  return r;
}

}  // namespace shoal_apps::chma
