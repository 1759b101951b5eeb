// The one flat Adam (optim/flat_adam.h) over a ZeRO stage's ParamGroups: what decays, one run per
// group (this rank's value shard, or a replicated group's whole parameters for stage 0), and the
// full optimizer state for checkpoints, gathered from the shards when the groups are sharded
// over several ranks. Tested by tests/zero/test_zero_stage.cpp and tests/mpi/test_zero_parity.cpp.
#pragma once

#include <memory>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/optim/flat_adam.h"
#include "zerotrain/zero/param_group.h"

namespace zt::zero {

// The "decay" group: weight decay applies to weights only, not norms, biases or embeddings (as
// the Hugging Face Trainer does).
bool decays(const nn::Parameter& p);

// What the optimizer is given: the Adam settings, the precision policy and the precision guard
// (null: none).
struct AdamOptions {
  optim::AdamConfig adam;
  optim::Precision precision = optim::Precision::mixed;
  std::shared_ptr<optim::PrecisionGuard> guard;
};

enum class RunExtent {
  shard,   // a group's run is this rank's value shard, padding included (stages 1-3)
  params,  // a group's run is its parameters' elements, no padding (stage 0, a world of one)
};

// The flat Adam over `groups` (materialized, outliving it), started from `initial` (fresh or a
// full state, see optim::FlatAdam).
std::unique_ptr<optim::FlatAdam> make_group_adam(const std::vector<ParamGroup*>& groups,
                                                 RunExtent extent, const AdamOptions& options,
                                                 const optim::OptimizerState& initial,
                                                 Stream stream);

// The full state in checkpoint naming. Groups of a world of one: views of the state (every rank).
// Sharded groups: collective over `comm`; in host memory on the ranks that pass `keep` (the
// others get only the step), one group's padded state tensor gathered on the device at a time.
optim::OptimizerState gather_full_state(const optim::FlatAdam& adam,
                                        const std::vector<ParamGroup*>& groups,
                                        comm::Communicator& comm, bool keep, Stream stream);

}  // namespace zt::zero
