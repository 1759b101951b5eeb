// Stands in for comm/nccl/ in a build without the CUDA backend: device communicators throw.
#include "zerotrain/comm/process_group.h"
#include "zerotrain/core/error.h"

namespace zt::comm {

std::unique_ptr<Communicator> ProcessGroup::make_device_communicator(std::optional<Device>) {
  throw_no_cuda("comm::make_device_communicator (NCCL)");
}

}  // namespace zt::comm
