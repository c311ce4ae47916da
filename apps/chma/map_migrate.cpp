// `shoal chma --impl channel` (the default): the map sharded as in
// map_split_phase.cpp, but a task is a continuation that migrates instead of
// a state waiting for replies. Every process holds the pool and a task's
// inputs are a pure function of (task, step), so a task needs nothing from
// its home core: its step travels as one 32-byte value {key, task, step} on
// a typed channel to the key's owner, which looks the key up and sends the
// task on, either to the owner of reverse(key) with an insert, or to the
// owner of its next input string with the next lookup. One message per
// access instead of a request and a reply (Active Pebbles' style; GMT's MPI
// version also sends the string to its owner).
//
// Termination: the root's completion_event counts the tasks; the core where
// a task takes its last step completes it (one small message per task).
#include <shoal/shoal.hpp>

#include <chrono>

#include "common/yield_every.hpp"
#include "chma/map_runs.hpp"

namespace shoal_apps::chma {

namespace {

/// A task on its way: the key of its current access, which access it is.
struct access {
  str_key key;
  std::uint32_t task;
  std::uint32_t step;  // step number; insert_flag set when the access is an insert
};
constexpr std::uint32_t insert_flag = 0x80000000U;

struct core_state {
  key_set shard;
  shoal::channel<access> channel;
  shoal::completion_event* done = nullptr;  // the root's, on core 0
  std::int64_t lookups = 0;
  std::int64_t inserts = 0;
  std::vector<str_key> gathered;  // core 0: every shard's keys, for the element check
};
shoal::per_core<core_state> states;

const chma_problem* the_problem = nullptr;

/// The channel's handler: performs access `a` and sends its task on to the
/// owner of its next access, this core included. A local next access also
/// goes through the channel rather than a loop here, so the handler runs
/// over a batch of independent tasks whose cache misses (the pool, the
/// shard) the CPU overlaps; a loop would chain one task's dependent misses
/// as the sequential run does (measured: about 2x on 1 process x 1 core).
struct perform {
  void operator()(const access& a) const {
    core_state& s = states.local();
    const chma_problem& p = *the_problem;
    const std::uint64_t h = key_hash(a.key);
    std::uint32_t k = a.step & ~insert_flag;
    if ((a.step & insert_flag) != 0) {
      ++s.inserts;
      s.shard.insert(a.key, h);
    } else {
      ++s.lookups;
      if (s.shard.contains(a.key, h)) {
        const str_key y = a.task == p.corrupt_task ? faulty(a.key) : reversed(a.key);
        s.channel.send(key_owner(key_hash(y), shoal::cores()), access{y, a.task, k | insert_flag});
        return;
      }
    }
    if (++k == p.length) {
      shoal::completion_event::complete_at(0, s.done);
      return;
    }
    const str_key& x = p.input(a.task, k);
    s.channel.send(key_owner(key_hash(x), shoal::cores()), access{x, a.task, k});
  }
};

void populate_shard() {
  const chma_problem& p = *the_problem;
  core_state& s = states.local();
  const int me = shoal::mycore();
  s.shard = key_set(static_cast<std::size_t>(p.populate / shoal::cores() + 16));
  for (std::int64_t i = 0; i < p.populate; ++i) {
    const str_key& k = p.pool[static_cast<std::size_t>(i)];
    const std::uint64_t h = key_hash(k);
    if (key_owner(h, shoal::cores()) == me) s.shard.insert(k, h);
  }
}

/// Sends the first lookup of this core's tasks (t = core, core + cores, ...). Task.
void start_tasks() {
  const core_state& s = states.local();
  const chma_problem& p = *the_problem;
  const auto cores = static_cast<std::uint32_t>(shoal::cores());
  yield_every pacing;  // let this core serve others meanwhile
  for (auto t = static_cast<std::uint32_t>(shoal::mycore()); t < p.tasks; t += cores) {
    const str_key& x = p.input(t, 0);
    s.channel.send(key_owner(key_hash(x), shoal::cores()), access{x, t, 0});
    pacing.tick();
  }
}

void collect(map_totals* out, shoal::channel<str_key> to_core0, bool gather) {
  collect_totals(states.local(), out, to_core0, gather);
}

}  // namespace

channel_result run_migrate(const chma_problem& p, bool gather_keys) {
  the_problem = &p;
  channel_result r;
  shoal::run([&r, gather_keys] {
    auto ch = shoal::make_channel<access>(perform{});
    shoal::completion_event done(the_problem->tasks);
    shoal::completion_event* d = &done;
    shoal::on_all_cores([ch, d] {
      core_state& s = states.local();
      s = core_state{};
      s.channel = ch;
      s.done = d;
      populate_shard();
    });
    const auto t0 = std::chrono::steady_clock::now();
    shoal::on_all_cores([] { start_tasks(); });
    done.wait();
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
    ch.close();
  });
  return r;
}

}  // namespace shoal_apps::chma
