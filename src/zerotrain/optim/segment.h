// The flat-segment interface of the optimizers: what one contiguous run of a (ZeRO) flat buffer
// hands to a step function, and the per-step arguments every optimizer shares. Tested by
// tests/optim/test_optimizers_torch.cpp and tests/optim/test_cpu_isa.cpp.
//
// [Note: flat segments]
// The ZeRO engine owns one flat f32 master buffer per rank and its state buffers (moments,
// momentum) laid out alike, a flat gradient buffer (f32/bf16/f16) and the flat low-precision
// parameter copy that the all-gather reads. A parameter group (weight decay or not) is a set of
// runs of those buffers: the engine describes each run by pointers into the flat buffers plus the
// group's weight decay, and a step function updates a whole list of runs at once (one OpenMP region
// on the CPU, one launch per 32 runs on the GPU). The per-element weight-decay mask is therefore
// expressed as runs: elements of a no-decay parameter sit in a run whose weight_decay is 0.
//
// Every buffer of one run lives on the same device (host memory for the CPU kernels, device
// memory for the CUDA kernels); runs must not overlap.
#pragma once

#include <cstdint>

#include "zerotrain/core/dtype.h"

namespace zt::optim {

// Adam / AdamW / LAMB: two moments.
struct AdamSegment {
  float* master = nullptr;      // [n] f32, updated in place
  float* exp_avg = nullptr;     // [n] f32, first moment
  float* exp_avg_sq = nullptr;  // [n] f32, second moment
  const void* grad = nullptr;   // [n] grad_dtype
  DType grad_dtype = DType::f32;
  void* param_copy = nullptr;  // [n] param_dtype, or null: receives round(master) in the same pass
  DType param_dtype = DType::bf16;
  int64_t n = 0;
  float weight_decay = 0.0f;        // this run's group value
  float* max_exp_avg_sq = nullptr;  // [n] f32, Adam with amsgrad only: the running max of v
};

// Lion: one moment.
struct LionSegment {
  float* master = nullptr;   // [n] f32
  float* exp_avg = nullptr;  // [n] f32
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  void* param_copy = nullptr;
  DType param_dtype = DType::bf16;
  int64_t n = 0;
  float weight_decay = 0.0f;
};

// SGD: the momentum buffer (null when momentum == 0).
struct SgdSegment {
  float* master = nullptr;           // [n] f32
  float* momentum_buffer = nullptr;  // [n] f32, or null without momentum
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  void* param_copy = nullptr;
  DType param_dtype = DType::bf16;
  int64_t n = 0;
  float weight_decay = 0.0f;
};

using LambSegment = AdamSegment;

// Which CPU code path runs the step: the best the CPU supports, or one forced (tests, benches).
enum class CpuIsa { best, scalar, avx2, avx512 };

// Per-step arguments shared by every optimizer.
struct StepArgs {
  int64_t step = 1;         // 1-based count of this update (bias correction; SGD's first step)
  float grad_scale = 1.0f;  // every gradient is multiplied by it first (loss unscale x clip)
  CpuIsa isa = CpuIsa::best;
};

}  // namespace zt::optim
