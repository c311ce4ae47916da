#include "shoal/detail/scheduler.hpp"
#include "shoal/parallel.hpp"

#include <vector>

namespace shoal {
namespace {

// Arrivals are counted on core 0, which then releases every core. Each
// core's waiter sits in its own slot; slots and the count are touched only by
// their owning core (by message), so no atomics are needed.
struct barrier_state {
  int arrived = 0;  // core 0 only
  std::vector<detail::worker*> waiter;
};

barrier_state& state() {
  static barrier_state s;
  return s;
}

}  // namespace

void barrier() {
  barrier_state& st = state();
  const int local = mycore() - detail::g_info.rank_base;
  detail::scheduler& s = detail::this_scheduler();
  st.waiter[static_cast<std::size_t>(local)] = s.current();
  send(0, [] {
    barrier_state& b = state();
    if (++b.arrived < cores()) return;
    b.arrived = 0;
    for (int c = 0; c < cores(); ++c) {
      send(c, [] {
        barrier_state& bs = state();
        const int me = mycore() - detail::g_info.rank_base;
        detail::worker* w = bs.waiter[static_cast<std::size_t>(me)];
        bs.waiter[static_cast<std::size_t>(me)] = nullptr;
        detail::this_scheduler().wake(w);
      });
    }
  });
  s.suspend("barrier");
}

namespace detail {
void reset_barrier(int local_cores) {
  barrier_state& st = state();
  st.arrived = 0;
  st.waiter.assign(static_cast<std::size_t>(local_cores), nullptr);
}
}  // namespace detail

}  // namespace shoal
