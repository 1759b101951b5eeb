// One-rank collectives. See self_communicator.h.
#include "zerotrain/comm/self_communicator.h"

#include <cstring>

#include "zerotrain/core/error.h"
#include "zerotrain/core/tensor.h"

namespace zt::comm {

void SelfCommunicator::check_stream(const char* what, Stream stream) const {
  if (device_.is_cpu()) {
    check_host_stream(what, stream, backend_name());
    return;
  }
  if (stream.device != device_)
    throw DeviceError("comm", str(what, ": the self communicator of ", to_string(device_),
                                  " got a ", to_string(stream.device), " stream"));
}

void SelfCommunicator::copy(const void* send, void* recv, size_t count, DType dtype,
                            Stream stream) const {
  if (send == recv || count == 0) return;
  if (device_.is_cpu())
    std::memmove(recv, send, count * dtype_size(dtype));
  else
    copy_bytes(recv, device_, send, device_, count * dtype_size(dtype), stream);
}

void SelfCommunicator::all_reduce(const void* send, void* recv, size_t count, DType dtype,
                                  ReduceOp op, Stream stream) {
  check_reduce_args("all_reduce", dtype, op);
  check_stream("all_reduce", stream);
  copy(send, recv, count, dtype, stream);  // sum or avg over one rank is the value itself
}

void SelfCommunicator::reduce_scatter(const void* send, void* recv, size_t recv_count, DType dtype,
                                      ReduceOp op, Stream stream) {
  check_reduce_args("reduce_scatter", dtype, op);
  check_stream("reduce_scatter", stream);
  copy(send, recv, recv_count, dtype, stream);
}

void SelfCommunicator::all_gather(const void* send, void* recv, size_t send_count, DType dtype,
                                  Stream stream) {
  check_stream("all_gather", stream);
  copy(send, recv, send_count, dtype, stream);
}

void SelfCommunicator::broadcast(void*, size_t, DType, int root, Stream stream) {
  check_root("broadcast", root, 1);
  check_stream("broadcast", stream);
}

std::unique_ptr<Communicator> SelfCommunicator::split(int color, int) {
  if (color < 0) return nullptr;
  return std::make_unique<SelfCommunicator>(timeout_s_, device_);
}

}  // namespace zt::comm
