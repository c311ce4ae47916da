// message_rate: 16-byte messages between processes, four ways, in one run:
// shoal's typed channel, shoal's closure messages, one MPI_Isend per message,
// and MPI_Alltoallv of the same messages pre-bucketed (the hand-tuned bulk
// baseline). The MPI modes use no shoal at all (shoal only initialises MPI
// and stays idle between its runs), so they are the plain-MPI baselines.
//
// Build target: bench-distributed-messages (only when CMake finds MPI).
// Run:          mpirun --oversubscribe -np 2 build/bin/bench-distributed-messages --cores 1
//               (or `make bench-mpi`); shoal's flags (--cores ...) are accepted.
//
// Every rank sends --messages N 16-byte messages, round robin over the other
// ranks: message i of rank r goes to rank (r + 1 + i mod (P-1)) mod P. Each
// message carries {sender rank, sequence number}; the sequence numbers of the
// messages from one sender to one receiver are 0, 1, 2, ... Receivers count
// the messages from each sender and sum their sequence numbers; a run passes
// when every count is exact and every sum is n*(n-1)/2.
//
// Modes (--mode LIST, comma-separated, of channel, closure, isend,
// alltoallv; `all` (default), `mpi` = isend,alltoallv, `shoal` =
// channel,closure):
//   channel    shoal typed channel: ch.send(core, message); the handler tallies.
//              With --cores C each rank's N messages are split over its C
//              cores; message i goes to core (i mod C) of its destination rank.
//   closure    the same with shoal::send(core, [m] { tally(m); }).
//   isend      one MPI_Isend per message, from a ring of --window (1024)
//              send slots, recycled as MPI_Testsome reports them complete;
//              receives pre-posted as MPI_Irecv(MPI_ANY_SOURCE) into a ring of
//              --window buffers, reposted as they complete. A realistic
//              per-message MPI program, with two pieces of hand tuning that
//              it needs to run well (see run_isend): flow control (one message
//              in inflight/4 is an MPI_Issend, at most 4 outstanding per
//              destination, so about --inflight (64) unmatched messages per
//              destination) and polling only the --poll (64) oldest requests of
//              each ring per MPI_Testsome call.
//   alltoallv  bulk-synchronous (what bale / the NPB do): in rounds of at most
//              --round (1,000,000) messages per rank, messages are written
//              into one contiguous bucket per destination, the counts are
//              exchanged with MPI_Alltoall, the buckets with MPI_Alltoallv,
//              and the received messages are consumed (counted / summed).
//
// In every mode the clock covers generating the messages, moving them and
// consuming them on the receiver: from a barrier to the moment the slowest
// rank has received and checked everything (the maximum over ranks of the
// local elapsed time; for shoal, shoal::run() returns once the job is
// quiescent, termination detection included). messages/s per rank = N / that
// time; total = N*P / that time. One warm-up repetition per mode, then
// --repetitions R timed ones; modes are interleaved (A B C D, D C B A, ...)
// so that a placement change of the host affects all. Medians are over
// repetitions.
//
// Exit status: 0 success; 1 a verification failure; 2 a bad command line
// (every rank parses the same argv; rank 0 prints the error). With a single
// rank there is nobody to send to: the program says so and exits 0, so that
// `make bench` (which runs every build/bin/bench-* without mpirun, passing
// --benchmark_* flags) does not fail on it; --benchmark_* flags are accepted
// and ignored for the same reason.
#include <mpi.h>

#include <shoal/shoal.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

struct message {
  std::uint64_t sender;
  std::uint64_t seq;
};
static_assert(sizeof(message) == 16, "the benchmark is about 16-byte messages");

constexpr int kTag = 17;
constexpr int kExitBadFlags = 2;
constexpr int kExitVerifyFailed = 1;

// ---------------------------------------------------------------- options

enum class mode { channel, closure, isend, alltoallv };
constexpr int kModes = 4;
constexpr const char* kModeNames[kModes] = {"channel", "closure", "isend", "alltoallv"};
const char* mode_name(mode m) { return kModeNames[static_cast<int>(m)]; }

