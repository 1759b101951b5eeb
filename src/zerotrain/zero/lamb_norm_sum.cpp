// Lamb's norm slots summed over the ranks; see lamb_norm_sum.h.
#include "zerotrain/zero/lamb_norm_sum.h"

#include <cstring>

#include "zerotrain/core/tensor.h"
#include "zerotrain/zero/grad_norm.h"

namespace zt::zero {

// Lamb's norm segments must not straddle two ranks' shards: see [Note: Lamb across shards].
static_assert(kNormChunk % optim::kLambNormChunk == 0);

optim::NormSum norm_sum_over(comm::Communicator& comm, Device device) {
  return [&comm, device](std::span<double> slots, Stream stream) {
    static_assert(sizeof(double) == sizeof(int64_t));
    Tensor host = Tensor::empty({static_cast<int64_t>(slots.size())}, DType::i64);
    std::memcpy(host.data(), slots.data(), slots.size_bytes());
    const Tensor send = host.to(device, stream);
    Tensor sum = Tensor::empty({send.numel()}, DType::i64, device, stream);
    comm.all_reduce(send.data(), sum.data(), slots.size(), DType::i64, comm::ReduceOp::sum, stream);
    const Tensor back = sum.to(Device::cpu(), stream);
    synchronize(stream);
    std::memcpy(slots.data(), back.data(), slots.size_bytes());
  };
}

}  // namespace zt::zero
