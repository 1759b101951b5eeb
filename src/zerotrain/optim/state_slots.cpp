// The state-slot table; see state_slots.h and [Note: optimizer masters].
#include "zerotrain/optim/state_slots.h"

namespace zt::optim {

bool steps_in_place_lowp(DType value_dtype, Precision precision) {
  return precision == Precision::low && value_dtype == DType::bf16;
}

std::vector<StateSlot> state_slots(DType value_dtype, Precision precision,
                                   const OptimizerConfig& config) {
  const bool low = steps_in_place_lowp(value_dtype, precision);
  const DType moments = low ? DType::bf16 : DType::f32;
  std::vector<StateSlot> out;
  switch (config.kind) {
    case OptimizerKind::adam:
    case OptimizerKind::lamb:
      out = {{SlotKind::exp_avg, ".exp_avg", moments},
             {SlotKind::exp_avg_sq, ".exp_avg_sq", moments}};
      if (config.kind == OptimizerKind::adam && config.amsgrad)
        out.push_back({SlotKind::max_exp_avg_sq, ".max_exp_avg_sq", DType::f32});
      break;
    case OptimizerKind::lion:
      out = {{SlotKind::exp_avg, ".exp_avg", moments}};
      break;
    case OptimizerKind::sgd:
      if (config.momentum != 0.0)
        out.push_back({SlotKind::momentum_buffer, ".momentum_buffer", moments});
      break;
  }
  if (value_dtype != DType::f32 && !low) out.push_back({SlotKind::master, ".master", DType::f32});
  return out;
}

std::vector<const char*> all_state_suffixes() {
  return {".exp_avg", ".exp_avg_sq", ".max_exp_avg_sq", ".momentum_buffer", ".master"};
}

}  // namespace zt::optim