struct options {
  bool run[kModes] = {true, true, true, true};
  std::uint64_t messages = 10'000'000;
  int repetitions = 5;
  int window = 1024;
  int inflight = 64;
  int poll = 64;
  std::uint64_t round = 1'000'000;
  bool json = false;
  bool help = false;
};

const char* const kUsage =
    "usage: mpirun -np P bench-distributed-messages [shoal flags] [options]   (P >= 2)\n"
    "  --mode LIST                  comma-separated modes among channel, closure, isend,\n"
    "                               alltoallv; or all (default), mpi, shoal\n"
    "  --messages N                 16-byte messages sent per rank per repetition\n"
    "                               (default 10000000, at least 1)\n"
    "  --repetitions R              timed repetitions after 1 warm-up (default 5, 1..1000)\n"
    "  --window W                   isend: outstanding sends and pre-posted receives\n"
    "                               (default 1024, 1..65536)\n"
    "  --inflight F                 isend: unmatched messages per destination, about\n"
    "                               (flow control; default 64, 1..65536)\n"
    "  --poll C                     isend: requests MPI_Testsome looks at per call, the\n"
    "                               oldest of each window (default 64, 1..65536)\n"
    "  --round M                    alltoallv: messages per rank per round\n"
    "                               (default 1000000, 1..100000000)\n"
    "  --json                       print one JSON object instead of text\n"
    "  --help                       this text\n"
    "  (--benchmark_* flags, as passed by `make bench`, are ignored)\n";

bool parse_u64(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return false;
  const char* first = text.data();
  const char* last = first + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc{} && ptr == last;
}

// Returns an empty string on success, else the error message.
std::string parse_options(int argc, char** argv, options& opt) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.rfind("--benchmark_", 0) == 0) continue;  // from `make bench`
    if (arg == "--json") {
      opt.json = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      opt.help = true;
      continue;
    }
    // --name value or --name=value
    std::string_view name = arg;
    std::string_view value;
    bool have_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      have_value = true;
    }
    const bool takes_value = name == "--mode" || name == "--messages" ||
                             name == "--repetitions" || name == "--window" || name == "--round" ||
                             name == "--inflight" || name == "--poll";
    if (!takes_value) return "unknown argument '" + std::string(arg) + "'";
    if (!have_value) {
      if (i + 1 >= argc) return std::string(name) + " needs a value";
      value = argv[++i];
    }
    const std::string shown = std::string(name) + " '" + std::string(value) + "'";
    std::uint64_t number = 0;
    if (name == "--mode") {
      for (bool& r : opt.run) r = false;
      std::string_view rest = value;
      while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view word = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        bool known = false;
        for (int m = 0; m < kModes; ++m) {
          const bool in_group = word == "all" || (word == "mpi" && m >= 2) ||
                                (word == "shoal" && m < 2) || word == kModeNames[m];
          if (in_group) opt.run[m] = known = true;
        }
        if (!known)
          return "bad " + shown + ": expected a comma-separated list of channel, closure, " +
                 "isend, alltoallv, all, mpi, shoal";
      }
    } else if (name == "--messages") {
      if (!parse_u64(value, number) || number < 1 || number > (std::uint64_t{1} << 40))
        return "bad " + shown + ": expected an integer in 1..2^40";
      opt.messages = number;
    } else if (name == "--repetitions") {
      if (!parse_u64(value, number) || number < 1 || number > 1000)
        return "bad " + shown + ": expected an integer in 1..1000";
      opt.repetitions = static_cast<int>(number);
    } else if (name == "--window") {
      if (!parse_u64(value, number) || number < 1 || number > 65536)
        return "bad " + shown + ": expected an integer in 1..65536";
      opt.window = static_cast<int>(number);
    } else if (name == "--inflight" || name == "--poll") {
      if (!parse_u64(value, number) || number < 1 || number > 65536)
        return "bad " + shown + ": expected an integer in 1..65536";
      (name == "--inflight" ? opt.inflight : opt.poll) = static_cast<int>(number);
    } else {  // --round
      if (!parse_u64(value, number) || number < 1 || number > 100'000'000)
        return "bad " + shown + ": expected an integer in 1..100000000";
      opt.round = number;
    }
  }
  return {};
}

