# channel::send_run across processes: tests/mpi/dist_channel_run.cpp runs at
# 1 x 2, 2 x 2 and 3 x 2 with the other dist_* programs; here, misuse on
# rank 1 alone ends the job naming it. Included from tests/CMakeLists.txt
# where MPI was found.
shoal_dist_misuse_test(dist_channel_run_default_channel_on_rank1_named dist_channel_run 2
  SendRunOnADefaultChannelOnRank1
  REGEX "fatal on rank 1 core [0-9]+: shoal::channel::send_run on a default-constructed or closed channel handle \\(id 0\\)")
