// Step functions of the optimizers over lists of flat-segment runs (see [Note: flat segments] in
// segment.h), on the CPU (vectorized, multithreaded) or the GPU (fused multi-tensor launches).
// Semantics, all math in f32 with g = grad * grad_scale:
//   Adam   (torch.optim.Adam):  g += wd p; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
//                               p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
//   AdamW  (torch.optim.AdamW): p *= 1 - lr wd, then the Adam update without the g += wd p
//   amsgrad (either):           vmax = max(vmax, v), and sqrt(vmax) replaces sqrt(v)
//   Lion   (Chen et al. 2023):  p *= 1 - lr wd; p -= lr sign(b1 m + (1-b1) g); m = b2 m + (1-b2) g
//   SGD    (torch.optim.SGD):   d = g + wd p; buf = d on step 1, else mu buf + (1-dampening) d;
//                               d = nesterov ? d + mu buf : buf; p -= lr d
//   LAMB   (DeepSpeed FusedLamb): m, v as Adam; u = (m/bc1) / denom + wd p with
//                               denom = sqrt(v/bc2) + eps (or sqrt(v/bc2 + eps) if
//                               eps_inside_sqrt); coeff = clamp(|p| / |u|, min_coeff, max_coeff) (1
//                               if either norm is 0), per run; p -= lr coeff u
// Every step writes round(p) to the run's param_copy when it has one.
// Tested by tests/optim/test_optimizers_torch.cpp (torch trajectories), test_cpu_isa.cpp (SIMD vs
// scalar), test_optim_checks.cpp (bad inputs), test_optimizers_cuda.cpp (GPU vs CPU).
#pragma once

#include <span>
#include <vector>

#include "zerotrain/core/device.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/optim/segment.h"

namespace zt::optim {

struct AdamParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  bool decoupled = true;  // true: AdamW's decoupled decay; false: Adam's L2 term in the gradient
  bool bias_correction = true;
  bool amsgrad = false;  // torch's: the denominator uses max(v) over the steps so far
};

struct LionParams {
  float lr = 1e-4f;
  float beta1 = 0.9f;
  float beta2 = 0.99f;
};

struct SgdParams {
  float lr = 1e-3f;
  float momentum = 0.0f;
  float dampening = 0.0f;
  bool nesterov = false;  // needs momentum > 0 and dampening == 0, as torch requires
};

// DeepSpeed FusedLamb's defaults.
struct LambParams {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  bool bias_correction = true;
  bool eps_inside_sqrt = false;
  float max_coeff = 10.0f;
  float min_coeff = 0.01f;
};

// The squared norms LAMB's trust ratio needs, per run: sum p^2 and sum u^2 (before the update).
struct LambNorms {
  double param_sq = 0;
  double update_sq = 0;
};

// `device` says where every buffer of every run lives; `stream` orders the CUDA launches (the
// CPU path ignores it and returns when done). Throw ValueError / DTypeError naming the bad run
// or hyper-parameter.
void adam_step(std::span<const AdamSegment> runs, const AdamParams& hp, const StepArgs& args,
               Device device = Device::cpu(), Stream stream = {});
void lion_step(std::span<const LionSegment> runs, const LionParams& hp, const StepArgs& args,
               Device device = Device::cpu(), Stream stream = {});
void sgd_step(std::span<const SgdSegment> runs, const SgdParams& hp, const StepArgs& args,
              Device device = Device::cpu(), Stream stream = {});

// LAMB in two passes: lamb_moments updates m and v and returns each run's norms; lamb_apply
// updates the params from those norms. A ZeRO engine whose run is part of a parameter sums the
// norms of that parameter's runs over the ranks in between; lamb_step does both passes treating
// each run as a whole parameter, on the CPU or on `device`.
std::vector<LambNorms> lamb_moments(std::span<const LambSegment> runs, const LambParams& hp,
                                    const StepArgs& args);
void lamb_apply(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
                std::span<const LambNorms> norms);
// The same two passes on a CUDA device, the norms staying there: device_norms is device memory,
// [2 * runs.size()] f64, sum p^2 at 2 r and sum u^2 at 2 r + 1 for run r (what LambNorms holds).
void lamb_moments(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
                  double* device_norms, Device device, Stream stream = {});
void lamb_apply(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
                const double* device_norms, Device device, Stream stream = {});
void lamb_step(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
               Device device = Device::cpu(), Stream stream = {});

// The CPU paths this machine can run (scalar always; avx2 needs AVX2+FMA+F16C; avx512 needs
// AVX-512 F/BW/VL/DQ), and the one CpuIsa::best picks.
bool cpu_isa_supported(CpuIsa isa);
CpuIsa best_cpu_isa();
const char* cpu_isa_name(CpuIsa isa);

}  // namespace zt::optim
