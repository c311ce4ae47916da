// `shoal chma --impl map`: the same tasks on shoal's containers, as a user
// would write them: the map is a shoal::set<str_key> (containers/set.hpp)
// and each task's step counter an element of a shoal::array (task t lives
// on the array's owner of t). A step is a chain of container operations:
// async_contains(x) runs on x's owner, which counts the lookup and, when x
// is there, inserts its reverse (async_insert, counted there); either way it
// visits the task's counter, whose owner sends the task's next lookup. So
// each of the W tasks has one step in flight, as in split-phase, with no
// channels, handlers or per-core state of our own. (The insert is not
// waited for: the final map does not depend on the order, chma_problem.hpp.)
// Completion is a barrier: it returns once every chain has ended.
#include <shoal/containers/array.hpp>
#include <shoal/containers/set.hpp>
#include <shoal/shoal.hpp>

#include <chrono>

#include "chma/map_runs.hpp"
#include "common/yield_every.hpp"

namespace shoal_apps::chma {

namespace {

struct hash_key {
  std::size_t operator()(const str_key& k) const noexcept { return key_hash(k); }
};
using string_set = shoal::set<str_key, hash_key>;
using task_steps = shoal::array<std::uint32_t>;

const chma_problem* the_problem = nullptr;  // the same on every process
thread_local std::int64_t tls_lookups = 0;  // on this core, as a key's owner
thread_local std::int64_t tls_inserts = 0;

/// On the task's counter's owner: the task's next lookup, if any is left.
struct next_step {
  void operator()(std::uint64_t t, std::uint32_t& k, string_set s, task_steps steps) const;
};
/// On the key's owner: the lookup's answer.
struct looked_up {
  void operator()(const str_key& x, bool present, std::uint64_t t, string_set s,
                  task_steps steps) const {
    ++tls_lookups;
    if (present) {
      ++tls_inserts;
      s.async_insert(static_cast<std::int64_t>(t) == the_problem->corrupt_task ? faulty(x)
                                                                               : reversed(x));
    }
    steps.async_visit(t, next_step{}, s, steps);
  }
};
void next_step::operator()(std::uint64_t t, std::uint32_t& k, string_set s,
                           task_steps steps) const {
  if (++k < the_problem->length)
    s.async_contains(the_problem->input(static_cast<std::uint32_t>(t), k), looked_up{}, t, s,
                     steps);
}

}  // namespace

channel_result run_on_containers(const chma_problem& p, bool gather_keys) {
  the_problem = &p;
  channel_result r;
  shoal::run([&r, gather_keys] {
    const chma_problem& p = *the_problem;
    auto s = string_set::create();
    auto steps = task_steps::create(p.tasks);
    shoal::on_all_cores([s] {  // the initial strings (untimed)
      tls_lookups = tls_inserts = 0;
      const auto& p = *the_problem;
      for (std::int64_t i = shoal::mycore(); i < p.populate; i += shoal::cores())
        s.async_insert(p.pool[static_cast<std::size_t>(i)]);
      shoal::barrier();
    });
    const auto t0 = std::chrono::steady_clock::now();
    shoal::on_all_cores([s, steps] {
      const auto [first, last] = steps.local_range();
      yield_every pacing;  // let this core serve others meanwhile
      for (std::uint64_t t = first; t < last && the_problem->length > 0; ++t) {
        s.async_contains(the_problem->input(static_cast<std::uint32_t>(t), 0), looked_up{}, t, s,
                         steps);
        pacing.tick();
      }
      shoal::barrier();  // every task's chain of steps has ended
    });
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    shoal::on_all_cores([s, &r, gather_keys] {
      map_totals mine{0, 0, tls_lookups, tls_inserts};
      s.for_all([&mine](const str_key& k) { mine.digest += key_hash(k); });
      mine.keys = static_cast<std::int64_t>(s.size());
      const map_totals all = shoal::allreduce(mine, [](const map_totals& a, const map_totals& b) {
        return map_totals{a.keys, a.digest + b.digest, a.lookups + b.lookups,
                          a.inserts + b.inserts};
      });
      std::vector<str_key> keys = gather_keys ? s.gather(0) : std::vector<str_key>{};
      if (shoal::mycore() == 0) r.totals = all, r.keys = std::move(keys);
    });
    s.destroy();
    steps.destroy();
  });
  return r;
}

}  // namespace shoal_apps::chma
