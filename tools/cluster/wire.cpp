// shoal-wire: a user-space Ethernet switch with a delay and a rate limit per
// link, for the emulated cluster (cluster.sh) on kernels without the netem
// qdisc ("Specified qdisc kind is unknown"), where tc can rate limit a veth
// but cannot delay it.
//
//   shoal-wire --tap NAME [--tap NAME]... [--delay-us N] [--rate-bps N]
//              [--ready FILE]
//
// Contract: creates one TAP device per --tap (/dev/net/tun, IFF_TAP, no
// packet information), brings none of them up (cluster.sh moves each into
// its host's namespace, where it becomes eth0), writes FILE once every
// device exists, then forwards until SIGTERM/SIGINT. A frame read from port
// i is sent to the port its destination MAC was last seen on (learned from
// source addresses), or to every other port when unknown or broadcast. Each
// frame leaves no earlier than --delay-us after it arrived, and each output
// port sends at most --rate-bps (a frame of B bytes occupies the port for
// 8B/rate seconds, so a burst queues and waits, as behind a slower link).
// Frames keep their order per output port. A port whose host took its link
// down (write fails) drops what is sent to it, as a cable pulled would.
// The devices vanish when the process ends (they are not persistent).
//
// One thread at real-time priority (SCHED_FIFO 10, when allowed): poll on
// every TAP with a timeout at the next departure, set with nanosecond
// precision and no timer slack, so a 25 us delay is a 25 us delay plus the
// scheduler's wake-up latency. Bad arguments: a message
// naming the flag, status 2; a system call failing at set-up: status 1.
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace {

using ns_t = std::int64_t;
constexpr std::size_t max_frame = 65536;
// A queue past this many frames drops new ones (a port that stopped draining
// must not grow without bound): a full switch buffer.
constexpr std::size_t max_queued = 4096;

volatile std::sig_atomic_t stop_requested = 0;

ns_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<ns_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "shoal-wire: error: %s\n", what.c_str());
  std::fprintf(stderr,
               "usage: shoal-wire --tap NAME [--tap NAME]... [--delay-us N] [--rate-bps N] "
               "[--ready FILE]\n");
  std::exit(2);
}

[[noreturn]] void system_error(const std::string& what) {
  std::fprintf(stderr, "shoal-wire: error: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

struct options {
  std::vector<std::string> taps;
  ns_t delay_ns = 0;
  std::int64_t rate_bps = 0;  // 0: no limit
  std::string ready;
};

std::int64_t read_number(std::string_view flag, std::string_view text, std::int64_t max) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || v > max)
    usage_error(std::string(flag) + ": expected an integer in [0, " + std::to_string(max) +
                "], got '" + std::string(text) + "'");
  return v;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage_error(std::string(flag) + ": missing value");
    const std::string_view value = argv[++i];
    if (flag == "--tap") {
      if (value.empty() || value.size() >= IFNAMSIZ)
        usage_error("--tap: a device name of 1 to 15 characters, got '" + std::string(value) + "'");
      o.taps.emplace_back(value);
    } else if (flag == "--delay-us") {
      o.delay_ns = read_number(flag, value, 1'000'000) * 1000;
    } else if (flag == "--rate-bps") {
      o.rate_bps = read_number(flag, value, std::int64_t{1} << 40);
    } else if (flag == "--ready") {
      o.ready = value;
    } else {
      usage_error("unknown flag '" + std::string(flag) + "'");
    }
  }
  if (o.taps.size() < 2) usage_error("--tap: at least two ports");
  return o;
}

int open_tap(const std::string& name) {
  const int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) system_error("open /dev/net/tun");
  ifreq req{};
  req.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::memcpy(req.ifr_name, name.c_str(), name.size());
  if (::ioctl(fd, TUNSETIFF, &req) < 0) system_error("TUNSETIFF " + name);
  return fd;
}

struct frame {
  ns_t due = 0;
  std::vector<std::uint8_t> bytes;
};

struct port {
  int fd = -1;
  std::deque<frame> queue;  // due times never decrease: order kept
  ns_t busy_until = 0;      // the rate limit: when this port's link is free
  std::uint64_t dropped = 0;
};

using mac = std::array<std::uint8_t, 6>;

class wire {
 public:
  explicit wire(const options& o) : o_(o) {
    for (const std::string& name : o.taps) ports_.push_back(port{open_tap(name), {}, 0, 0});
  }

