// The one-rank communicator on host buffers: every collective is a copy. Used when a job has a
// single process, so training without a launcher needs no MPI. Tested by
// tests/comm/test_self_communicator.cpp.
#pragma once

#include "zerotrain/comm/communicator.h"

namespace zt::comm {

class SelfCommunicator final : public Communicator {
 public:
  explicit SelfCommunicator(double timeout_s) : Communicator(timeout_s) {}

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
};

}  // namespace zt::comm
