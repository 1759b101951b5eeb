// What every ZeRO stage runs in: the communicator over the ranks (never null: a one-process run
// has a one-rank communicator on its device, comm/self_communicator.h), the device, the compute
// stream, and the owner of the side streams (comm_streams.h). Copies share the side streams.
// Tested through tests/zero/test_zero_stage.cpp and tests/mpi/test_zero_parity.cpp.
#pragma once

#include <memory>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/zero/comm_streams.h"

namespace zt::zero {

class ZeroContext {
 public:
  // comm outlives every stage built with this context.
  ZeroContext(comm::Communicator& comm, Device device, Stream compute)
      : comm_(&comm),
        device_(device),
        compute_(compute),
        streams_(std::make_shared<CommStreams>(device, comm.size())) {}
  // A one-process context: it owns a one-rank communicator on `device`.
  static ZeroContext one_process(Device device, Stream compute);

  comm::Communicator& comm() const { return *comm_; }
  // The same device, streams and side streams over another communicator (a stage's shard group,
  // [Note: hybrid sharding] in shard_comms.h), which outlives the copy.
  ZeroContext over(comm::Communicator& comm) const {
    ZeroContext c = *this;
    c.comm_ = &comm;
    return c;
  }
  Device device() const { return device_; }
  Stream compute() const { return compute_; }
  CommStreams& streams() const { return *streams_; }

 private:
  std::shared_ptr<comm::Communicator> owned_;  // one_process() only
  comm::Communicator* comm_;
  Device device_;
  Stream compute_;
  std::shared_ptr<CommStreams> streams_;
};

}  // namespace zt::zero
