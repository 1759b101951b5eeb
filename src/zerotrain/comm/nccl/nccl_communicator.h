// The NCCL backend: collectives on device buffers of one GPU, enqueued on the caller's stream with
// native ncclAllReduce / ncclReduceScatter / ncclAllGather / ncclBroadcast (NCCL's summation order
// is fixed for a given topology and size). Nonblocking communicator + watchdog: see
// [Note: NCCL timeout]. CUDA builds only; tested on GPUs by tests/mpi/test_nccl_communicator.cpp.
#pragma once

#include <nccl.h>

#include <memory>
#include <string>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/comm/nccl/nccl_watchdog.h"
#include "zerotrain/core/device.h"

namespace zt::comm {

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `size` processes: joins the communicator `id` (from rank 0's ncclGetUniqueId,
  // broadcast by the caller) as `rank`, on `device`.
  NcclCommunicator(Device device, int rank, int size, const ncclUniqueId& id, double timeout_s);
  // Adopts a ready communicator (from split). `label` names its ranks in messages.
  NcclCommunicator(Device device, ncclComm_t comm, std::string label, double timeout_s);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "nccl"; }
  Device device() const { return device_; }
  ncclComm_t handle() const { return comm_; }

  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                  Stream stream) override;
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype, ReduceOp op,
                      Stream stream) override;
  void all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                  Stream stream) override;
  void broadcast(void* buffer, size_t count, DType dtype, int root, Stream stream) override;
  // An all_reduce of one value on a private stream, waited for on the host (within the timeout).
  void barrier() override;
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  void init_after_create();
  std::string describe(const char* what, size_t count, DType dtype) const;
  void check_stream(const char* what, Stream stream) const;
  // Polls until `comm` has accepted the last call (not ncclInProgress), within the timeout.
  void wait_accepted(ncclComm_t comm, const std::string& description) const;
  // Common tail of every collective: wait until accepted, then hand it to the watchdog.
  void enqueued(Stream stream, const std::string& description);

  Device device_;
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  std::string label_;               // "ranks 0-3"
  void* barrier_buf_ = nullptr;     // [1] f32 on device_
  void* barrier_stream_ = nullptr;  // cudaStream_t: barrier's own stream
  std::unique_ptr<detail::NcclWatchdog> watchdog_;
};

}  // namespace zt::comm