// ---------------------------------------------------------------- pattern

// Who sends what to whom; identical on every rank.
struct pattern {
  int rank;
  int size;
  std::uint64_t n;  // messages sent by each rank

  // Messages rank `from` sends to the j-th of its destinations
  // (j = 0..size-2; destination (from + 1 + j) mod size).
  std::uint64_t count_to_index(int j) const {
    const auto others = static_cast<std::uint64_t>(size - 1);
    return (n + others - 1 - static_cast<std::uint64_t>(j)) / others;
  }
  // Destination index of `me` as seen from sender `from` (from != me).
  int index_of(int from, int me) const { return (me - from - 1 + size) % size; }
  std::uint64_t expected_from(int from) const {
    return from == rank ? 0 : count_to_index(index_of(from, rank));
  }
  std::uint64_t expected_total() const {
    std::uint64_t total = 0;
    for (int s = 0; s < size; ++s) total += expected_from(s);
    return total;
  }
};

// Walks message indices 0, 1, 2, ... of this rank without a division per message.
struct message_cursor {
  int others;
  int j = 0;             // destination index of the next message
  std::uint64_t seq = 0;  // its sequence number (same for every destination index)
  explicit message_cursor(int others_) : others(others_) {}
  void advance() {
    if (++j == others) {
      j = 0;
      ++seq;
    }
  }
};

// What one rank received in one repetition.
struct tally {
  std::vector<std::uint64_t> count;
  std::vector<std::uint64_t> seq_sum;
  std::uint64_t bad_sender = 0;  // sender field out of range / not the MPI source

  explicit tally(int size) : count(size, 0), seq_sum(size, 0) {}
  void add(const message& m, int size) {
    if (m.sender >= static_cast<std::uint64_t>(size)) {
      ++bad_sender;
      return;
    }
    ++count[m.sender];
    seq_sum[m.sender] += m.seq;
  }
};

// Checks this rank's tally; prints details to stderr when it fails.
bool verify(const pattern& p, const tally& t, const char* mode) {
  bool ok = true;
  if (t.bad_sender != 0) {
    std::fprintf(stderr, "[rank %d] %s: %llu messages with a bad sender field\n", p.rank, mode,
                 static_cast<unsigned long long>(t.bad_sender));
    ok = false;
  }
  for (int s = 0; s < p.size; ++s) {
    const std::uint64_t want = p.expected_from(s);
    const std::uint64_t want_sum = want == 0 ? 0 : want * (want - 1) / 2;
    if (t.count[s] != want || t.seq_sum[s] != want_sum) {
      std::fprintf(stderr,
                   "[rank %d] %s: from rank %d got %llu messages (want %llu), "
                   "sequence sum %llu (want %llu)\n",
                   p.rank, mode, s, static_cast<unsigned long long>(t.count[s]),
                   static_cast<unsigned long long>(want),
                   static_cast<unsigned long long>(t.seq_sum[s]),
                   static_cast<unsigned long long>(want_sum));
      ok = false;
    }
  }
  return ok;
}

// ---------------------------------------------------------------- isend mode

// Flow control. With the shared-memory transport an eager MPI_Isend of 16 bytes
// completes as soon as the data is copied out, whether or not the receiver has
// matched it, so the send window alone does not stop a sender from flooding a
// receiver that is a little slower: unmatched messages pile up in OpenMPI's
// unexpected and pending-send queues, and the program slows down super-linearly
// (it ran for more than 10 minutes on 1M messages per rank without this).
// So one message in every inflight/4 to a destination goes as MPI_Issend, which
// completes only once the receiver has matched it (and, messages being
// non-overtaking, everything sent to it before); a sender keeps at most 4 of
// them outstanding per destination, which bounds the unmatched messages per
// destination to about --inflight. This is the usual hand-tuned credit scheme,
// with MPI's own synchronous-send acknowledgement as the credit.
constexpr int kMaxCheckpoints = 4;

