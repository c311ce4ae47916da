// The baselines' one Alltoallv round (apps/baselines/alltoallv_exchange.hpp),
// run under mpirun on 1, 2 and 3 ranks: each way of filling the send side
// delivers every record once, grouped by source rank in rank order, over
// several rounds of changing sizes; reply() lands each answer where its
// request was sent from; records that are no MPI type travel as bytes.
#include "baselines/alltoallv_exchange.hpp"

#include <cstdint>
#include <vector>

#include <mpi.h>

#include <gtest/gtest.h>

namespace {

using shoal_baseline::alltoallv_exchange;

int rank_of() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int ranks_of() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// A record no predefined MPI type describes.
struct triple {
  std::int32_t source;
  std::int32_t dest;
  std::int32_t index;
};

/// Records rank `s` sends rank `d` in round `round`: differs per pair and round.
int records_for(int s, int d, int round) { return (s + 2 * d + round) % 4 + round; }

/// The received records must be, for each source s in order, the indices
/// 0 .. records_for(s, me, round) - 1 addressed to me.
void expect_grouped(const std::span<const triple> in, int me, int round, bool skip_self) {
  std::size_t at = 0;
  for (int s = 0; s < ranks_of(); ++s) {
    if (skip_self && s == me) continue;
    for (int i = 0; i < records_for(s, me, round); ++i, ++at) {
      ASSERT_LT(at, in.size());
      EXPECT_EQ(in[at].source, s);
      EXPECT_EQ(in[at].dest, me);
      EXPECT_EQ(in[at].index, i);
    }
  }
  EXPECT_EQ(at, in.size());
}

TEST(AlltoallvExchange, OutboxesDeliverGroupedBySource) {
  const int me = rank_of();
  alltoallv_exchange<triple> ex;
  for (int round = 0; round < 4; ++round) {
    // Pushed in an order that interleaves destinations.
    for (int i = 0; i < 8; ++i)
      for (int d = 0; d < ranks_of(); ++d)
        if (i < records_for(me, d, round)) ex.push(d, {me, d, i});
    expect_grouped(ex.exchange(), me, round, false);
  }
}

TEST(AlltoallvExchange, CountingSortWithheldBucketStaysLocal) {
  const int me = rank_of();
  alltoallv_exchange<triple> ex;
  for (int round = 0; round < 4; ++round) {
    ex.begin_round();
    for (int d = 0; d < ranks_of(); ++d)
      for (int i = 0; i < records_for(me, d, round); ++i) ex.count(d);
    ex.lay_out();
    for (int i = 0; i < 8; ++i)
      for (int d = ranks_of() - 1; d >= 0; --d)
        if (i < records_for(me, d, round)) ex.place(d, {me, d, i});
    const std::span<const triple> own = ex.bucket(me);
    ASSERT_EQ(own.size(), static_cast<std::size_t>(records_for(me, me, round)));
    for (std::size_t i = 0; i < own.size(); ++i) EXPECT_EQ(own[i].index, static_cast<int>(i));
    ex.withhold(me);
    expect_grouped(ex.exchange(), me, round, true);
  }
}

TEST(AlltoallvExchange, CallersBufferAndReply) {
  const int me = rank_of();
  const int ranks = ranks_of();
  alltoallv_exchange<std::uint32_t> ex;
  for (int round = 0; round < 3; ++round) {
    std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(counts.size());
    std::vector<std::uint32_t> send;
    for (int d = 0; d < ranks; ++d) {
      displs[static_cast<std::size_t>(d)] = static_cast<int>(send.size());
      counts[static_cast<std::size_t>(d)] = records_for(me, d, round);
      for (int i = 0; i < records_for(me, d, round); ++i)
        send.push_back(static_cast<std::uint32_t>(1000 * me + 10 * d + i));
    }
    const std::span<const std::uint32_t> in = ex.exchange(send.data(), counts, displs);
    std::vector<std::uint64_t> answers(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) answers[i] = 3 * std::uint64_t{in[i]} + 1;
    std::vector<std::uint64_t> back(send.size(), 0);
    ex.reply(answers.data(), back.data());
    for (std::size_t i = 0; i < send.size(); ++i)
      EXPECT_EQ(back[i], 3 * std::uint64_t{send[i]} + 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
