// The one-process ZeroContext; see zero_context.h.
#include "zerotrain/zero/zero_context.h"

#include "zerotrain/comm/self_communicator.h"

namespace zt::zero {

ZeroContext ZeroContext::one_process(Device device, Stream compute) {
  // A one-rank communicator never waits for another rank: its timeout never applies.
  auto self = std::make_shared<comm::SelfCommunicator>(600.0, device);
  ZeroContext ctx(*self, device, compute);
  ctx.owned_ = std::move(self);
  return ctx;
}

}  // namespace zt::zero