// Polling. OpenMPI's MPI_Testsome scans every request it is given, so calling it
// on all 2 x 1024 requests costs microseconds per call and dominated the run.
// Both windows are rings used in order: receives with the same (MPI_ANY_SOURCE,
// tag) signature are matched in the order they were posted, and sends mostly
// complete in the order they were posted. So MPI_Testsome looks only at the
// --poll oldest requests of each ring, and slots are recycled from the head.
// A slot that completes out of order is recycled when the head reaches it.
class ring {
 public:
  explicit ring(int size) : requests_(size, MPI_REQUEST_NULL), done_(size, 0), index_(size) {}
  int size() const { return static_cast<int>(requests_.size()); }
  int active() const { return active_; }
  bool full() const { return active_ == size(); }
  // The slot the next request goes into (valid when !full()).
  int next_slot() const { return (head_ + active_) % size(); }
  MPI_Request* request(int slot) { return &requests_[slot]; }
  void posted() { ++active_; }
  // MPI_Testsome on the oldest `chunk` active requests (not wrapping); calls
  // on_done(slot) for each completed one, in slot order when possible; then
  // retires completed slots from the head. Returns how many completed.
  template <class F>
  int poll(int chunk, F&& on_done) {
    if (active_ == 0) return 0;
    const int n = std::min({chunk, active_, size() - head_});
    int outcount = 0;
    MPI_Testsome(n, &requests_[head_], &outcount, index_.data(), MPI_STATUSES_IGNORE);
    if (outcount == MPI_UNDEFINED || outcount == 0) return 0;
    for (int d = 0; d < outcount; ++d) {
      const int slot = head_ + index_[d];
      on_done(slot);
      done_[slot] = 1;
    }
    while (active_ > 0 && done_[head_] != 0) {
      done_[head_] = 0;
      head_ = (head_ + 1) % size();
      --active_;
    }
    return outcount;
  }

 private:
  std::vector<MPI_Request> requests_;
  std::vector<char> done_;
  std::vector<int> index_;
  int head_ = 0;
  int active_ = 0;
};

void run_isend(const pattern& p, const options& opt, tally& t) {
  const int P = p.size;
  const std::uint64_t interval = std::max(1, opt.inflight / kMaxCheckpoints);
  const std::uint64_t expected = p.expected_total();
  ring recvs(opt.window);
  ring sends(opt.window);
  std::vector<message> rbuf(opt.window);
  std::vector<message> sbuf(opt.window);
  std::vector<int> slot_checkpoint_dest(opt.window, -1);  // destination of an Issend slot
  std::vector<std::uint64_t> sent_to(P, 0);
  std::vector<int> checkpoints(P, 0);  // outstanding MPI_Issends per destination

  std::uint64_t recv_posted = 0;
  std::uint64_t received = 0;
  std::uint64_t sent = 0;        // posted
  std::uint64_t sends_done = 0;  // completed
  auto post_recvs = [&] {
    while (recv_posted < expected && !recvs.full()) {
      const int k = recvs.next_slot();
      MPI_Irecv(&rbuf[k], sizeof(message), MPI_BYTE, MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD,
                recvs.request(k));
      recvs.posted();
      ++recv_posted;
    }
  };
  post_recvs();

  message_cursor cur(P - 1);
  const auto sender = static_cast<std::uint64_t>(p.rank);
  while (received < expected || sends_done < p.n) {
    while (sent < p.n && !sends.full()) {
      const int dest = (p.rank + 1 + cur.j) % P;
      const bool checkpoint = (sent_to[dest] + 1) % interval == 0;
      if (checkpoint && checkpoints[dest] == kMaxCheckpoints) break;  // wait for the receiver
      const int k = sends.next_slot();
      sbuf[k] = message{sender, cur.seq};
      if (checkpoint) {
        MPI_Issend(&sbuf[k], sizeof(message), MPI_BYTE, dest, kTag, MPI_COMM_WORLD,
                   sends.request(k));
        slot_checkpoint_dest[k] = dest;
        ++checkpoints[dest];
      } else {
        MPI_Isend(&sbuf[k], sizeof(message), MPI_BYTE, dest, kTag, MPI_COMM_WORLD,
                  sends.request(k));
      }
      sends.posted();
      ++sent_to[dest];
      cur.advance();
      ++sent;
    }
    received += static_cast<std::uint64_t>(recvs.poll(opt.poll, [&](int k) { t.add(rbuf[k], P); }));
    post_recvs();
    sends_done += static_cast<std::uint64_t>(sends.poll(opt.poll, [&](int k) {
      if (slot_checkpoint_dest[k] >= 0) {
        --checkpoints[slot_checkpoint_dest[k]];
        slot_checkpoint_dest[k] = -1;
      }
    }));
  }
}

