// Gradient reductions in the communication dtype; see [Note: communication dtype] in grad_comm.h.
#include "zerotrain/zero/grad_comm.h"

#include "zerotrain/comm/tensor_collectives.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cast.h"

namespace zt::zero {

void check_grad_dtype(const char* what, DType dtype) {
  if (dtype != DType::f32 && dtype != DType::bf16 && dtype != DType::f16)
    throw ValueError("zero", str(what, " must be f32, bf16 or f16, got ", dtype_name(dtype)));
}

void all_reduce_grads(comm::Communicator& comm, const Tensor& buf, DType comm_dtype,
                      Stream stream) {
  check_grad_dtype("communication dtype", comm_dtype);
  check_grad_dtype("gradient dtype", buf.dtype());
  if (buf.dtype() == comm_dtype) {
    comm::all_reduce(comm, buf, comm::ReduceOp::sum, stream);
    return;
  }
  const Tensor wire = kernels::cast_to(buf, comm_dtype, stream);
  comm::all_reduce(comm, wire, comm::ReduceOp::sum, stream);
  Tensor out = buf;
  kernels::cast(wire, out, stream);
}

void reduce_scatter_grads(comm::Communicator& comm, const Tensor& full, const Tensor& shard,
                          DType comm_dtype, Stream stream) {
  reduce_scatter_grads(ShardComms(comm), full, shard, comm_dtype, stream);
}

void reduce_scatter_grads(const ShardComms& shards, const Tensor& full, const Tensor& shard,
                          DType comm_dtype, Stream stream) {
  check_grad_dtype("communication dtype", comm_dtype);
  check_grad_dtype("gradient dtype", full.dtype());
  if (full.dtype() != shard.dtype())
    throw DTypeError("zero", str("reduce_scatter_grads: full is ", full.describe(),
                                 " but shard is ", shard.describe()));
  const int ranks = shards.shard().size();
  if (!full.is_contiguous() || !shard.is_contiguous())
    throw ShapeError("zero", str("reduce_scatter_grads: full ", full.describe(), " and shard ",
                                 shard.describe(), " must be contiguous"));
  if (full.numel() != shard.numel() * ranks)
    throw ShapeError(
        "zero", str("reduce_scatter_grads: full has ", full.numel(), " elements, expected shard's ",
                    shard.numel(), " x ", ranks, " ranks"));
  const auto n = static_cast<size_t>(shard.numel());
  if (full.dtype() == comm_dtype) {
    shards.reduce_scatter(full.data(), shard.data(), n, comm_dtype, comm::ReduceOp::sum, stream);
    return;
  }
  const Tensor wire = kernels::cast_to(full, comm_dtype, stream).flatten();
  const int64_t at = shard.numel() * shards.shard().rank();
  const Tensor own = wire.slice(0, at, at + shard.numel());
  // In place in the temporary buffer: this rank's chunk receives its reduction.
  shards.reduce_scatter(wire.data(), own.data(), n, comm_dtype, comm::ReduceOp::sum, stream);
  Tensor out = shard;
  kernels::cast(own, out, stream);
}

}  // namespace zt::zero
