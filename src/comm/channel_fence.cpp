// Per-sender channel fences (channel.hpp's fence(), channel_fence.hpp): the
// aggregator's fence books (aggregator.hpp, Fences), the markers' acks, and
// the handle's checks and wait.
#include "shoal/channel_fence.hpp"

#include "shoal/detail/aggregator.hpp"
#include "shoal/detail/check.hpp"
#include "shoal/detail/phase_barrier.hpp"
#include "shoal/detail/process_info.hpp"

#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "comm/near_control.hpp"
#include "comm/network.hpp"
#include "tasks/scheduler.hpp"

namespace shoal::detail {

aggregator::fence_book& aggregator::fences(std::uint32_t stream) {
  fence_book*& f = fences_[stream];
  if (f == nullptr) [[unlikely]] {
    f = new fence_book;
    f->marked.assign(static_cast<std::size_t>(total_cores_), 0);
  }
  return *f;
}

namespace {
/// Completes the fences at the front of `unacked` that lack no
/// acknowledgement, in order.
void complete_in_order(std::deque<std::uint32_t>& unacked, std::uint64_t& done) {
  while (!unacked.empty() && unacked.front() == 0) {
    unacked.pop_front();
    ++done;
  }
}
}  // namespace

aggregator::fence_made aggregator::make_fence(std::uint32_t stream) {
  fence_book& f = fences(stream);
  // The marks go before the markers: send_marker may suspend, and a batch
  // another task of this core starts meanwhile belongs to the next fence.
  std::vector<int> dests;
  dests.swap(f.dests);
  for (const int d : dests) f.marked[static_cast<std::size_t>(d)] = 0;
  const std::uint64_t number = ++f.made;
  f.unacked.push_back(static_cast<std::uint32_t>(dests.size()));
  for (const int d : dests) {
    // The batch staged for d carries the fence when there is one; an
    // empty batch does otherwise (it left on size or age meanwhile).
    buffer* staged = slots_[stream][d];
    if (staged == nullptr) {
      send_marker(stream, d, number);
      continue;
    }
    slots_[stream][d] = nullptr;
    unstage(staged);
    staged->fence = number;
    deliver(staged);
  }
  complete_in_order(f.unacked, f.done);  // none to wait for: with the fence before it
  const std::size_t markers = dests.size();
  // The list's room goes back for the next interval (unless a task of this
  // core marked a destination while a marker waited for a buffer).
  if (f.dests.empty()) {
    dests.clear();
    f.dests.swap(dests);
  }
  return {number, markers};
}

void aggregator::fence_acknowledged(std::uint32_t stream, std::uint64_t number) noexcept {
  fence_book* f = fences_[stream];
  SHOAL_ASSERT(f != nullptr && number > f->done && number - f->done <= f->unacked.size(),
               "an acknowledgement of fence {} of channel {} that this core did not make", number,
               stream);
  --f->unacked[static_cast<std::size_t>(number - f->done - 1)];
  complete_in_order(f->unacked, f->done);
}

// One control message per fence marker (an empty batch, or the last batch
// before the fence) handled here, to the core that sent it: every value it
// sent here on the stream before the fence has been handled (batches from
// one core to one core on one stream run in order).
void aggregator::acknowledge_fence(const buffer* b) {
  const std::uint32_t stream = b->stream;
  const std::uint64_t number = b->fence;
  send_control_near(b->source,
                    [stream, number] { tls_aggregator->fence_acknowledged(stream, number); });
}

namespace {

// The watchdog keeps the label's pointer: the strings live for the program.
const std::array<std::string, control_stream>& fence_labels() {
  static const std::array<std::string, control_stream> labels = [] {
    std::array<std::string, control_stream> l;
    for (std::uint32_t id = 1; id < control_stream; ++id)
      l[id] = fmt::format("channel {} fence", id);
    return l;
  }();
  return labels;
}

void check_fence_core(std::uint32_t id, int core, const char* what) {
  SHOAL_CHECK(tls_core >= 0, "channel_fence::{} called outside shoal::run", what);
  SHOAL_CHECK(tls_core == core,
              "channel_fence::{} on core {} for a fence of channel {} made on core {}: a fence is "
              "used on the core that made it",
              what, tls_core, id, core);
}

struct fence_wait {
  const aggregator* agg;
  std::uint32_t stream;
  std::uint64_t number;
};

bool fence_complete(const void* arg) {
  const auto* w = static_cast<const fence_wait*>(arg);
  return w->agg->fences_done(w->stream) >= w->number;
}

}  // namespace

channel_fence make_channel_fence(std::uint32_t id) {
  check_channel_usable(id, "fence");
  const aggregator::fence_made f = tls_aggregator->make_fence(id);
  // The markers (and the values before them) leave now, partly filled
  // network buffers included: this core waits on their acknowledgements.
  // An empty fence sends nothing.
  if (f.markers != 0) push_staged_partial();
  return channel_fence(id, tls_core, f.number);
}

bool channel_fence_ready(std::uint32_t id, int core, std::uint64_t number) {
  check_fence_core(id, core, "ready");
  return tls_aggregator->fences_done(id) >= number;
}

void wait_channel_fence(std::uint32_t id, int core, std::uint64_t number) {
  check_fence_core(id, core, "wait");
  SHOAL_CHECK(in_worker(), "channel_fence::wait on channel {} called outside a task", id);
  const fence_wait w{tls_aggregator, id, number};
  if (!fence_complete(&w))
    this_scheduler().wait_until(fence_complete, &w, fence_labels()[id].c_str(),
                                static_cast<std::int64_t>(number));
}

}  // namespace shoal::detail
