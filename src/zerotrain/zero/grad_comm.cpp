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
  check_grad_dtype("communication dtype", comm_dtype);
  check_grad_dtype("gradient dtype", full.dtype());
  if (full.dtype() != shard.dtype())
    throw DTypeError("zero", str("reduce_scatter_grads: full is ", full.describe(),
                                 " but shard is ", shard.describe()));
  if (full.numel() != shard.numel() * comm.size())
    throw ShapeError(
        "zero", str("reduce_scatter_grads: full has ", full.numel(), " elements, expected shard's ",
                    shard.numel(), " x ", comm.size(), " ranks"));
  if (full.dtype() == comm_dtype) {
    comm::reduce_scatter(comm, full, shard, comm::ReduceOp::sum, stream);
    return;
  }
  const Tensor wire = kernels::cast_to(full, comm_dtype, stream).flatten();
  const int64_t n = shard.numel(), at = n * comm.rank();
  const Tensor own = wire.slice(0, at, at + n);
  // In place in the temporary buffer: this rank's chunk receives its reduction.
  comm::reduce_scatter(comm, wire, own, comm::ReduceOp::sum, stream);
  Tensor out = shard;
  kernels::cast(own, out, stream);
}

}  // namespace zt::zero
