// The two training precisions (see [Note: precision modes]). Tested by
// tests/train/test_low_precision.cpp.
//
// [Note: precision modes]
// mixed (the default, DeepSpeed's behaviour): bf16 values for forward/backward, f32 gradients, an
// f32 master copy of every bf16 value and f32 moments; the optimizer updates the master and writes
// round(master) into the value. low (FSDP's default without a mixed-precision policy, for
// memory-bound setups): no master copy; the optimizer updates the bf16 values in place with bf16
// moments (optim/low_precision.h), 4 bytes of optimizer state per parameter instead of 12. A low
// precision update smaller than half a bf16 ulp rounds away; the precision guard warns when
// that is typical. f32 values are stepped in place with f32 moments in both modes.
#pragma once

#include <string_view>

namespace zt::optim {

enum class Precision { mixed, low };

std::string_view precision_name(Precision p);  // "mixed", "low"
// Throws ValueError naming the bad value unless it is "mixed" or "low".
Precision parse_precision(std::string_view name);

}  // namespace zt::optim
