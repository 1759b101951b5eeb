// Front-end of AdamW: argument and hyper-parameter checks, the per-step scalars, then the CPU or
// CUDA kernel. Tested by tests/kernels/test_adamw.cpp (CPU, bad inputs) and test_adamw_cuda.cpp.
#include "zerotrain/kernels/adamw.h"

#include <cmath>

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/adamw.h"
#include "zerotrain/kernels/dispatch.h"
#if ZT_WITH_CUDA
#include "zerotrain/kernels/cuda/adamw.h"
#endif

namespace zt::kernels {

namespace {

constexpr std::string_view kOp = "adamw_step";

// The ranges torch.optim.AdamW accepts, plus a 1-based step.
void check_hyper_params(const AdamWParams& p) {
  auto bad = [](std::string_view name, auto value, std::string_view want) {
    throw ValueError(kOp, str(name, " = ", value, ": must be ", want));
  };
  if (!(p.lr >= 0.f) || !std::isfinite(p.lr)) bad("lr", p.lr, "finite and >= 0");
  if (!(p.beta1 >= 0.f && p.beta1 < 1.f)) bad("beta1", p.beta1, "in [0, 1)");
  if (!(p.beta2 >= 0.f && p.beta2 < 1.f)) bad("beta2", p.beta2, "in [0, 1)");
  if (!(p.eps >= 0.f) || !std::isfinite(p.eps)) bad("eps", p.eps, "finite and >= 0");
  if (!(p.weight_decay >= 0.f) || !std::isfinite(p.weight_decay))
    bad("weight_decay", p.weight_decay, "finite and >= 0");
  if (p.step < 1) bad("step", p.step, ">= 1 (the 1-based count of this update)");
}

// A state tensor: defined, contiguous, on param's device, param's shape, dtype in `allowed`.
void check_like_param(std::string_view name, const Tensor& t, const Tensor& param,
                      std::initializer_list<DType> allowed) {
  check_arg(kOp, name, t, param, "param");
  check_same_shape(kOp, name, t, "param", param);
  check_dtype(kOp, name, t, allowed);
}

}  // namespace

void adamw_step(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamWParams& p,
                Tensor* param_copy, Stream stream) {
  check_defined(kOp, "param", param);
  check_contiguous(kOp, "param", param);
  check_dtype(kOp, "param", param, kFloatTypes);
  check_like_param("grad", grad, param, kFloatTypes);
  if (param.dtype() == DType::f32) {
    check_like_param("m", m, param, {DType::f32});
    check_like_param("v", v, param, {DType::f32});
  } else {
    check_like_param("m", m, param, {DType::f32, param.dtype()});
    check_like_param("v", v, param, {DType::f32, param.dtype()});
  }
  check_same_dtype(kOp, "m", m, "v", v);
  if (param_copy) check_like_param("param_copy", *param_copy, param, {DType::f16, DType::bf16});
  check_hyper_params(p);
  if (param.numel() == 0) return;
  const cpu::AdamWScalars s = cpu::adamw_scalars(p);
  if (param.device().is_cuda())
    ZT_ON_CUDA(kOp, cuda::adamw_step(param, grad, m, v, s, param_copy, stream));
  else
    cpu::adamw_step(param, grad, m, v, s, param_copy);
}

}  // namespace zt::kernels
