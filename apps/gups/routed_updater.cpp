// GUPS on a routed target channel (--routing direct|hypercube|node), the
// way Active Pebbles runs RandomAccess (section 4.1): every update is a
// value sent to its table word as a target (table_words says which core
// owns a word and where), the library short-circuits the sender's own words
// and routes the rest between processes along the chosen topology; a hop
// forwards on the same channel and the channel's end_phase, after the last
// chunk, returns once every update anywhere has been applied.
//
// Only --outstanding sent: routed values from one core to another may
// arrive in any order, which the channel updater's in-band markers (and so
// --outstanding applied) rely on. Each chunk of 1024 is flushed as it is
// generated, as HPCC's MPI code does.
#include <memory>
#include <string>

#include "gups/update_stream.hpp"
#include "gups/updater.hpp"

namespace shoal_apps::gups {

namespace {

/// The table's words as targets: word i lives on core (i >> shift) mod
/// cores, at local index (i >> shift) / cores << shift | low bits.
struct table_words {
  divider cores;
  std::uint8_t block_shift = 0;
  shoal::target_location locate(std::uint64_t i) const noexcept {
    const std::uint64_t block = i >> block_shift;
    const std::uint64_t low = i & ((std::uint64_t{1} << block_shift) - 1);
    return {static_cast<int>(cores.remainder(block)), cores.quotient(block) << block_shift | low};
  }
  const char* name() const noexcept { return "gups table words"; }
};

/// The handler, at the word's home core.
struct xor_word {
  void operator()(std::uint64_t local, const std::uint64_t& r) const {
    local_part.local()[local] ^= r;
  }
};

template <class Route>
using update_channel =
    shoal::target_channel<std::uint64_t, table_words, shoal::reduction::none, Route>;
/// Every core's copy of the handle (too large to travel in the closure
/// with the table).
template <class Route>
inline thread_local update_channel<Route> tls_channel;

route_counts g_counts;

template <class Route>
class routed_updater final : public updater {
 public:
  routed_updater(const gups_table& t, const gups_problem& p, const Route& route)
      : t_(t), updates_(p.updates) {
    ch_ = shoal::make_target_channel<std::uint64_t>(table_words{t.cores, t.block_shift}, xor_word{},
                                                    {}, shoal::reduction::none{}, route);
    const update_channel<Route> ch = ch_;
    shoal::on_all_cores([ch] { tls_channel<Route> = ch; });
  }
  routed_updater(const routed_updater&) = delete;
  routed_updater& operator=(const routed_updater&) = delete;
  ~routed_updater() override {
    shoal::on_all_cores([] { tls_channel<Route> = update_channel<Route>(); });
    ch_.close();
  }

  void apply_all() override {
    const gups_table t = t_;
    const std::int64_t updates = updates_;
    shoal::on_all_cores([t, updates] {
      const update_channel<Route>& ch = tls_channel<Route>;
      const int c = shoal::mycore();
      const bool first = c % shoal::local_cores() == 0;
      // This process's traffic to others during the updates, from a
      // snapshot taken when every core is here (nothing of this run sent).
      shoal::barrier();
      const shoal::network_traffic before = shoal::local_network_traffic();
      update_stream s(t, share_begin(updates, c, shoal::cores()),
                      share_begin(updates, c + 1, shoal::cores()), max_outstanding);
      while (!s.done()) {
        s.next_chunk([&ch](int, std::uint64_t i, std::uint64_t r) { ch.send(i, r); });
        ch.flush();  // the chunk leaves now, while this core applies its own words
        s.apply_own();
        shoal::yield();
      }
      ch.end_phase();  // every update, forwarded ones included, applied
      const shoal::network_traffic after = shoal::local_network_traffic();
      auto job_sum = [first](std::uint64_t x) {
        return shoal::allreduce_sum(first ? static_cast<std::int64_t>(x) : std::int64_t{0});
      };
      route_counts r;
      r.forwarded = job_sum(ch.local_route_stats().forwarded);
      r.messages = job_sum(after.messages - before.messages);
      r.bytes = job_sum(after.bytes - before.bytes);
      r.batches = job_sum(after.batches - before.batches);
      r.mpi_messages = job_sum(after.network_buffers_sent - before.network_buffers_sent);
      r.max_network_buffers = shoal::allreduce_max(
          first ? static_cast<std::int64_t>(after.network_buffers) : std::int64_t{0});
      if (c == 0) g_counts = r;
    });
  }

 private:
  gups_table t_;
  std::int64_t updates_;
  update_channel<Route> ch_;
};

}  // namespace

route_counts last_route_counts() { return g_counts; }

std::unique_ptr<updater> make_routed_updater(const gups_table& t, const gups_problem& p,
                                             const std::string& routing) {
  g_counts = {};
  if (routing == "hypercube")
    return std::make_unique<routed_updater<shoal::hypercube_routing>>(t, p,
                                                                      shoal::hypercube_routing{});
  if (routing == "node")
    return std::make_unique<routed_updater<shoal::node_routing>>(
        t, p, shoal::node_routing::from_launcher());
  return std::make_unique<routed_updater<shoal::direct_routing>>(t, p, shoal::direct_routing{});
}

}  // namespace shoal_apps::gups
