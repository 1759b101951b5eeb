// What the optimizer front-end (optim/optimizers.cpp) hands the CPU and CUDA kernels: one run in
// dtype-erased form, and each optimizer's per-step f32 constants, computed on the host in double
// and rounded once (as torch computes its scalars). Tested through tests/optim/.
#pragma once

#include <cstdint>

#include "zerotrain/core/dtype.h"
#include "zerotrain/core/half.h"

namespace zt::optim::cpu {

// One run of a flat segment: master p and up to two state buffers, all f32.
struct Run {
  float* p = nullptr;   // [n] f32 master
  float* s0 = nullptr;  // [n] f32: exp_avg (Adam, Lion, LAMB) or the momentum buffer (SGD)
  float* s1 = nullptr;  // [n] f32: exp_avg_sq (Adam, LAMB)
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  void* copy = nullptr;  // [n] copy_dtype or null
  DType copy_dtype = DType::bf16;
  int64_t n = 0;
  float* s2 = nullptr;  // [n] f32: max_exp_avg_sq (Adam with amsgrad), else null
};

// One run of a low-precision segment (optim/low_precision.h): bf16 values and moments, no copy.
struct RunLowp {
  bf16* p = nullptr;   // [n] bf16 values, updated in place
  bf16* s0 = nullptr;  // [n] bf16 exp_avg
  bf16* s1 = nullptr;  // [n] bf16 exp_avg_sq
  const void* grad = nullptr;
  DType grad_dtype = DType::bf16;
  int64_t n = 0;
};

struct AdamConsts {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float step_size;  // lr / (1 - beta1^t), or lr
  float bc2_sqrt;   // sqrt(1 - beta2^t), or 1
  float eps;
  float grad_scale;
  float decay;  // per run: 1 - lr wd (AdamW), 1 for Adam
  float l2_wd;  // per run: wd (Adam), 0 for AdamW
};

struct LionConsts {
  float lr, beta1, one_minus_beta1, beta2, one_minus_beta2;
  float grad_scale;
  float decay;  // per run: 1 - lr wd
};

struct SgdConsts {
  float lr, momentum, one_minus_dampening;
  float grad_scale;
  float wd;  // per run
  bool first_step;
  bool nesterov;
};

struct LambConsts {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float bc1, bc2;  // 1 - beta^t, or 1
  float eps;
  float grad_scale;
  bool eps_inside_sqrt;
  float wd;        // per run
  float lr_coeff;  // per run, pass 2 only: lr * trust ratio
};

}  // namespace zt::optim::cpu
