// ProcessGroup::make_device_communicator for CUDA builds: rank 0's ncclUniqueId reaches every rank
// through the host communicator or the TCP rendezvous, then each rank joins on its device.
#include <cstring>

#include "zerotrain/comm/nccl/nccl_check.h"
#include "zerotrain/comm/nccl/nccl_communicator.h"
#include "zerotrain/comm/process_group.h"

namespace zt::comm {

std::unique_ptr<Communicator> ProcessGroup::make_device_communicator(std::optional<Device> device) {
  Device d = device ? *device : local_device();
  ncclUniqueId id{};
  std::vector<uint8_t> bytes;
  if (rank() == 0) {
    ZT_NCCL_CHECK(ncclGetUniqueId(&id));
    bytes.assign(reinterpret_cast<const uint8_t*>(&id),
                 reinterpret_cast<const uint8_t*>(&id) + sizeof(id));
  }
  bytes = broadcast_bytes(bytes);
  if (bytes.size() != sizeof(id))
    throw BackendError("comm", str("NCCL bootstrap: got ", bytes.size(),
                                   " bytes of unique id, "
                                   "expected ",
                                   sizeof(id)));
  std::memcpy(&id, bytes.data(), sizeof(id));
  return std::make_unique<NcclCommunicator>(d, rank(), world_size(), id, timeout_s_);
}

}  // namespace zt::comm
