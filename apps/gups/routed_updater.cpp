// GUPS on a routed target channel (--routing direct|hypercube|node), the
// way Active Pebbles runs RandomAccess (section 4.1): every update is a
// value sent to its table word as a target (table_words says which core
// owns a word and where), the library short-circuits the sender's own words
// and routes the rest between processes along the chosen topology; a hop
// forwards on the same channel and the channel's end_phase, after the last
// chunk, returns once every update anywhere has been applied.
//
// Only --outstanding sent: routed values from one core to another may
// arrive in any order, which the channel updater's fences (and so
// --outstanding applied) rely on. Each chunk of 1024 is flushed as it is
// generated, as HPCC's MPI code does.
//
// --reduce xor (Active Pebbles' message reductions): two updates of one
// word still staged at a core (or at a routing hop) travel as one, their
// values XORed; the table ends the same, since XOR is associative and
// commutative. --cache-slots sizes each core's cache.
#include <array>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

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

/// --reduce xor: updates of one word combine into one.
struct xor_values {
  void operator()(std::uint64_t& staged, const std::uint64_t& incoming) const noexcept {
    staged ^= incoming;
  }
};

/// The word an update goes to, from the update alone (its low bits): the
/// channel then carries the 8-byte update without a header.
struct word_of {
  std::uint64_t mask;
  std::uint64_t operator()(const std::uint64_t& r) const noexcept { return r & mask; }
};

template <class Red>
inline constexpr bool keyed = std::is_same_v<Red, shoal::reduction::none>;
template <class Route, class Red>
using update_channel =
    std::conditional_t<keyed<Red>,
                       shoal::keyed_target_channel<std::uint64_t, table_words, word_of, Route>,
                       shoal::target_channel<std::uint64_t, table_words, Red, Route>>;
/// Every core's copy of the handle (too large to travel in the closure
/// with the table).
template <class Route, class Red>
inline thread_local update_channel<Route, Red> tls_channel;

route_counts g_counts;

template <class Route, class Red>
class routed_updater final : public updater {
 public:
  routed_updater(const gups_table& t, const gups_problem& p, const Route& route,
                 std::uint32_t cache_slots)
      : t_(t), updates_(p.updates) {
    if constexpr (keyed<Red>) {
      ch_ = shoal::make_keyed_target_channel<std::uint64_t>(
          table_words{t.cores, t.block_shift}, word_of{t.mask()}, xor_word{}, {}, route);
    } else {
      ch_ =
          shoal::make_target_channel<std::uint64_t>(table_words{t.cores, t.block_shift}, xor_word{},
                                                    {.cache_slots = cache_slots}, Red{}, route);
    }
    const update_channel<Route, Red> ch = ch_;
    shoal::on_all_cores([ch] { tls_channel<Route, Red> = ch; });
  }
  routed_updater(const routed_updater&) = delete;
  routed_updater& operator=(const routed_updater&) = delete;
  ~routed_updater() override {
    shoal::on_all_cores([] { tls_channel<Route, Red> = update_channel<Route, Red>(); });
    ch_.close();
  }

