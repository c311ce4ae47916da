#include "comm/remote_steal.hpp"

#include "shoal/detail/handler_id.hpp"
#include "tasks/scheduler.hpp"
#include "shoal/message.hpp"
#include "shoal/runtime.hpp"

#include <atomic>
#include <cstring>

#include "comm/near_control.hpp"

namespace shoal::detail {
namespace {

std::atomic<bool> g_enabled{false};
constexpr std::uint64_t first_pause_ns = 50'000;
constexpr int max_doublings = 7;  // 50 us x 2^7 = 6.4 ms

// A task as it travels: its invoker as a distance from the anchor.
struct moved_task {
  std::int64_t run;
  alignas(8) unsigned char storage[max_task_bytes];
  std::uint32_t scope;  // its finish scope: job-wide, it completes wherever it runs

  void operator()() const {
    scheduler& s = this_scheduler();
    ++s.steal_chatter;
    inline_task t;
    t.run = from_code_offset<void(inline_task&)>(run);
    std::memcpy(t.storage, storage, sizeof storage);
    t.scope = scope;
    ++s.stats.tasks_stolen;
    s.spawn_movable(t);
  }
};

int local_index() { return mycore() - g_info.rank_base; }

// A random core of another rank; with route_control_over_hypercube on, of
// a rank one bit away from this one (a hypercube neighbour): requests,
// tasks and replies then use only the peers that hypercube routing and the
// runtime's control messages use, so stealing opens no network buffer to
// any other process (ceil(log2 P) peers, not P - 1); work still spreads
// across the job, neighbour to neighbour, since a stolen movable task can
// be stolen again.
int pick_victim(std::uint64_t random) {
  if (!g_control_over_hypercube.load(std::memory_order_relaxed)) {
    const int others = g_info.total_cores - g_info.local_cores;
    int victim = static_cast<int>(random % static_cast<std::uint64_t>(others));
    if (victim >= g_info.rank_base) victim += g_info.local_cores;
    return victim;
  }
  int near[32];
  int n = 0;
  for (int bit = 1; bit < g_info.ranks && bit > 0; bit <<= 1)
    if (const int r = g_info.rank ^ bit; r < g_info.ranks) near[n++] = r;
  const auto pick = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(g_info.local_cores);
  const auto i = static_cast<int>(random % pick);
  return near[i / g_info.local_cores] * g_info.local_cores + i % g_info.local_cores;
}

// Runs on the victim: hands half of its movable tasks (at least one) to
// `thief`, then closes the request.
void serve_steal(int thief) {
  scheduler& s = this_scheduler();
  ++s.steal_chatter;
  const std::int64_t available = s.movable_size();
  const std::int64_t give = available > 1 ? available / 2 : available;
  std::uint32_t sent = 0;
  inline_task t;
  for (std::int64_t i = 0; i < give && s.give_movable(t); ++i) {
    moved_task m{to_code_offset(t.run), {}, t.scope};
    std::memcpy(m.storage, t.storage, sizeof m.storage);
    send(thief, m);
    ++sent;
  }
  const auto reply = [sent] {
    ++this_scheduler().steal_chatter;
    stealer_of(local_index()).on_reply(sent);
  };
  // An empty reply is protocol, like the request: on the control stream.
  // One that closes a handover follows the tasks on their stream, so that
  // it cannot overtake them (order holds per stream).
  if (sent == 0) {
    send_control(thief, reply);
  } else {
    send(thief, reply);
  }
}

}  // namespace

// The fence after the store pairs with poll_hook()'s fence between marking
// its core busy and its second look at the switch (a store-load pair, as in
// Dekker's algorithm): either that core sees stealing off and sends
// nothing, or the termination waves, which read the cores' idle flags after
// this returns, see it busy and look again, by when its request is counted
// as sent.
void set_remote_stealing(bool on) noexcept {
  g_enabled.store(on, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool remote_stealer::poll_hook(void* self) {
  auto& st = *static_cast<remote_stealer*>(self);
  // A first, cheap look (acquire is enough: a stale "on" is caught by the
  // second look below, after the core is marked busy).
  if (st.outstanding_ || !st.sched_.idling() || !g_enabled.load(std::memory_order_acquire))
    return false;
  const std::uint64_t now = now_ns();
  if (now < st.next_ns_) return false;
  if (st.rng_ == 0) st.rng_ = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(mycore() + 1);
  st.rng_ ^= st.rng_ << 13;
  st.rng_ ^= st.rng_ >> 7;
  st.rng_ ^= st.rng_ << 17;
  const int victim = pick_victim(st.rng_);
  // Busy before sending: the request must never be staged while this core
  // looks idle (quiescence checks read the idle flag).
  st.sched_.leave_idle();
  // Then look at the switch again (see set_remote_stealing). The first look
  // came while this core still looked idle: a core preempted between that
  // look and the send (4 ranks on 2 CPUs) sent its request after the
  // termination waves had turned stealing off and agreed the job was done;
  // it arrived after the victim's last run ("1 message(s) arrived after
  // shoal's last run", gups_idle_spin_4x1, about 1 run in 50 under ctest -j).
  // Stopped meanwhile: no request; the core goes idle again in its next
  // idle round.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!g_enabled.load(std::memory_order_relaxed)) return false;
  st.outstanding_ = true;
  ++st.sched_.stats.steal_attempts;
  const int thief = mycore();
  // On the control stream: a barrier's or a phase's message waves leave it
  // out, so idle cores asking for work cannot keep a drain from agreeing
  // (every wave found a few requests more sent than the last one handled;
  // barriers at 16 x 1 took 0.1-3 s). Termination waves still see it (they
  // count network batches of every stream).
  send_control(victim, [thief] { serve_steal(thief); });
  flush();
  return true;
}

void remote_stealer::on_reply(std::uint32_t tasks) {
  outstanding_ = false;
  if (tasks > 0) {
    failures_ = 0;
    next_ns_ = 0;
    return;
  }
  if (failures_ < max_doublings) ++failures_;
  next_ns_ = now_ns() + (first_pause_ns << failures_);
}

}  // namespace shoal::detail
