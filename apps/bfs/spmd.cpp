// allreduce_sum: the barrier-with-a-sum between the levels of a search.
#include "bfs/spmd.hpp"

namespace shoal_apps::bfs {

namespace {

/// Core 0 gathers arrivals here; every core parks its waiting task here.
struct reduce_slot {
  sum_pair sum{};
  int arrivals = 0;
  sum_pair result{};
  shoal::completion_event* waiter = nullptr;
};

shoal::per_core<reduce_slot> g_reduce;

}  // namespace

sum_pair allreduce_sum(sum_pair x) {
  reduce_slot& mine = g_reduce.local();
  shoal::completion_event done(1);
  mine.waiter = &done;
  // No core can start the next reduction before this one's release reaches
  // it, and it sets its waiter before contributing, so one slot suffices.
  shoal::send(0, [x] {
    reduce_slot& root = g_reduce.local();
    root.sum[0] += x[0];
    root.sum[1] += x[1];
    if (++root.arrivals < shoal::cores()) return;
    const sum_pair total = root.sum;
    root.sum = {};
    root.arrivals = 0;
    for (int c = 0; c < shoal::cores(); ++c)
      shoal::send(c, [total] {
        reduce_slot& s = g_reduce.local();
        s.result = total;
        shoal::completion_event* w = s.waiter;
        s.waiter = nullptr;
        w->complete();
      });
    shoal::flush();  // a handler's sends otherwise wait for the age flush
  });
  shoal::flush();
  done.wait();
  return mine.result;
}

}  // namespace shoal_apps::bfs
