// mpi_probe: start-up and failure handling of a job of several processes,
// driven by tests/CMakeLists.txt under mpirun (see run_expect.cmake).
//
//   mpi_probe [shoal flags]          init, check the transport's collectives
//                                     on every rank, print "probe: PASSED"
//   mpi_probe --fail-rank K           rank K fails (shoal's fatal path) after
//                                     init while the others wait in a barrier
//   mpi_probe --kill-rank K           rank K dies by SIGKILL after init
//   mpi_probe --exchange N            every rank sends N messages of varying
//                                     size (up to 64 KiB) to every rank, at
//                                     most 8 in flight per destination;
//                                     receivers check order and contents
//   mpi_probe --garbage-from K --garbage dest|length
//                                     rank K sends rank 0 a malformed network
//                                     buffer (a batch for a core rank 0 does not
//                                     have, or one longer than the buffer), then
//                                     every rank runs a job: rank 0 must refuse
//                                     the buffer with a message naming rank K
//
// Every rank checks what it can see itself; a wrong value exits non-zero.
#include "shoal/detail/buffer.hpp"
#include "shoal/shoal.hpp"

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "transport/transport.hpp"

namespace {

int flag_value(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return -1;
}

int fail(const std::string& what) {
  std::fprintf(stderr, "probe: FAILED on rank %d: %s\n", shoal::myrank(), what.c_str());
  return 1;
}

constexpr std::size_t max_bytes = 64 << 10;

struct exchange {
  int rank = 0;
  int ranks = 1;
  std::vector<int> in_flight;   // per destination
  std::vector<char> slot_busy;  // per (destination, window slot)
  int window = 8;
  std::vector<std::int64_t> next_expected;  // per source
  std::int64_t received = 0;
  std::int64_t sent = 0;
  std::string error;
  struct kept_message {
    char* data;
    int source;
    std::int64_t seq;
    std::size_t bytes;
  };
  std::vector<kept_message> kept;  // receive buffers kept until after the poll
};

std::size_t size_of(int src, std::int64_t seq) {
  // 16..64 KiB, varied and reproducible on both sides.
  return 16 + static_cast<std::size_t>((src * 7919 + seq * 104729) % (max_bytes - 16));
}

char byte_at(int src, std::int64_t seq, std::size_t j) {
  return static_cast<char>((src * 131 + seq * 17 + static_cast<std::int64_t>(j)) & 0xff);
}

void on_sent(void* ctx, void* token) {
  auto* x = static_cast<exchange*>(ctx);
  // Sends may finish in any order: the token names the slot it used.
  const auto slot = static_cast<std::size_t>(reinterpret_cast<std::intptr_t>(token));
  x->slot_busy[slot] = 0;
  --x->in_flight[slot / static_cast<std::size_t>(x->window)];
  ++x->sent;
}

void check_bytes(exchange* x, int source, std::int64_t seq, const char* data, std::size_t bytes) {
  for (std::size_t j = 16; j < bytes; ++j)
    if (data[j] != byte_at(source, seq, j) && x->error.empty())
      x->error = "corrupted byte in a message from rank " + std::to_string(source);
}

// Keeps every other message's buffer until after the poll (as the network
// does while cores handle its batches): it must stay intact until recycled.
bool on_received(void* ctx, int source, char* data, std::size_t bytes) {
  auto* x = static_cast<exchange*>(ctx);
  ++x->received;
  std::int64_t seq = 0;
  std::memcpy(&seq, data + 8, sizeof seq);
  std::int64_t& want = x->next_expected[static_cast<std::size_t>(source)];
  if (seq != want && x->error.empty())
    x->error = "message " + std::to_string(seq) + " from rank " + std::to_string(source) +
               " arrived when " + std::to_string(want) + " was due";
  want = seq + 1;
  if (bytes != size_of(source, seq) && x->error.empty())
    x->error = "message of wrong size from rank " + std::to_string(source);
  check_bytes(x, source, seq, data, bytes);
  if (seq % 2 == 0) return false;
  x->kept.push_back(exchange::kept_message{data, source, seq, bytes});
  return true;
}

void recycle_kept(shoal::detail::transport& net, exchange& x) {
  for (const exchange::kept_message& k : x.kept) {
    check_bytes(&x, k.source, k.seq, k.data, k.bytes);
    net.recycle(k.data);
  }
  x.kept.clear();
}

int run_exchange(shoal::detail::transport& net, std::int64_t n) {
  exchange x;
  x.rank = net.rank();
  x.ranks = net.ranks();
  x.in_flight.assign(static_cast<std::size_t>(x.ranks), 0);
  x.next_expected.assign(static_cast<std::size_t>(x.ranks), 0);
  net.start_messages(max_bytes, 16);
  const int window = x.window;
  x.slot_busy.assign(static_cast<std::size_t>(x.ranks * window), 0);
  // One buffer per (destination, window slot); a slot is reused once sent.
  std::vector<std::vector<char>> slots(static_cast<std::size_t>(x.ranks * window),
                                       std::vector<char>(max_bytes));
  const shoal::detail::transport::events ev{&x, on_sent, on_received};
  std::vector<std::int64_t> next_seq(static_cast<std::size_t>(x.ranks), 0);
  const std::int64_t total = n * x.ranks;
  while (x.received < total || x.sent < total) {
    for (int d = 0; d < x.ranks; ++d) {
      const auto du = static_cast<std::size_t>(d);
      while (next_seq[du] < n && x.in_flight[du] < window) {
        const std::int64_t seq = next_seq[du]++;
        std::size_t slot = du * static_cast<std::size_t>(window);
        while (x.slot_busy[slot]) ++slot;  // in_flight < window: one is free
        x.slot_busy[slot] = 1;
        std::vector<char>& b = slots[slot];
        const std::size_t bytes = size_of(x.rank, seq);
        const std::int64_t src = x.rank;
        std::memcpy(b.data(), &src, 8);
        std::memcpy(b.data() + 8, &seq, 8);
        for (std::size_t j = 16; j < bytes; ++j) b[j] = byte_at(x.rank, seq, j);
        ++x.in_flight[du];
        net.send(d, b.data(), bytes, reinterpret_cast<void*>(static_cast<std::intptr_t>(slot)));
      }
    }
    net.poll(ev, true);
    recycle_kept(net, x);
  }
  if (!x.error.empty()) return fail(x.error);
  for (int s = 0; s < x.ranks; ++s)
    if (x.next_expected[static_cast<std::size_t>(s)] != n)
      return fail("wrong message count from rank " + std::to_string(s));
  net.barrier();
  if (x.rank == 0)
    std::printf("exchange: %lld messages per rank pair, order and contents checked: PASSED\n",
                static_cast<long long>(n));
  return 0;
}

const char* string_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return "";
}

