#include "transport/transport.hpp"

#include "shoal/detail/check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace shoal::detail {
namespace {

// One process: nothing to move, every collective is the identity.
class local_transport final : public transport {
 public:
  const char* name() const noexcept override { return "local"; }
  int rank() const noexcept override { return 0; }
  int ranks() const noexcept override { return 1; }
  void barrier() override {}
  void allreduce_sum(std::uint64_t*, int) override {}
  void start_allreduce_sum(std::uint64_t*, int) override {}
  bool allreduce_done() override { return true; }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    std::memcpy(all, mine, bytes);
  }
  [[noreturn]] void abort(int status) noexcept override { std::_Exit(status); }

  // One rank: a message to itself is copied and reported at the next poll.
  void start_messages(std::size_t max_bytes, int) override { max_bytes_ = max_bytes; }
  void send(int dest, const void* data, std::size_t bytes, void* token) override {
    SHOAL_CHECK(dest == 0 && bytes <= max_bytes_, "local transport: send of {} bytes to rank {}",
                bytes, dest);
    // A receive buffer as the MPI transport hands out: max_bytes, 64-byte aligned.
    auto* copy = static_cast<char*>(std::aligned_alloc(64, (max_bytes_ + 63) / 64 * 64));
    SHOAL_CHECK(copy != nullptr, "local transport: out of memory");
    std::memcpy(copy, data, bytes);
    queued_.push_back({copy, bytes, token});
  }
  bool poll(const events& e, bool receive) override {
    if (queued_.empty() || !receive) return false;
    std::vector<message> now;
    now.swap(queued_);
    for (const message& m : now) {
      if (!e.received(e.context, 0, m.data, m.bytes)) std::free(m.data);
      e.sent(e.context, m.token);
    }
    return true;
  }
  void recycle(char* data) override { std::free(data); }

 private:
  struct message {
    char* data;
    std::size_t bytes;
    void* token;
  };
  std::vector<message> queued_;
  std::size_t max_bytes_ = 0;
};

std::unique_ptr<transport> g_transport;
transport_kind g_made_kind = transport_kind::automatic;

[[noreturn]] void refuse(const std::string& why) {
  std::fprintf(stderr, "shoal: error: %s\n", why.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : 0;
}

}  // namespace

bool launched_by_mpi(int& ranks) noexcept {
  // OpenMPI, MPICH/Hydra (PMI), PMIx launchers and Slurm's srun.
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var) != nullptr) {
      ranks = std::max(1, env_int(var));
      return true;
    }
  }
  if (std::getenv("PMIX_RANK") != nullptr || std::getenv("PMI_RANK") != nullptr) {
    ranks = std::max(1, env_int("SLURM_NTASKS"));
    return true;
  }
  ranks = 1;
  return false;
}

transport& obtain_transport(transport_kind kind) {
  int announced = 1;
  const bool by_launcher = launched_by_mpi(announced);
  transport_kind want = kind;
  if (want == transport_kind::automatic)
    want = by_launcher && announced > 1 ? transport_kind::mpi : transport_kind::local;
  if (g_transport != nullptr) {
    if (want != g_made_kind)
      refuse(
          fmt::format("--transport {} asked for, but this process already uses the {} "
                      "transport (one per process)",
                      want == transport_kind::mpi ? "mpi" : "local", g_transport->name()));
    return *g_transport;
  }
  if (want == transport_kind::mpi) {
    g_transport = make_mpi_transport();
    if (g_transport == nullptr)
      refuse(
          "--transport mpi: this shoal was built without MPI (install libopenmpi-dev and "
          "rebuild)");
  } else {
    g_transport = std::make_unique<local_transport>();
  }
  g_made_kind = want;
  return *g_transport;
}

transport* current_transport() noexcept { return g_transport.get(); }

std::uint64_t build_fingerprint() {
  // FNV-1a over the executable file. Read once per process (a few ms).
  static const std::uint64_t hash = [] {
    std::uint64_t h = 14695981039346656037ULL;
    FILE* f = std::fopen("/proc/self/exe", "rb");
    if (f == nullptr) return h;
    std::vector<unsigned char> chunk(1 << 20);
    std::size_t got = 0;
    while ((got = std::fread(chunk.data(), 1, chunk.size(), f)) > 0) {
      for (std::size_t i = 0; i < got; ++i) {
        h ^= chunk[i];
        h *= 1099511628211ULL;
      }
    }
    std::fclose(f);
    return h;
  }();
  return hash;
}

void check_job_consistency(transport& t, const config& cfg) {
  if (t.ranks() == 1) return;
  struct shape {
    std::uint64_t binary;
    std::int64_t cores, heap_mb, block_bytes, aggregation_bytes, network_bytes;
  };
  const shape mine{build_fingerprint(), cfg.cores,          cfg.heap_mb,
                   cfg.block_bytes,     cfg.aggregation_bytes, cfg.network_bytes};
  std::vector<shape> all(static_cast<std::size_t>(t.ranks()));
  t.allgather(&mine, all.data(), sizeof(shape));
  std::string problem;
  for (std::size_t r = 1; r < all.size() && problem.empty(); ++r) {
    const shape& a = all[0];
    const shape& b = all[r];
    if (b.binary != a.binary) {
      problem = fmt::format(
          "ranks run different binaries: rank {}'s executable (fingerprint {:016x}) differs "
          "from rank 0's ({:016x}); launch the same build on every rank",
          r, b.binary, a.binary);
    } else if (b.cores != a.cores || b.heap_mb != a.heap_mb || b.block_bytes != a.block_bytes ||
               b.aggregation_bytes != a.aggregation_bytes || b.network_bytes != a.network_bytes) {
      problem = fmt::format(
          "ranks disagree on the job's shape: rank {} has --cores {} --heap-mb {} --block-bytes "
          "{} --aggregation-bytes {} --network-bytes {}, rank 0 has {} {} {} {} {}; pass the "
          "same values to every rank",
          r, b.cores, b.heap_mb, b.block_bytes, b.aggregation_bytes, b.network_bytes, a.cores,
          a.heap_mb, a.block_bytes, a.aggregation_bytes, a.network_bytes);
    }
  }
  if (problem.empty()) return;
  // Every rank saw the same gathered data, so every rank stops here.
  if (t.rank() == 0) {
    std::fprintf(stderr, "shoal: error: %s\n", problem.c_str());
    std::fflush(stderr);
  }
  t.barrier();  // let rank 0 print before anyone tears the job down
  t.abort(2);
}

}  // namespace shoal::detail
