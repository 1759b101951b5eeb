// Adam / AdamW stepping bf16 values in place with bf16 moments: the optimizer of the
// low-precision mode (no f32 master copy; see [Note: low-precision optimizer]). Same semantics and
// per-step constants as optim::adam_step (optimizers.h). Tested by
// tests/optim/test_low_precision_optim.cpp (scalar reference, SIMD bitwise, bad inputs) and
// tests/optim/test_optimizers_cuda.cpp (GPU vs CPU).
//
// [Note: low-precision optimizer]
// Each element loads p, m and v from bf16, widens them to f32, runs the f32 update sequence of
// adam_step in registers and rounds p, m and v once each at the store (round to nearest even, as
// core/half.h rounds). An update smaller than half a bf16 ulp of p (2^-9 relative) therefore
// rounds back to p: the parameter does not move. precision_guard.h warns when that is the
// typical case.
#pragma once

#include <cstdint>
#include <span>

#include "zerotrain/core/device.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::optim {

// One run of a low-precision flat segment: the bf16 values are their own master.
struct AdamSegmentLowp {
  bf16* param = nullptr;       // [n] bf16, updated in place
  bf16* exp_avg = nullptr;     // [n] bf16, first moment
  bf16* exp_avg_sq = nullptr;  // [n] bf16, second moment
  const void* grad = nullptr;  // [n] grad_dtype (f32, bf16 or f16)
  DType grad_dtype = DType::bf16;
  int64_t n = 0;
  float weight_decay = 0.0f;  // this run's group value
};

// Throws ValueError / DTypeError naming the bad run or hyper-parameter, as adam_step does.
void adam_step_lowp(std::span<const AdamSegmentLowp> runs, const AdamParams& hp,
                    const StepArgs& args, Device device = Device::cpu(), Stream stream = {});

}  // namespace zt::optim
