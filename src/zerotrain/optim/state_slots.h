// The state-slot table of the Adam family: which per-parameter state tensors exist for a value
// dtype, precision and variant, with their checkpoint suffixes and dtypes. The one table the flat
// Adam's step, the checkpoint names, the memory bytes and the precision guard read. Tested by
// tests/optim/test_flat_adam.cpp.
//
// [Note: optimizer masters]
// A parameter whose value is f16/bf16 gets an f32 master copy; its moments are f32 too. The step
// updates the master and writes the rounded value in the same pass (the run's param_copy), so
// value == round(master) after every step. An f32 value is stepped in place, being its own
// master. In Precision::low ([Note: precision modes] in precision.h) a bf16 value has no master:
// it is stepped in place with bf16 moments (optim::adam_step_lowp), and its state tensors are
// bf16. That mode has no third moment, so amsgrad with it is refused.
#pragma once

#include <vector>

#include "zerotrain/core/dtype.h"
#include "zerotrain/optim/precision.h"

namespace zt::optim {

enum class SlotKind { exp_avg, exp_avg_sq, max_exp_avg_sq, master };

struct StateSlot {
  SlotKind kind;
  const char* suffix;  // ".exp_avg", ".exp_avg_sq", ".max_exp_avg_sq", ".master"
  DType dtype;
};

// A bf16 value in Precision::low: stepped in place with bf16 moments, no master.
bool steps_in_place_lowp(DType value_dtype, Precision precision);
// The slots of one value dtype, in the order exp_avg, exp_avg_sq, [max_exp_avg_sq], [master].
std::vector<StateSlot> state_slots(DType value_dtype, Precision precision, bool amsgrad);

}  // namespace zt::optim
