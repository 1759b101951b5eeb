// AdamW (or Adam, amsgrad, no bias correction: train::AdamWOptions) over this rank's shards of
// every ParamGroup (ZeRO stages 1-3): f32 masters, both moments and amsgrad's max_exp_avg_sq exist
// for the rank's shard only. Each step hands optim::adam_step one run per piece of a
// parameter inside the shard (see [Note: flat shards] in optim/shard.h), with that parameter's
// weight decay, so the groups "decay" / "no_decay" of train::AdamW are kept. The update is
// elementwise and every CPU path gives the scalar path's bits, so each element gets bitwise the
// update stage 0's per-parameter train::AdamW gives it. Tested by tests/mpi/test_zero_parity.cpp.
//
// Masters: a bf16/f16 group keeps an f32 master shard and writes round(master) into the value
// shard in the same pass; an f32 group's value shard is its own master (as train::AdamW steps f32
// parameters in place). In Precision::low a bf16 group has no master: its value shard is stepped in
// place with bf16 moments (optim::adam_step_lowp), as train::AdamW steps whole bf16 parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "zerotrain/comm/communicator.h"
#include "zerotrain/train/optimizer.h"
#include "zerotrain/zero/param_group.h"

namespace zt::zero {

class ShardedAdam {
 public:
  // groups: materialized, outliving this object. initial: a full state to start from (resume; its
  // step > 0) or an empty one (fresh: masters from the current values, zero moments). Throws
  // ValueError for amsgrad with a low-precision (bf16, Precision::low) group, or a state tensor
  // missing from `initial`.
  ShardedAdam(std::vector<ParamGroup*> groups, train::AdamWOptions options,
              const train::OptimizerState& initial, Stream stream);

  // One update of every shard from the groups' gradient shards.
  void step(float lr, float grad_scale, Stream stream);
  int64_t step_count() const { return step_; }

  // Collective: the full state in train::AdamW's naming (checkpoints), in host memory, on the
  // ranks that pass `keep` (the others get only the step). One group's padded state tensor is
  // gathered on the device at a time, so the device never holds the whole state.
  train::OptimizerState full_state(comm::Communicator* comm, bool keep, Stream stream) const;
  // Bytes of optimizer state this rank holds.
  int64_t bytes() const;

 private:
  struct Slot {
    ParamGroup* group;
    Tensor master;          // [shard] f32 for bf16/f16 groups; undefined for f32 (the value shard)
    Tensor exp_avg;         // [shard] f32, or bf16 when low
    Tensor exp_avg_sq;      // [shard] f32, or bf16 when low
    Tensor max_exp_avg_sq;  // [shard] f32 with amsgrad (never low); else undefined
    bool low = false;       // a bf16 group in Precision::low: the value shard is stepped in place
  };
  Tensor master_of(const Slot& s) const;
  void check_updates(float lr, Stream stream);  // the precision guard, when due

  train::AdamWOptions options_;
  std::vector<Slot> slots_;
  int64_t step_ = 0;
};

}  // namespace zt::zero
