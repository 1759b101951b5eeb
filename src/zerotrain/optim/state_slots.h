// The state-slot table of the Adam family: which per-parameter state tensors exist for a value
// dtype, precision and variant, with their checkpoint suffixes and dtypes. The one table the flat
// Adam's step, the checkpoint names, the memory bytes and the precision guard read. Tested by
// tests/optim/test_flat_optimizer.cpp.
//
// [Note: optimizer masters]
// A parameter whose value is f16/bf16 gets an f32 master copy; its moments are f32 too. The step
// updates the master and writes the rounded value in the same pass (the run's param_copy), so
// value == round(master) after every step. An f32 value is stepped in place, being its own
// master. In Precision::low ([Note: precision modes] in precision.h) a bf16 value has no master:
// it is stepped in place with bf16 moments (optim::adam_step_lowp), and its state tensors are
// bf16. That mode has no third moment, so amsgrad with it is refused, and it is Adam's alone
// (Lamb, Lion and SGD keep f32 state).
// The other update rules keep their torch / DeepSpeed state under torch's names: Lamb the two
// moments, Lion one (".exp_avg"), SGD with momentum its ".momentum_buffer" (none without).
#pragma once

#include <vector>

#include "zerotrain/core/dtype.h"
#include "zerotrain/optim/optimizer_config.h"
#include "zerotrain/optim/precision.h"

namespace zt::optim {

enum class SlotKind { exp_avg, exp_avg_sq, max_exp_avg_sq, momentum_buffer, master };

struct StateSlot {
  SlotKind kind;
  // ".exp_avg", ".exp_avg_sq", ".max_exp_avg_sq", ".momentum_buffer", ".master"
  const char* suffix;
  DType dtype;
};

// A bf16 value in Precision::low: stepped in place with bf16 moments, no master.
bool steps_in_place_lowp(DType value_dtype, Precision precision);
// The slots of one value dtype under `config`'s update rule, in the order exp_avg, exp_avg_sq,
// [max_exp_avg_sq] (Adam, Lamb; Lion: exp_avg only; SGD: momentum_buffer with momentum > 0),
// then [master].
std::vector<StateSlot> state_slots(DType value_dtype, Precision precision,
                                   const OptimizerConfig& config);
// Every suffix any configuration uses (to tell a state tensor's parameter from its name).
std::vector<const char*> all_state_suffixes();

}  // namespace zt::optim