// ---------------------------------------------------------------- alltoallv mode

// Returns the seconds this rank spent inside MPI_Alltoall + MPI_Alltoallv.
double run_alltoallv(const pattern& p, std::uint64_t round, MPI_Datatype msg_type, tally& t) {
  const int P = p.size;
  const std::uint64_t max_round = std::min(round, p.n);
  std::vector<message> sendbuf(max_round);
  std::vector<message> recvbuf;
  recvbuf.reserve(max_round);
  std::vector<int> sendcounts(P), sdispls(P), recvcounts(P), rdispls(P), cursor(P);
  message_cursor cur(P - 1);
  const auto sender = static_cast<std::uint64_t>(p.rank);
  double mpi_seconds = 0;

  for (std::uint64_t base = 0; base < p.n; base += max_round) {
    const std::uint64_t m = std::min(max_round, p.n - base);
    // Bucket sizes for messages [base, base + m): the cursor starts at
    // destination index cur.j, so index j gets ceil-ish share.
    std::fill(sendcounts.begin(), sendcounts.end(), 0);
    {
      const auto others = static_cast<std::uint64_t>(P - 1);
      for (int j = 0; j < P - 1; ++j) {
        // messages k in [0, m) with (cur.j + k) mod others == j
        const std::uint64_t first = (static_cast<std::uint64_t>(j) + others -
                                     static_cast<std::uint64_t>(cur.j)) % others;
        const std::uint64_t c = first < m ? (m - first + others - 1) / others : 0;
        sendcounts[(p.rank + 1 + j) % P] = static_cast<int>(c);
      }
    }
    int offset = 0;
    for (int d = 0; d < P; ++d) {
      sdispls[d] = offset;
      cursor[d] = offset;
      offset += sendcounts[d];
    }
    // Generate the messages straight into their destination's bucket.
    for (std::uint64_t k = 0; k < m; ++k) {
      const int dest = (p.rank + 1 + cur.j) % P;
      sendbuf[static_cast<std::size_t>(cursor[dest]++)] = message{sender, cur.seq};
      cur.advance();
    }

    const double t0 = MPI_Wtime();
    MPI_Alltoall(sendcounts.data(), 1, MPI_INT, recvcounts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::size_t incoming = 0;
    for (int s = 0; s < P; ++s) {
      rdispls[s] = static_cast<int>(incoming);
      incoming += static_cast<std::size_t>(recvcounts[s]);
    }
    recvbuf.resize(incoming);
    MPI_Alltoallv(sendbuf.data(), sendcounts.data(), sdispls.data(), msg_type, recvbuf.data(),
                  recvcounts.data(), rdispls.data(), msg_type, MPI_COMM_WORLD);
    mpi_seconds += MPI_Wtime() - t0;

    // Consume: the block from rank s must carry sender s.
    for (int s = 0; s < P; ++s) {
      const message* first = recvbuf.data() + rdispls[s];
      const message* last = first + recvcounts[s];
      std::uint64_t count = 0;
      std::uint64_t sum = 0;
      std::uint64_t bad = 0;
      for (const message* q = first; q != last; ++q) {
        bad += q->sender != static_cast<std::uint64_t>(s);
        ++count;
        sum += q->seq;
      }
      t.count[s] += count - bad;
      t.seq_sum[s] += sum;
      t.bad_sender += bad;
    }
  }
  return mpi_seconds;
}

// ---------------------------------------------------------------- driver

// ---------------------------------------------------------------- shoal modes

// One tally per core of this process; a core's handlers touch only its own.
std::vector<tally>* g_tallies = nullptr;

void tally_here(const message& m) {
  // This core's index in its process, without a division per message.
  const int local = shoal::mycore() - shoal::myrank() * shoal::local_cores();
  (*g_tallies)[static_cast<std::size_t>(local)].add(m, shoal::ranks());
}

// This core's share of its rank's messages: indices [lo, hi) of the rank's
// sequence; message i goes to destination index i mod (P-1), sequence number
// i / (P-1), core (i mod C) of the destination rank.
template <class Send>
void send_share(const pattern& p, const Send& send_one) {
  const int c = shoal::local_cores();
  const auto k = static_cast<std::uint64_t>(shoal::mycore() % c);
  const std::uint64_t lo = p.n * k / static_cast<std::uint64_t>(c);
  const std::uint64_t hi = p.n * (k + 1) / static_cast<std::uint64_t>(c);
  const auto others = static_cast<std::uint64_t>(p.size - 1);
  message_cursor cur(p.size - 1);
  cur.j = static_cast<int>(lo % others);
  cur.seq = lo / others;
  const auto sender = static_cast<std::uint64_t>(p.rank);
  // Counters instead of a division per message (the baselines do one).
  int dest_rank = (p.rank + 1 + cur.j) % p.size;
  int dest_local = static_cast<int>(lo % static_cast<std::uint64_t>(c));
  for (std::uint64_t i = lo; i < hi; ++i) {
    send_one(dest_rank * c + dest_local, message{sender, cur.seq});
    cur.advance();
    if (++dest_rank == p.size) dest_rank = 0;
    if (cur.j == 0) dest_rank = (p.rank + 1) % p.size;
    if (++dest_local == c) dest_local = 0;
  }
}

void run_shoal(mode which, const pattern& p) {
  // Every rank's cores send: the root starts a sender task on each core of
  // the job, and run() returns on every rank once the job is quiescent.
  const pattern q = p;
  shoal::run([which, q] {
    if (which == mode::channel) {
      auto ch = shoal::make_channel<message>([](const message& m) { tally_here(m); });
      shoal::on_all_cores([ch, q] {
        pattern mine = q;
        mine.rank = shoal::myrank();
        send_share(mine, [ch](int core, const message& m) { ch.send(core, m); });
      });
      // close() needs no message of the channel in flight: leave that to the
      // quiescence at the end of run() and close at the start of the next.
      static shoal::channel<message> last;
      if (last) last.close();
      last = ch;
    } else {
      shoal::on_all_cores([q] {
        pattern mine = q;
        mine.rank = shoal::myrank();
        send_share(mine, [](int core, const message& m) {
          shoal::send(core, [m] { tally_here(m); });
        });
      });
    }
  });
}

struct sample {
  double seconds;       // max over ranks of the local elapsed time
  double mpi_seconds;   // alltoallv: max over ranks of the time inside the collectives
  double rate_per_rank;
  double rate_total;
};

struct mode_result {
  mode which;
  std::vector<sample> samples;  // timed repetitions only
  bool verified = true;
};

// One repetition of one mode on every rank; collective.
sample run_once(mode which, const pattern& p, const options& opt, MPI_Datatype msg_type,
                bool& verified) {
  tally t(p.size);
  std::vector<tally> per_core(static_cast<std::size_t>(shoal::local_cores()), tally(p.size));
  g_tallies = &per_core;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  double mpi_local = 0;
  if (which == mode::isend) {
    run_isend(p, opt, t);
  } else if (which == mode::alltoallv) {
    mpi_local = run_alltoallv(p, opt.round, msg_type, t);
  } else {
    run_shoal(which, p);
  }
  const double local = MPI_Wtime() - t0;
  for (const tally& c : per_core) {
    for (int s = 0; s < p.size; ++s) {
      t.count[static_cast<std::size_t>(s)] += c.count[static_cast<std::size_t>(s)];
      t.seq_sum[static_cast<std::size_t>(s)] += c.seq_sum[static_cast<std::size_t>(s)];
    }
    t.bad_sender += c.bad_sender;
  }
  const int ok_local = verify(p, t, mode_name(which)) ? 1 : 0;

  double in[2] = {local, mpi_local};
  double out[2] = {0, 0};
  MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok_all = 0;
  MPI_Allreduce(&ok_local, &ok_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (ok_all == 0) verified = false;

  const double n = static_cast<double>(p.n);
  return sample{out[0], out[1], n / out[0], n * p.size / out[0]};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 != 0 ? v[h] : (v[h - 1] + v[h]) / 2;
}

template <class F>
double median_of(const std::vector<sample>& s, F field) {
  std::vector<double> v;
  v.reserve(s.size());
  for (const sample& x : s) v.push_back(field(x));
  return median(std::move(v));
}

void print_text(const pattern& p, const options& opt, const std::vector<mode_result>& results) {
  std::printf(
      "message_rate: %d ranks x %d cores, 16-byte messages, %llu messages per rank, "
      "%d repetitions after 1 warm-up\n",
      p.size, shoal::local_cores(), static_cast<unsigned long long>(p.n), opt.repetitions);
  for (const mode_result& r : results) {
    if (r.which == mode::channel)
      std::printf("shoal typed channel (aggregated, %lld-byte network buffers):\n",
                  static_cast<long long>(shoal::current_config().network_bytes));
    else if (r.which == mode::closure)
      std::printf("shoal closure messages (8-byte header + 16-byte closure each):\n");
    else if (r.which == mode::isend)
      std::printf(
          "isend (window %d sends + %d pre-posted receives, inflight %d, MPI_Testsome on "
          "the %d oldest):\n",
          opt.window, opt.window, opt.inflight, opt.poll);
    else
      std::printf("alltoallv (rounds of at most %llu messages per rank):\n",
                  static_cast<unsigned long long>(opt.round));
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
      const sample& s = r.samples[i];
      std::printf("  rep %zu: %8.4f s  %8.2f M msg/s per rank  %8.2f M msg/s total", i + 1,
                  s.seconds, s.rate_per_rank / 1e6, s.rate_total / 1e6);
      if (r.which == mode::alltoallv) std::printf("  (%.4f s in MPI)", s.mpi_seconds);
      std::printf("\n");
    }
    std::printf("  median: %8.4f s  %8.2f M msg/s per rank  %8.2f M msg/s total  [%s]\n",
                median_of(r.samples, [](const sample& s) { return s.seconds; }),
                median_of(r.samples, [](const sample& s) { return s.rate_per_rank; }) / 1e6,
                median_of(r.samples, [](const sample& s) { return s.rate_total; }) / 1e6,
                r.verified ? "verified" : "VERIFICATION FAILED");
  }
  // Ratios of shoal to the baselines, per repetition (the modes of one
  // repetition ran back to back), then the median: the host's placement
  // changes affect both sides of a pair alike.
  const auto find = [&results](mode m) -> const mode_result* {
    for (const mode_result& r : results)
      if (r.which == m) return &r;
    return nullptr;
  };
  for (mode shoal_mode : {mode::channel, mode::closure}) {
    const mode_result* a = find(shoal_mode);
    if (a == nullptr) continue;
    for (auto [base, target] : {std::pair{mode::isend, 10.0}, std::pair{mode::alltoallv, 0.5}}) {
      const mode_result* b = find(base);
      if (b == nullptr) continue;
      std::vector<double> ratios;
      for (std::size_t i = 0; i < a->samples.size() && i < b->samples.size(); ++i)
        ratios.push_back(a->samples[i].rate_per_rank / b->samples[i].rate_per_rank);
      const double m = median(ratios);
      std::printf("ratio %s / %s: median of per-repetition ratios %.2f (target >= %.1f: %s)\n",
                  mode_name(shoal_mode), mode_name(base), m, target, m >= target ? "met" : "NOT met");
    }
  }
}

void print_json(const pattern& p, const options& opt, const std::vector<mode_result>& results) {
  std::printf(
      "{\"benchmark\":\"message_rate\",\"ranks\":%d,\"message_bytes\":16,"
      "\"messages_per_rank\":%llu,\"repetitions\":%d,\"warmup_repetitions\":1,"
      "\"window\":%d,\"inflight\":%d,\"poll\":%d,\"round_messages\":%llu,\"modes\":{",
      p.size, static_cast<unsigned long long>(p.n), opt.repetitions, opt.window, opt.inflight,
      opt.poll,
      static_cast<unsigned long long>(opt.round));
  bool first_mode = true;
  for (const mode_result& r : results) {
    std::printf("%s\"%s\":{\"verified\":%s,\"samples\":[", first_mode ? "" : ",",
                mode_name(r.which), r.verified ? "true" : "false");
    first_mode = false;
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
      const sample& s = r.samples[i];
      std::printf("%s{\"seconds\":%.6f,\"msgs_per_s_per_rank\":%.1f,\"msgs_per_s_total\":%.1f",
                  i == 0 ? "" : ",", s.seconds, s.rate_per_rank, s.rate_total);
      if (r.which == mode::alltoallv) std::printf(",\"mpi_seconds\":%.6f", s.mpi_seconds);
      std::printf("}");
    }
    std::printf(
        "],\"median_seconds\":%.6f,\"median_msgs_per_s_per_rank\":%.1f,"
        "\"median_msgs_per_s_total\":%.1f}",
        median_of(r.samples, [](const sample& s) { return s.seconds; }),
        median_of(r.samples, [](const sample& s) { return s.rate_per_rank; }),
        median_of(r.samples, [](const sample& s) { return s.rate_total; }));
  }
  std::printf("}}\n");
}

}  // namespace