  void run() {
    std::vector<pollfd> fds;
    for (const port& p : ports_) fds.push_back(pollfd{p.fd, POLLIN, 0});
    std::vector<std::uint8_t> buffer(max_frame);
    while (stop_requested == 0) {
      const ns_t wait = next_due() - now_ns();
      timespec timeout{};
      timespec* limit = nullptr;
      if (wait < INT64_MAX / 2) {
        const ns_t w = wait < 0 ? 0 : wait;
        timeout = {static_cast<time_t>(w / 1'000'000'000), static_cast<long>(w % 1'000'000'000)};
        limit = &timeout;
      }
      if (::ppoll(fds.data(), fds.size(), limit, nullptr) < 0 && errno != EINTR)
        system_error("ppoll");
      for (std::size_t i = 0; i < fds.size(); ++i)
        if ((fds[i].revents & POLLIN) != 0) receive(i, buffer);
      send_due();
    }
  }

 private:
  ns_t next_due() const {
    ns_t first = INT64_MAX;
    for (const port& p : ports_)
      if (!p.queue.empty() && p.queue.front().due < first) first = p.queue.front().due;
    return first;
  }

  // Everything waiting on port i now, then what arrives meanwhile (a burst
  // is read in one go; its frames share the arrival time).
  void receive(std::size_t in, std::vector<std::uint8_t>& buffer) {
    for (int n = 0; n < 64; ++n) {
      const ssize_t got = ::read(ports_[in].fd, buffer.data(), buffer.size());
      if (got < 0) return;     // EAGAIN, or the host's link is down (EIO)
      if (got < 14) continue;  // shorter than an Ethernet header: not a frame
      const ns_t arrived = now_ns();
      mac dst{};
      mac src{};
      std::memcpy(dst.data(), buffer.data(), 6);
      std::memcpy(src.data(), buffer.data() + 6, 6);
      if ((src[0] & 1) == 0) where_[src] = in;
      const auto known = where_.find(dst);
      const bool flood = (dst[0] & 1) != 0 || known == where_.end();
      for (std::size_t out = 0; out < ports_.size(); ++out) {
        if (out == in || (!flood && out != known->second)) continue;
        enqueue(ports_[out], arrived, buffer.data(), static_cast<std::size_t>(got));
      }
    }
  }

  void enqueue(port& p, ns_t arrived, const std::uint8_t* data, std::size_t size) {
    if (p.queue.size() >= max_queued) {
      ++p.dropped;
      return;
    }
    // Propagation delay, then the port's serialisation at its rate: a frame
    // leaves when both its delay has passed and the link is free.
    ns_t due = arrived + o_.delay_ns;
    if (o_.rate_bps > 0) {
      const ns_t start = due > p.busy_until ? due : p.busy_until;
      const ns_t on_wire = static_cast<ns_t>(size) * 8 * 1'000'000'000 / o_.rate_bps;
      p.busy_until = start + on_wire;
      due = p.busy_until;
    }
    if (!p.queue.empty() && p.queue.back().due > due) due = p.queue.back().due;
    p.queue.push_back(frame{due, std::vector<std::uint8_t>(data, data + size)});
  }

  void send_due() {
    const ns_t now = now_ns();
    for (port& p : ports_) {
      while (!p.queue.empty() && p.queue.front().due <= now) {
        const frame& f = p.queue.front();
        // A full device queue or a link taken down: the frame is lost, as
        // on a real switch; TCP retransmits.
        if (::write(p.fd, f.bytes.data(), f.bytes.size()) < 0) ++p.dropped;
        p.queue.pop_front();
      }
    }
  }

  options o_;
  std::vector<port> ports_;
  std::map<mac, std::size_t> where_;
};

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  // The kernel may defer a timer by the thread's slack (50 us by default),
  // as long as the delays emulated here: ask for none.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  // On a loaded machine a woken thread may wait milliseconds for a CPU,
  // which turned a 25 us delay into 2 ms on average (ping, load 11 on 2
  // cores). Real-time priority puts the switch first; it sleeps whenever no
  // frame is due, so it takes little CPU from the hosts. Without the right
  // (not root), it runs at normal priority, and says so.
  sched_param priority{};
  priority.sched_priority = 10;
  if (::sched_setscheduler(0, SCHED_FIFO, &priority) != 0)
    std::fprintf(stderr,
                 "shoal-wire: warning: no real-time priority (%s): delays stretch under load\n",
                 std::strerror(errno));
  struct sigaction sa {};
  sa.sa_handler = [](int) { stop_requested = 1; };
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  wire w(o);
  if (!o.ready.empty()) {
    std::ofstream ready(o.ready);
    ready << "ready\n";
    if (!ready.flush()) system_error("write " + o.ready);
  }
  w.run();
  return 0;
}
