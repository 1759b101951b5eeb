// Lamb's per-parameter norms over sharded groups: each rank holds some pieces of a parameter, so
// the norm slots are summed over the ranks before the trust ratios ([Note: Lamb across shards]
// in optim/flat_optimizer.h). Tested by tests/mpi/test_zero_parity.cpp.
#pragma once

#include "zerotrain/comm/communicator.h"
#include "zerotrain/core/device.h"
#include "zerotrain/optim/flat_optimizer.h"

namespace zt::zero {

// Sums Lamb's norm slots over the ranks of `comm`: each slot has one writer and zeros elsewhere,
// so adding the f64 bit patterns as integers gives that writer's value exactly (the
// communicators reduce no f64); on `device`, where the collectives work.
optim::NormSum norm_sum_over(comm::Communicator& comm, Device device);

}  // namespace zt::zero
