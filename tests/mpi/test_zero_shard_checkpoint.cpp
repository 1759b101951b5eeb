// The sharded-checkpoint seam (zero/shard_checkpoint.h) under mpirun: every stage's ranks write
// their own shards into memory and fresh engines continue from them bitwise
// (tests/zero/shard_round_trip.h). One process: tests/zero/test_zero_shard_checkpoint.cpp.
#include <gtest/gtest.h>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "zero/shard_round_trip.h"

namespace zt {
namespace {

TEST(ZeroShardCheckpointMpi, EveryStageContinuesBitwiseFromItsShards) {
  comm::Communicator& comm = test::process_group().host();
  for (int stage = 0; stage <= 3; ++stage)
    test::expect_shard_round_trip(test::tiny_llama(), stage,
                                  zero::ZeroContext(comm, Device::cpu(), {}),
                                  static_cast<uint64_t>(comm.rank()));
}

}  // namespace
}  // namespace zt
