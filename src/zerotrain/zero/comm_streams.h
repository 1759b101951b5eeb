// The side streams of a ZeRO engine, all created here (FSDP2's FSDPCommContext habit) and shared
// by the stage through its ZeroContext (zero_context.h). A collective stream exists only on a
// GPU, with more than one rank, and once a stage asks for it (a stage asks only with
// overlap_comm); otherwise the stage runs its collectives on the compute stream. The offload copy
// streams exist on any GPU once asked for. All run at a higher priority than compute. Tested through tests/mpi/test_zero_parity.cpp (host: no side streams) and the CUDA
// parity runs.
#pragma once

#include <optional>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"

namespace zt::zero {

class CommStreams {
 public:
  CommStreams(Device device, int world) : device_(device), world_(world) {}
  CommStreams(const CommStreams&) = delete;
  CommStreams& operator=(const CommStreams&) = delete;

  // Gradient reductions (stage 0's bucket all-reduces, stages 1-3's reduce-scatters): so that a
  // ready bucket or group starts reducing at once while backward goes on. Null: none here.
  CudaStream* reduce() { return get(reduce_); }
  // Stage 3's parameter all-gathers: so that the next blocks' values arrive while this block
  // computes. Null: none here.
  CudaStream* gather() { return get(gather_); }
  // Offload's copies (shard_optimizer.h, [Note: optimizer offload]): gradients to the host while
  // backward goes on, and updated values back while the host steps the next sub-group; one
  // stream per direction so the two overlap. Null: not a GPU (host copies are synchronous).
  CudaStream* to_host() { return get_copy(to_host_); }
  CudaStream* to_device() { return get_copy(to_device_); }

 private:
  CudaStream* get(std::optional<CudaStream>& s) {
    if (!device_.is_cuda() || world_ < 2) return nullptr;
    if (!s) s.emplace(device_, -1);  // -1: above the compute stream's default priority
    return &*s;
  }
  CudaStream* get_copy(std::optional<CudaStream>& s) {
    if (!device_.is_cuda()) return nullptr;
    if (!s) s.emplace(device_, -1);
    return &*s;
  }

  Device device_;
  int world_;
  std::optional<CudaStream> reduce_, gather_, to_host_, to_device_;
};

}  // namespace zt::zero
