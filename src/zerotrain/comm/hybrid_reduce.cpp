// The hybrid-sharding reduce-scatter; see [Note: hybrid reduction] in hybrid_reduce.h.
#include "zerotrain/comm/hybrid_reduce.h"

#include <algorithm>
#include <vector>

#include "zerotrain/comm/host_reduce.h"
#include "zerotrain/core/error.h"

namespace zt::comm {
namespace {

// Step 1 of the Note: every member's contribution to this member's chunk, in member order
// (pointers into `send` for this rank's own, into `received` for the others').
std::vector<const void*> gather_contributions(Communicator& group, const char* send,
                                              std::vector<char>& received, size_t n, DType dtype,
                                              Stream stream) {
  const int g = group.size(), me = group.rank();
  const size_t bytes = n * dtype_size(dtype);
  received.resize(bytes * static_cast<size_t>(g - 1));
  std::vector<const void*> contributions(static_cast<size_t>(g));
  std::vector<SendTo> sends;
  std::vector<RecvFrom> recvs;
  for (int j = 0, slot = 0; j < g; ++j) {
    if (j == me) {
      contributions[j] = send + static_cast<size_t>(me) * bytes;
      continue;
    }
    char* at = received.data() + static_cast<size_t>(slot++) * bytes;
    contributions[j] = at;
    recvs.push_back({j, at, n});
    sends.push_back({j, send + static_cast<size_t>(j) * bytes, n});
  }
  if (g > 1) group.exchange(sends, recvs, dtype, stream);
  return contributions;
}

void ordered_on_host(Communicator& group, Communicator& replicas, const void* send, void* recv,
                     size_t n, DType dtype, ReduceOp op, Stream stream) {
  const int g = group.size(), replica = replicas.rank(), last = replicas.size() - 1;
  std::vector<char> received;
  std::vector<const void*> contributions =
      gather_contributions(group, static_cast<const char*>(send), received, n, dtype, stream);
  // Step 2, piece by piece so that the groups of the chain work at once.
  const size_t es = dtype_size(dtype);
  std::vector<float> acc(std::min(n, kHybridPiece));
  std::vector<const void*> piece(contributions.size());
  for (size_t at = 0; at < n; at += kHybridPiece) {
    const size_t len = std::min(kHybridPiece, n - at);
    for (size_t j = 0; j < piece.size(); ++j)
      piece[j] = static_cast<const char*>(contributions[j]) + at * es;
    if (replica > 0) replicas.exchange({}, {{replica - 1, acc.data(), len}}, DType::f32, stream);
    accumulate_in_rank_order(replica > 0 ? acc.data() : nullptr, piece.data(), g, acc.data(), len,
                             dtype);
    if (replica < last)
      replicas.exchange({{replica + 1, acc.data(), len}}, {}, DType::f32, stream);
    else
      finish_in_rank_order(acc.data(), g * replicas.size(), static_cast<char*>(recv) + at * es, len,
                           dtype, op);
  }
  // Step 3.
  if (last > 0) replicas.broadcast(recv, n, dtype, last, stream);
}

}  // namespace

void hybrid_reduce_scatter(Communicator& group, Communicator& replicas, const void* send,
                           void* recv, size_t recv_count, DType dtype, ReduceOp op, Stream stream) {
  check_reduce_args("hybrid_reduce_scatter", dtype, op);
  if (!is_floating(dtype))
    throw DTypeError("comm",
                     str("hybrid_reduce_scatter: floating dtypes only, got ", dtype_name(dtype)));
  if (stream.device.is_cpu()) {
    ordered_on_host(group, replicas, send, recv, recv_count, dtype, op, stream);
    return;
  }
  // A device backend: its own collectives, in their order (see the Note).
  group.reduce_scatter(send, recv, recv_count, dtype, op, stream);
  replicas.all_reduce(recv, recv, recv_count, dtype, op, stream);
}

}  // namespace zt::comm
