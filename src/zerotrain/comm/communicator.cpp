// Shared helpers of the Communicator backends. See communicator.h.
#include "zerotrain/comm/communicator.h"

#include "zerotrain/core/error.h"

namespace zt::comm {

const char* reduce_op_name(ReduceOp op) {
  return op == ReduceOp::sum ? "sum" : "avg";
}

std::string describe_ranks(const std::vector<int>& ranks) {
  if (ranks.empty()) return "none";
  bool consecutive = true;
  for (size_t i = 1; i < ranks.size(); ++i)
    consecutive &= ranks[i] == ranks[i - 1] + 1;
  if (consecutive && ranks.size() > 1) return str(ranks.front(), "-", ranks.back());
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

void check_reduce_args(const char* what, DType dtype, ReduceOp op) {
  if (op == ReduceOp::avg && !is_floating(dtype))
    throw DTypeError("comm",
                     str(what, " with avg needs a floating dtype, got ", dtype_name(dtype)));
}

void check_host_stream(const char* what, Stream stream, const std::string& backend) {
  if (!stream.device.is_cpu() || stream.handle != nullptr)
    throw DeviceError("comm", str(what, ": the ", backend, " backend works on host buffers, got a ",
                                  to_string(stream.device), " stream"));
}

void Communicator::exchange(const std::vector<SendTo>&, const std::vector<RecvFrom>&, DType,
                            Stream) {
  throw ValueError(
      "comm", str("exchange: the ", backend_name(), " backend has no point-to-point messages"));
}

void check_peer(const char* what, int peer, int rank, int size) {
  if (peer < 0 || peer >= size || peer == rank)
    throw ValueError("comm", str(what, ": peer ", peer, " is not another rank of 0..", size - 1,
                                 " (this rank is ", rank, ")"));
}

void check_root(const char* what, int root, int size) {
  if (root < 0 || root >= size)
    throw ValueError("comm", str(what, ": root ", root, " is not a rank of 0..", size - 1));
}

}  // namespace zt::comm
