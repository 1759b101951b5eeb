// Gradient reductions in the communication dtype (DeepSpeed's communication_data_type): the
// all-reduce of stage 0 and the reduce-scatter of stages 1-3 (over the world or, with hybrid
// sharding, over the shard group, summed over the world) over a gradient buffer of the
// accumulation dtype (data_types.grad_accum_dtype). Tested by tests/zero/test_grad_comm.cpp (one
// rank) and tests/mpi/test_zero_parity.cpp, tests/mpi/test_grad_comm.cpp (2 and 4 ranks).
//
// [Note: communication dtype]
// Gradients accumulate over the micro-steps in the accumulation dtype (f32, or the model's bf16 /
// f16: the backward kernels add into f32 or the weights' dtype, kernels/gemm.h, norm.h,
// embedding.h). On the boundary micro-step a buffer is reduced across the ranks in the
// communication dtype: when the two differ, the buffer is cast (round to nearest even) into a
// temporary buffer of the communication dtype, that buffer is reduced, and the result is cast back
// into the accumulation dtype; when they match, the buffer is reduced in place.
// - Bitwise stage parity: every element's result is cast_back(reduce(cast(g_0), ..., cast(g_W-1)))
//   in every stage, and the host backends' reduce is the rank-ordered sum rounded once
//   ([Note: deterministic reductions]) whether it runs as an all-reduce over stage 0's buckets or
//   as a reduce-scatter over a block's group. So stages 1-3 equal stage 0 bitwise for every pair
//   of dtypes. NCCL rounds each partial sum to the communication dtype, in an order that may
//   differ between all-reduce and reduce-scatter: on GPUs the stages agree within one rounding
//   per rank (bounded by tests/mpi/test_grad_comm.cpp's NCCL case), not bitwise, as in f32.
// - One process reduces nothing, so the communication dtype changes nothing there.
// - The default stays f32 for both (TrainConfig). DeepSpeed 0.19 reduces in the model's dtype
//   when bf16/fp16 is on and accumulates in f32 only for bf16 without ZeRO (its BF16_Optimizer,
//   stage 0) but in bf16 for ZeRO stages 1-3: stage 0 and stages 1-3 would then accumulate in
//   different dtypes and could never agree bitwise, so zerotrain keeps f32 unless the config or
//   the command line names the dtypes.
// - The temporary buffers live for one collective on the stream it runs on, so the
//   stream-ordered allocator may reuse them as soon as that stream is past the cast back.
#pragma once

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/zero/shard_comms.h"

namespace zt::zero {

// Throws ValueError naming `what` unless dtype is f32, bf16 or f16.
void check_grad_dtype(const char* what, DType dtype);

// In place: buf = sum over the ranks of buf, reduced in comm_dtype. buf: contiguous, floating.
void all_reduce_grads(comm::Communicator& comm, const Tensor& buf, DType comm_dtype, Stream stream);

// shard = sum over the ranks of full's chunk comm.rank(), reduced in comm_dtype. full and shard:
// contiguous, one floating dtype, full.numel() == shard.numel() x comm.size(); shard may be
// full's own chunk (in place).
void reduce_scatter_grads(comm::Communicator& comm, const Tensor& full, const Tensor& shard,
                          DType comm_dtype, Stream stream);
// The same over a stage's shard communicators (shard_comms.h): full has shards.shard().size()
// chunks, each summed over every rank of the world ([Note: hybrid sharding]).
void reduce_scatter_grads(const ShardComms& shards, const Tensor& full, const Tensor& shard,
                          DType comm_dtype, Stream stream);

}  // namespace zt::zero