  void apply_all() override {
    const gups_table t = t_;
    const std::int64_t updates = updates_;
    shoal::on_all_cores([t, updates] {
      const update_channel<Route, Red>& ch = tls_channel<Route, Red>;
      const int c = shoal::mycore();
      const bool first = c % shoal::local_cores() == 0;
      // This process's traffic to others during the updates, from a
      // snapshot taken when every core is here (nothing of this run sent);
      // the buffer peaks restart between two barriers (routing.hpp): after
      // on_all_cores' launch messages have left, and before any core's
      // updates, so that no reset drops a peak another core reached.
      // Hypercube routing bounds a process's peers only if the phase's own
      // barriers and waves go to neighbours too (routing.hpp).
      constexpr bool hypercube = std::is_same_v<Route, shoal::hypercube_routing>;
      if (hypercube) shoal::route_control_over_hypercube(true);
      shoal::barrier();
      shoal::reset_network_buffers_peak();
      shoal::barrier();
      const shoal::network_traffic before = shoal::local_network_traffic();
      update_stream s(t, share_begin(updates, c, shoal::cores()),
                      share_begin(updates, c + 1, shoal::cores()), max_outstanding);
      while (!s.done()) {
        s.next_chunk([&ch](int, std::uint64_t i, std::uint64_t r) {
          if constexpr (keyed<Red>) {
            ch.send(r);  // its word is r & mask
          } else {
            ch.send(i, r);
          }
        });
        ch.flush();  // the chunk leaves now, while this core applies its own words
        s.apply_own();
        shoal::yield();
      }
      ch.end_phase();  // every update, forwarded ones included, applied
      const shoal::network_traffic after = shoal::local_network_traffic();
      // One sum and one max over the job (not one collective per figure:
      // each costs a tree of ceil(log2 P) legs inside the timed region).
      const auto mine = [first](std::uint64_t x) {
        return first ? static_cast<std::int64_t>(x) : std::int64_t{0};
      };
      std::array<std::int64_t, 7> sums{
          mine(ch.local_route_stats().forwarded),
          mine(after.messages - before.messages),
          mine(after.bytes - before.bytes),
          mine(after.batches - before.batches),
          mine(after.network_buffers_sent - before.network_buffers_sent),
          0,
          0};
      if constexpr (!std::is_same_v<Red, shoal::reduction::none>) {
        const shoal::reduction_stats red = ch.local_reduction_stats();  // this process's cores
        sums[5] = mine(red.lookups);
        sums[6] = mine(red.hits);
      }
      std::array<std::int64_t, 4> maxes{
          mine(after.network_buffers), mine(after.network_buffers_peak),
          mine(after.coalescing_buffers_peak), mine(after.buffer_memory_peak())};
      shoal::allreduce_sum(std::span<std::int64_t>(sums));
      shoal::allreduce(std::span<std::int64_t>(maxes),
                       [](std::int64_t a, std::int64_t b) { return a < b ? b : a; });
      route_counts r;
      r.forwarded = sums[0];
      r.messages = sums[1];
      r.bytes = sums[2];
      r.batches = sums[3];
      r.mpi_messages = sums[4];
      r.reduction_lookups = sums[5];
      r.reduction_hits = sums[6];
      r.max_network_buffers = maxes[0];
      r.max_phase_network_buffers = maxes[1];
      r.max_coalescing_buffers = maxes[2];
      r.max_phase_buffer_bytes = maxes[3];
      r.network_buffer_bytes = static_cast<std::int64_t>(after.network_buffer_bytes);
      if (c == 0) g_counts = r;
      if (hypercube) shoal::route_control_over_hypercube(false);
    });
  }

 private:
  gups_table t_;
  std::int64_t updates_;
  update_channel<Route, Red> ch_;
};

}  // namespace

route_counts last_route_counts() { return g_counts; }

template <class Red>
std::unique_ptr<updater> make_with(const gups_table& t, const gups_problem& p,
                                   const std::string& routing, std::uint32_t cache_slots) {
  if (routing == "hypercube")
    return std::make_unique<routed_updater<shoal::hypercube_routing, Red>>(
        t, p, shoal::hypercube_routing{}, cache_slots);
  if (routing == "node")
    return std::make_unique<routed_updater<shoal::node_routing, Red>>(
        t, p, shoal::node_routing::from_launcher(), cache_slots);
  return std::make_unique<routed_updater<shoal::direct_routing, Red>>(t, p, shoal::direct_routing{},
                                                                      cache_slots);
}

std::unique_ptr<updater> make_routed_updater(const gups_table& t, const gups_problem& p,
                                             const std::string& routing, bool reduce_xor,
                                             std::uint32_t cache_slots) {
  g_counts = {};
  if (reduce_xor) return make_with<xor_values>(t, p, routing, cache_slots);
  return make_with<shoal::reduction::none>(t, p, routing, 0);
}

}  // namespace shoal_apps::gups
