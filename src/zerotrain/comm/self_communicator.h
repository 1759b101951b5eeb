// The one-rank communicator: every collective is a copy, on host buffers or, made for a GPU, on
// that GPU's buffers (a device-aware copy on the given stream). Used when a job has a single
// process, so training without a launcher needs no MPI, and as the ZeRO engine's communicator of a
// one-process run on any device (zero/zero_context.h). Tested by
// tests/comm/test_self_communicator.cpp.
#pragma once

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/device.h"

namespace zt::comm {

class SelfCommunicator final : public Communicator {
 public:
  // device: where the buffers live (a host communicator rejects device streams).
  explicit SelfCommunicator(double timeout_s, Device device = Device::cpu())
      : Communicator(timeout_s), device_(device) {}

  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend_name() const override { return "self"; }

  void all_reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                  Stream stream) override;
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype, ReduceOp op,
                      Stream stream) override;
  void all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                  Stream stream) override;
  void broadcast(void* buffer, size_t count, DType dtype, int root, Stream stream) override;
  void barrier() override {}
  std::unique_ptr<Communicator> split(int color, int key) override;

 private:
  void check_stream(const char* what, Stream stream) const;
  void copy(const void* send, void* recv, size_t count, DType dtype, Stream stream) const;

  Device device_;
};

}  // namespace zt::comm
