// Heartbeats and departures between the ranks of an MPI job (see
// mpi_peer_watch.hpp for the protocol).
#ifdef SHOAL_HAVE_MPI

#include "transport/mpi_peer_watch.hpp"

#include "shoal/exit_status.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace shoal::detail {
namespace {

constexpr int control_tag = 11;
enum : std::uint32_t { heartbeat_kind = 1, leave_kind = 2 };

// A leave's reason travels cut to this many bytes.
constexpr std::size_t why_bytes = 480;

struct control_message {
  std::uint32_t kind;
  std::int32_t status;
  std::uint64_t runs;
  char why[why_bytes];
};

// Heartbeats carry only the head; every peer's may share this one buffer.
constexpr control_message beat_message{heartbeat_kind, 0, 0, {}};
constexpr int beat_bytes = static_cast<int>(offsetof(control_message, why));

// How long a waiting collective may go on after a peer left before the job
// ends: the departed rank finished every collective it took part in, but the
// last of its messages may still be on the way to this rank.
constexpr auto departure_grace = std::chrono::seconds(2);

std::chrono::milliseconds period_for(int silent_s) {
  const auto tenth = std::chrono::milliseconds(silent_s > 0 ? silent_s * 100 : 500);
  return std::clamp(tenth, std::chrono::milliseconds(20), std::chrono::milliseconds(500));
}

std::string runs_text(std::uint64_t runs) {
  return fmt::format("{} run{} of shoal::run()", runs, runs == 1 ? "" : "s");
}

std::string reason_of(int rank, int status, const std::string& why) {
  if (!why.empty()) return why;
  if (status < 0) return fmt::format("rank {}'s process exited", rank);
  return fmt::format("rank {}'s process exited with status {}", rank, status);
}

}  // namespace

