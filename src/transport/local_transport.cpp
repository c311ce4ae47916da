// The transport of a job of one process (see transport.hpp).
#include "shoal/detail/check.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "transport/transport.hpp"

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
  void start_messages(std::size_t max_bytes, int, bool) override { max_bytes_ = max_bytes; }
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

}  // namespace

std::unique_ptr<transport> make_local_transport() { return std::make_unique<local_transport>(); }

}  // namespace shoal::detail