int main(int argc, char** argv) {
  shoal::init(argc, argv);  // initialises MPI (when launched by mpirun); removes shoal's flags
  const int rank = shoal::myrank();
  const int size = shoal::ranks();

  options opt;
  // Every rank parses the same argv, so every rank reaches the same verdict.
  const std::string error = parse_options(argc, argv, opt);
  if (!error.empty() || opt.help) {
    if (rank == 0) {
      if (!error.empty())
        std::fprintf(stderr, "bench-distributed-messages: %s\n%s", error.c_str(), kUsage);
      else
        std::fputs(kUsage, stdout);
    }
    shoal::finalize();  // MPI_Finalize runs at exit
    return error.empty() ? 0 : kExitBadFlags;
  }
  if (size < 2) {
    std::fprintf(stderr,
                 "bench-distributed-messages: needs at least 2 MPI ranks (got %d); skipped. "
                 "Run it with `make bench-mpi` or "
                 "`mpirun --oversubscribe -np 2 bench-distributed-messages`.\n",
                 size);
    shoal::finalize();  // MPI_Finalize runs at exit
    return 0;
  }

  MPI_Datatype msg_type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(sizeof(message)), MPI_BYTE, &msg_type);
  MPI_Type_commit(&msg_type);

  const pattern p{rank, size, opt.messages};
  std::vector<mode_result> results;
  for (int m = 0; m < kModes; ++m)
    if (opt.run[m]) results.push_back(mode_result{static_cast<mode>(m), {}, true});

  // Warm-up: one untimed repetition per mode (still verified).
  for (mode_result& r : results) {
    bool ok = true;
    run_once(r.which, p, opt, msg_type, ok);
    if (!ok) r.verified = false;
  }
  // Timed repetitions; with two modes the order alternates A B, B A, ...
  for (int rep = 0; rep < opt.repetitions; ++rep) {
    for (std::size_t i = 0; i < results.size(); ++i) {
      mode_result& r = results[rep % 2 == 0 ? i : results.size() - 1 - i];  // A B.., ..B A
      r.samples.push_back(run_once(r.which, p, opt, msg_type, r.verified));
    }
  }

  bool all_ok = true;
  for (const mode_result& r : results) all_ok = all_ok && r.verified;
  if (rank == 0) {
    if (opt.json)
      print_json(p, opt, results);
    else
      print_text(p, opt, results);
    std::fflush(stdout);
  }

  MPI_Type_free(&msg_type);
  shoal::finalize();  // MPI_Finalize runs at exit
  return all_ok ? 0 : kExitVerifyFailed;
}