void abort_mpi_job(annotated_mutex& mpi_mu, int status) noexcept {
  std::thread([status] {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    std::_Exit(status);
  }).detach();
  for (int i = 0; i < 500 && !mpi_mu.try_lock(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; be sure
}

mpi_peer_watch::mpi_peer_watch(MPI_Comm world, annotated_mutex& mpi_mu, int rank, int ranks)
    : mpi_mu_(mpi_mu),
      rank_(rank),
      ranks_(ranks),
      last_seen_(static_cast<std::size_t>(ranks)),
      heard_(static_cast<std::size_t>(ranks), false),
      beats_(static_cast<std::size_t>(ranks), MPI_REQUEST_NULL),
      leaves_(static_cast<std::size_t>(ranks), MPI_REQUEST_NULL),
      leave_message_(sizeof(control_message)),
      departed_(static_cast<std::size_t>(ranks)) {
  MPI_Comm_dup(world, &comm_);
}

mpi_peer_watch::~mpi_peer_watch() {
  {
    std::lock_guard lock(state_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void mpi_peer_watch::start(int silent_s, int join_s) {
  {
    std::lock_guard lock(state_mu_);
    silent_s_ = silent_s;
    join_s_ = join_s;
  }
  if (thread_.joinable()) return;
  started_ = clock::now();
  thread_ = std::thread([this] { loop(); });
}

void mpi_peer_watch::note_run_ended() {
  // Relaxed: read by this thread's leave() (same thread) and nothing else.
  in_run_.store(false, std::memory_order_relaxed);
}

void mpi_peer_watch::note_run_started(std::uint64_t runs) {
  // Relaxed: a counter the thread reads on its next pass; nothing else hangs on it.
  runs_.store(runs, std::memory_order_relaxed);
  in_run_.store(true, std::memory_order_relaxed);
  judge(false);  // a peer that left before this run ends the job now, not a period later
}

void mpi_peer_watch::loop() {
  std::unique_lock lock(state_mu_);
  while (!stop_) {
    // While this rank leaves, look often: the peers' leaves end the wait.
    const bool was_leaving = leaving_;
    const auto period = was_leaving ? std::chrono::milliseconds(2) : period_for(silent_s_);
    lock.unlock();
    exchange();
    judge(true);
    lock.lock();
    wake_.wait_for(lock, period, [&] { return stop_ || leaving_ != was_leaving; });
  }
}

void mpi_peer_watch::exchange() {
  bool leaving = false;
  {
    std::lock_guard lock(state_mu_);
    leaving = leaving_;
  }
  lock_guard mpi(mpi_mu_);
  // Nothing after a leave: peers finalize once they have seen it.
  for (int p = 0; p < ranks_ && !leaving; ++p) {
    auto& r = beats_[static_cast<std::size_t>(p)];
    int done = 1;
    if (r != MPI_REQUEST_NULL) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (p == rank_ || !done) continue;
    MPI_Isend(&beat_message, beat_bytes, MPI_BYTE, p, control_tag, comm_, &r);
  }
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, control_tag, comm_, &arrived, &status);
    if (!arrived) break;
    control_message m{};
    MPI_Recv(&m, sizeof m, MPI_BYTE, status.MPI_SOURCE, control_tag, comm_, MPI_STATUS_IGNORE);
    const auto p = static_cast<std::size_t>(status.MPI_SOURCE);
    heard_[p] = true;
    last_seen_[p] = clock::now();
    if (m.kind != leave_kind) continue;
    std::lock_guard state(state_mu_);
    departed_[p] = {true, m.runs, m.status, std::string(m.why, strnlen(m.why, why_bytes)),
                    clock::now()};
  }
}

void mpi_peer_watch::judge(bool silences) {
  const auto now = clock::now();
  const std::uint64_t runs = runs_.load(std::memory_order_relaxed);  // see note_run_started
  std::string lost;
  int status = exit_status::fatal;
  {
    std::lock_guard lock(state_mu_);
    for (int p = 0; p < ranks_ && lost.empty(); ++p) {
      const auto i = static_cast<std::size_t>(p);
      const departure& d = departed_[i];
      if (p == rank_) continue;
      if (d.left && d.runs < runs) {
        lost = fmt::format(
            "rank {} left the job after {} ({}), while rank {} is in run {}: every rank must "
            "make the same calls (run the same command line on every rank)",
            p, runs_text(d.runs), reason_of(p, d.status, d.why), rank_, runs);
        status = d.status > 0 ? d.status : exit_status::usage;
      } else if (!silences || d.left) {
        continue;  // heard_ and last_seen_ belong to the thread
      } else if (!heard_[i] && now - started_ > std::chrono::seconds(join_s_)) {
        lost = fmt::format(
            "rank {} never answered within {} s (--join-s): it is not a shoal process of this "
            "job, or it exited or stopped before start-up",
            p, join_s_);
      } else if (heard_[i] && silent_s_ > 0 &&
                 now - last_seen_[i] > std::chrono::seconds(silent_s_)) {
        lost = fmt::format(
            "rank {} has not answered for {} s (--watchdog-s): its process is stopped, hung "
            "outside shoal, or unreachable",
            p, silent_s_);
      }
    }
  }
  if (!lost.empty()) end_job(lost, status);
}

void mpi_peer_watch::check_waiting(const char* what, clock::time_point since) {
  std::string text;
  int status = exit_status::usage;
  {
    std::lock_guard lock(state_mu_);
    for (int p = 0; p < ranks_ && text.empty(); ++p) {
      const departure& d = departed_[static_cast<std::size_t>(p)];
      if (!d.left || clock::now() - std::max(d.when, since) < departure_grace) continue;
      text = fmt::format(
          "rank {} left the job after {} ({}), while rank {} waits in {} for it: every rank "
          "must make the same calls (run the same command line on every rank)",
          p, runs_text(d.runs), reason_of(p, d.status, d.why), rank_, what);
      if (d.status > 0) status = d.status;
    }
  }
  if (!text.empty()) end_job(text, status);
}

void mpi_peer_watch::send_leave(int status, const std::string& why) {
  auto* m = reinterpret_cast<control_message*>(leave_message_.data());
  m->kind = leave_kind;
  m->status = status;
  // Runs finished: a rank that leaves in the middle of run k has finished
  // k - 1, so peers inside run k see at once that it will not finish it.
  const std::uint64_t started = runs_.load(std::memory_order_relaxed);  // see note_run_started
  m->runs = in_run_.load(std::memory_order_relaxed) ? started - 1 : started;
  const std::size_t n = std::min(why.size(), why_bytes - 1);
  std::memcpy(m->why, why.data(), n);
  m->why[n] = '\0';
  {
    // Set before the sends: the thread sends no heartbeat after a leave.
    std::lock_guard lock(state_mu_);
    leaving_ = true;
  }
  wake_.notify_all();
  lock_guard mpi(mpi_mu_);
  for (int p = 0; p < ranks_; ++p) {
    if (p == rank_) continue;
    MPI_Isend(m, sizeof(control_message), MPI_BYTE, p, control_tag, comm_,
              &leaves_[static_cast<std::size_t>(p)]);
  }
}

bool mpi_peer_watch::everyone_left() {
  std::lock_guard lock(state_mu_);
  for (int p = 0; p < ranks_; ++p)
    if (p != rank_ && !departed_[static_cast<std::size_t>(p)].left) return false;
  return true;
}

void mpi_peer_watch::leave(int status, const std::string& why) {
  send_leave(status, why);
  const auto since = clock::now();
  while (!everyone_left()) {
    int join_s = 0;
    {
      std::lock_guard lock(state_mu_);
      join_s = join_s_;
    }
    if (clock::now() - since > std::chrono::seconds(join_s)) {
      std::string missing;
      {
        std::lock_guard lock(state_mu_);
        for (int p = 0; p < ranks_; ++p)
          if (p != rank_ && !departed_[static_cast<std::size_t>(p)].left)
            missing += fmt::format("{}{}", missing.empty() ? "" : ", ", p);
      }
      end_job(fmt::format("{}; rank(s) {} did not finish within {} s (--join-s) after this rank "
                          "left: every rank must make the same calls",
                          reason_of(rank_, status, why), missing, join_s),
              status > 0 ? status : exit_status::usage);
    }
    if (!thread_.joinable()) exchange();  // never started: drain here
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    std::lock_guard lock(state_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Rank 0 speaks for the job: each different reason once.
  if (rank_ == 0) {
    std::vector<std::string> said;
    if (!why.empty()) said.push_back(why);
    for (int p = 1; p < ranks_; ++p) {
      const std::string& w = departed_[static_cast<std::size_t>(p)].why;
      if (w.empty() || std::find(said.begin(), said.end(), w) != said.end()) continue;
      said.push_back(fmt::format("rank {}: {}", p, w));
    }
    for (const std::string& w : said) std::fprintf(stderr, "%s\n", w.c_str());
    std::fflush(stderr);
  }
  lock_guard mpi(mpi_mu_);
  MPI_Waitall(ranks_, leaves_.data(), MPI_STATUSES_IGNORE);
  MPI_Waitall(ranks_, beats_.data(), MPI_STATUSES_IGNORE);
}

void mpi_peer_watch::end_job(const std::string& what, int status) {
  std::fflush(stdout);
  std::fprintf(stderr, "shoal: fatal on rank %d: %s\n", rank_, what.c_str());
  std::fflush(stderr);
  // Give the launcher a moment to forward the line before the job is torn
  // down (see fatal.cpp).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  abort_mpi_job(mpi_mu_, status);
}

}  // namespace shoal::detail

#endif  // SHOAL_HAVE_MPI
