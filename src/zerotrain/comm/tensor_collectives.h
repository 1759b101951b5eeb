// Tensor front-ends of the collectives: check contiguity, dtypes and sizes (typed errors naming the
// tensors), then call the Communicator on the raw buffers. What the trainer and the ZeRO engine
// use. Tested by tests/comm/test_tensor_collectives.cpp and tests/mpi/test_mpi_collectives.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/tensor.h"

namespace zt::comm {

// In place: t = op over ranks of t.
void all_reduce(Communicator& comm, const Tensor& t, ReduceOp op, Stream stream);
// shard = op over ranks of full's chunk comm.rank(); full.numel() == shard.numel() * comm.size()
// (pad with shard_layout.h).
void reduce_scatter(Communicator& comm, const Tensor& full, const Tensor& shard, ReduceOp op,
                    Stream stream);
// full = every rank's shard in rank order; full.numel() == shard.numel() * comm.size().
void all_gather(Communicator& comm, const Tensor& shard, const Tensor& full, Stream stream);
// t on every rank = t on root.
void broadcast(Communicator& comm, const Tensor& t, int root, Stream stream);

// One 64-bit word per rank, in rank order, gathered through buffers on `device` (a checksum, a
// flag: what ranks compare). Synchronizes `stream`.
std::vector<uint64_t> all_gather_words(Communicator& comm, uint64_t word, Device device,
                                       Stream stream);

}  // namespace zt::comm