// Sends rank 0 one network buffer that the receive path must refuse, bypassing
// this rank's network (which would never stage such a batch), and waits until
// the send is done so that the network never sees its completion.
void send_garbage(shoal::detail::transport& net, const std::string& kind) {
  alignas(64) static char bytes[128] = {};
  shoal::detail::buffer h;
  h.stream = 0;
  h.count = 1;
  h.source = net.rank() * shoal::local_cores();
  h.bytes = kind == "length" ? (1u << 30) : 16;
  h.dest = kind == "length" ? 0 : (1 << 20);
  std::memcpy(bytes, static_cast<const void*>(&h), sizeof h);
  const std::int32_t run[2] = {0, 8};  // a run of one 8-byte closure
  std::memcpy(bytes + sizeof h, run, sizeof run);
  bool sent = false;
  net.send(0, bytes, sizeof bytes, &sent);
  const shoal::detail::transport::events e{
      &sent, [](void* ctx, void*) { *static_cast<bool*>(ctx) = true; },
      [](void*, int, char*, std::size_t) { return false; }};
  while (!sent) net.poll(e, false);
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  const int fail_rank = flag_value(argc, argv, "--fail-rank");
  const int kill_rank = flag_value(argc, argv, "--kill-rank");
  const int exchange_n = flag_value(argc, argv, "--exchange");
  auto* net = shoal::detail::current_transport();
  if (net == nullptr) return fail("no transport after init");
  const int rank = shoal::myrank();
  const int ranks = shoal::ranks();
  if (net->rank() != rank || net->ranks() != ranks) return fail("rank/ranks disagree");
  if (shoal::cores() != ranks * shoal::local_cores()) return fail("cores() != ranks * local cores");

  if (rank == fail_rank) {
    shoal::detail::fatal_user("probe failure requested by --fail-rank");
  }
  if (rank == kill_rank) std::raise(SIGKILL);
  if (fail_rank >= 0 || kill_rank >= 0) {
    net->barrier();  // the failed rank never arrives: the job must end anyway
    return fail("barrier passed although a rank failed");
  }

  const int garbage_from = flag_value(argc, argv, "--garbage-from");
  if (garbage_from >= 0) {
    if (rank == garbage_from) send_garbage(*net, string_flag(argc, argv, "--garbage"));
    net->barrier();  // sent before any rank's network is driven
    // Barriers keep every core polling its network until the buffer is met.
    shoal::run([] {
      shoal::on_all_cores([] {
        for (int i = 0; i < 200; ++i) shoal::barrier();
      });
    });
    shoal::finalize();
    return fail("the malformed buffer was not refused");
  }

  if (exchange_n > 0) {
    const int rc = run_exchange(*net, exchange_n);
    shoal::finalize();
    return rc;
  }

  // Collectives: sums and a gather of values every rank can predict.
  std::uint64_t v[2] = {static_cast<std::uint64_t>(rank) + 1, 1};
  net->allreduce_sum(v, 2);
  const auto n = static_cast<std::uint64_t>(ranks);
  if (v[0] != n * (n + 1) / 2 || v[1] != n) return fail("allreduce_sum gave a wrong sum");
  std::vector<int> all(static_cast<std::size_t>(ranks), -1);
  const int mine = rank * 7 + 3;
  net->allgather(&mine, all.data(), sizeof mine);
  for (int r = 0; r < ranks; ++r)
    if (all[static_cast<std::size_t>(r)] != r * 7 + 3) return fail("allgather gave a wrong value");
  net->barrier();
  if (rank == 0)
    std::printf("probe: %d ranks x %d cores, transport %s: PASSED\n", ranks, shoal::local_cores(),
                net->name());
  shoal::finalize();
  return 0;
}
