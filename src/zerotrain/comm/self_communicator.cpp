// One-rank collectives. See self_communicator.h.
#include "zerotrain/comm/self_communicator.h"

#include <cstring>

namespace zt::comm {
namespace {
void copy(const void* send, void* recv, size_t count, DType dtype) {
  if (send != recv && count > 0) std::memmove(recv, send, count * dtype_size(dtype));
}
}  // namespace

void SelfCommunicator::all_reduce(const void* send, void* recv, size_t count, DType dtype,
                                  ReduceOp op, Stream stream) {
  check_reduce_args("all_reduce", dtype, op);
  check_host_stream("all_reduce", stream, backend_name());
  copy(send, recv, count, dtype);  // sum or avg over one rank is the value itself
}

void SelfCommunicator::reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                                      ReduceOp op, Stream stream) {
  check_reduce_args("reduce_scatter", dtype, op);
  check_host_stream("reduce_scatter", stream, backend_name());
  copy(send, recv, recv_count, dtype);
}

void SelfCommunicator::all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                                  Stream stream) {
  check_host_stream("all_gather", stream, backend_name());
  copy(send, recv, send_count, dtype);
}

void SelfCommunicator::broadcast(void*, size_t, DType, int root, Stream stream) {
  check_root("broadcast", root, 1);
  check_host_stream("broadcast", stream, backend_name());
}

std::unique_ptr<Communicator> SelfCommunicator::split(int color, int) {
  if (color < 0) return nullptr;
  return std::make_unique<SelfCommunicator>(timeout_s_);
}

}  // namespace zt::comm
