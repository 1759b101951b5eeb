// Checked NCCL calls and dtype/op mapping, for the NCCL backend only (CUDA builds).
#pragma once

#include <nccl.h>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/error.h"

namespace zt::comm::detail {

[[noreturn]] inline void throw_nccl_error(ncclResult_t r, const char* call, const char* file,
                                          int line) {
  throw BackendError("comm",
                     str(call, " failed: ", ncclGetErrorString(r), " (", file, ":", line, ")"));
}

// ncclInProgress is success for a nonblocking communicator: the call was accepted.
#define ZT_NCCL_CHECK(call)                                                         \
  do {                                                                              \
    ncclResult_t zt_nccl_rc_ = (call);                                              \
    if (zt_nccl_rc_ != ncclSuccess && zt_nccl_rc_ != ncclInProgress)                \
      ::zt::comm::detail::throw_nccl_error(zt_nccl_rc_, #call, __FILE__, __LINE__); \
  } while (0)

inline ncclDataType_t to_nccl(DType t) {
  switch (t) {
    case DType::f32:
      return ncclFloat32;
    case DType::f16:
      return ncclFloat16;
    case DType::bf16:
      return ncclBfloat16;
    case DType::i32:
      return ncclInt32;
    case DType::i64:
      return ncclInt64;
    case DType::u8:
      return ncclUint8;
  }
  return ncclFloat32;
}

inline ncclRedOp_t to_nccl(ReduceOp op) {
  return op == ReduceOp::sum ? ncclSum : ncclAvg;
}

}  // namespace zt::comm::detail
