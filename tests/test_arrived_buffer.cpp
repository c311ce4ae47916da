// check_arrived(): a network buffer from another process is accepted when it
// is what network::stage() writes, and refused, naming the batch and the
// field, when any header or closure run would make the receive path read
// outside it or hand a batch to a core this process does not have.
#include "shoal/detail/aggregator.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "comm/arrived_buffer.hpp"

namespace {

using shoal::detail::arrived_limits;
using shoal::detail::buffer;
using shoal::detail::check_arrived;
using shoal::detail::control_stream;

// A job of 3 ranks x 2 cores seen from rank 0; rank 1 sent the buffer.
arrived_limits limits() {
  arrived_limits lim;
  lim.source_rank = 1;
  lim.ranks = 3;
  lim.cores_per_rank = 2;
  lim.rank = 0;
  lim.max_bytes = 4096;
  return lim;
}

// Builds buffers the way network::stage() lays them out.
class wire {
 public:
  /// Appends a batch; returns the offset of its header.
  std::size_t batch(std::uint32_t stream, int dest, int source, std::uint32_t count,
                    const std::vector<std::uint32_t>& payload_words) {
    buffer h;
    h.stream = stream;
    h.dest = dest;
    h.source = source;
    h.count = count;
    h.bytes = static_cast<std::uint32_t>(payload_words.size() * 4);
    const std::size_t at = bytes_.size();
    bytes_.resize(at + sizeof h + ((h.bytes + 63) / 64) * 64);
    std::memcpy(bytes_.data() + at, static_cast<const void*>(&h), sizeof h);
    // An empty payload's data() may be null, which memcpy must not get.
    if (h.bytes != 0) std::memcpy(bytes_.data() + at + sizeof h, payload_words.data(), h.bytes);
    return at;
  }
  /// Changes the header at `at` with f(buffer&) (copied out and back: the
  /// vector's bytes are not 64-byte aligned like a real receive buffer).
  template <class F>
  void spoil(std::size_t at, F f) {
    buffer h;
    std::memcpy(static_cast<void*>(&h), bytes_.data() + at, sizeof h);
    f(h);
    std::memcpy(bytes_.data() + at, static_cast<const void*>(&h), sizeof h);
  }
  std::string check(const arrived_limits& lim = limits()) const {
    return check_arrived(bytes_.data(), bytes_.size(), lim);
  }
  std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
};

// A closure run of one 8-byte closure: {handler, run bytes}, then the closure.
const std::vector<std::uint32_t> one_closure{0x1000, 8, 7, 7};

TEST(arrived_buffer, accepts_what_stage_writes) {
  wire w;
  w.batch(0, 0, 2, 1, one_closure);
  w.batch(5, 1, 3, 2, {1, 2, 3, 4});  // two 8-byte channel values
  w.batch(control_stream, 1, 2, 2, {0x2000, 8, 1, 1, 0x3000, 16, 2, 2, 2, 2});
  w.batch(0, 0, 3, 0, {});  // an empty batch is harmless
  EXPECT_EQ(w.check(), "");
}

TEST(arrived_buffer, refuses_a_buffer_that_is_not_whole_batches) {
  wire w;
  w.batch(0, 0, 2, 1, one_closure);
  w.bytes().resize(w.bytes().size() - 8);
  EXPECT_NE(w.check().find("not a multiple of 64"), std::string::npos) << w.check();
  EXPECT_EQ(check_arrived(w.bytes().data(), 0, limits()), "empty buffer");
  w.bytes().resize(8192);
  EXPECT_NE(w.check().find("more than the network buffer's 4096"), std::string::npos);
}

TEST(arrived_buffer, names_the_sender_that_cannot_be) {
  wire w;
  w.batch(0, 0, 2, 1, one_closure);
  arrived_limits lim = limits();
  lim.source_rank = 0;  // this rank: its own batches never travel
  EXPECT_NE(w.check(lim).find("sender rank 0 is not another rank"), std::string::npos);
  lim.source_rank = 3;
  EXPECT_NE(w.check(lim).find("sender rank 3"), std::string::npos);
}

TEST(arrived_buffer, refuses_each_bad_header_field_naming_it) {
  struct bad {
    void (*spoil)(buffer&);
    const char* named;
  };
  const bad cases[] = {
      {[](buffer& h) { h.bytes = 1u << 30; }, "payload of 1073741824 bytes, but only 64 bytes"},
      {[](buffer& h) { h.stream = 300; }, "stream 300 out of range"},
      {[](buffer& h) { h.dest = 2; }, "destination core 2 is not a core of this rank (0 .. 1)"},
      {[](buffer& h) { h.dest = -1; }, "destination core -1"},
      {[](buffer& h) { h.source = 0; }, "source core 0 is not a core of the sending rank 1"},
      {[](buffer& h) { h.count = 0; }, "16 payload bytes but no messages"},
  };
  for (const bad& c : cases) {
    wire w;
    w.spoil(w.batch(0, 1, 2, 1, one_closure), c.spoil);
    const std::string why = w.check();
    EXPECT_NE(why.find(c.named), std::string::npos)
        << "wanted '" << c.named << "', got '" << why << "'";
    EXPECT_EQ(why.rfind("batch at byte 0: ", 0), 0u) << why;
  }
}

TEST(arrived_buffer, refuses_closure_runs_that_leave_their_batch) {
  wire runs_past;
  runs_past.batch(0, 0, 2, 1, {0x1000, 64, 7, 7});
  EXPECT_NE(runs_past.check().find("has 64 bytes, past the batch's 16"), std::string::npos)
      << runs_past.check();
  wire cut;
  cut.batch(0, 0, 2, 1, {0x1000, 8, 7, 7, 0x1000});  // a second run header cut in half
  EXPECT_NE(cut.check().find("cut off (4 bytes left)"), std::string::npos) << cut.check();
  wire empty_run;
  empty_run.batch(0, 0, 2, 1, {0x1000, 0, 7, 7});
  EXPECT_NE(empty_run.check().find("a positive multiple of 8"), std::string::npos);
  wire channel_overcount;
  channel_overcount.batch(7, 0, 2, 100, {1, 2});
  EXPECT_NE(channel_overcount.check().find("100 channel values in 8 bytes"), std::string::npos);
}

TEST(arrived_buffer, names_the_offset_of_the_first_bad_batch) {
  wire w;
  w.batch(0, 0, 2, 1, one_closure);
  w.batch(5, 1, 3, 2, {1, 2, 3, 4});
  w.spoil(w.batch(0, 0, 2, 1, one_closure), [](buffer& h) { h.dest = 5; });
  EXPECT_EQ(w.check().rfind("batch at byte 256: destination core 5", 0), 0u) << w.check();
}

}  // namespace
