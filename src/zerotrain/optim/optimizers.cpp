// Front-end of the optimizers: hyper-parameter and run checks, the per-run f32 constants (in
// double, rounded once), then the CPU driver or the CUDA launches. See optimizers.h.
// Tested by tests/optim/test_optim_checks.cpp and the other tests/optim/ files.
#include "zerotrain/optim/optimizers.h"

#include <cmath>
#include <string_view>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/dispatch.h"
#include "zerotrain/optim/adam_common.h"
#include "zerotrain/optim/cpu/driver.h"
#if ZT_WITH_CUDA
#include "zerotrain/optim/cuda/lamb.h"
#include "zerotrain/optim/cuda/launch.h"
#endif

namespace zt::optim {

namespace {

constexpr std::string_view kComponent = "optim";

[[noreturn]] void bad(std::string_view op, std::string_view name, double value,
                      std::string_view want) {
  throw ValueError(kComponent, str(op, ": ", name, " = ", value, ": must be ", want));
}

void check_lr(std::string_view op, float lr) {
  if (!(lr >= 0.f) || !std::isfinite(lr)) bad(op, "lr", lr, "finite and >= 0");
}

void check_beta(std::string_view op, std::string_view name, float beta) {
  if (!(beta >= 0.f && beta < 1.f)) bad(op, name, beta, "in [0, 1)");
}

void check_eps(std::string_view op, float eps) {
  if (!(eps >= 0.f) || !std::isfinite(eps)) bad(op, "eps", eps, "finite and >= 0");
}

void check_args(std::string_view op, const StepArgs& a) {
  if (a.step < 1)
    bad(op, "step", static_cast<double>(a.step), ">= 1 (the 1-based count of this update)");
  if (!std::isfinite(a.grad_scale)) bad(op, "grad_scale", a.grad_scale, "finite");
}

// The parts every segment type has, checked and turned into a Run.
template <class S>
cpu::Run check_run(std::string_view op, const S& s, size_t index, float* s0, float* s1,
                   int states) {
  auto fail = [&](std::string_view what) {
    throw ValueError(kComponent, str(op, ": run #", index, ": ", what));
  };
  if (s.n < 0) fail(str("n = ", s.n, ": must be >= 0"));
  if (!(s.weight_decay >= 0.f) || !std::isfinite(s.weight_decay))
    fail(str("weight_decay = ", s.weight_decay, ": must be finite and >= 0"));
  if (s.grad_dtype != DType::f32 && s.grad_dtype != DType::bf16 && s.grad_dtype != DType::f16)
    throw DTypeError(kComponent, str(op, ": run #", index, ": grad_dtype ",
                                     dtype_name(s.grad_dtype), ", expected f32, bf16 or f16"));
  if (s.param_copy && s.param_dtype != DType::bf16 && s.param_dtype != DType::f16)
    throw DTypeError(kComponent, str(op, ": run #", index, ": param_dtype ",
                                     dtype_name(s.param_dtype), ", expected bf16 or f16"));
  if (s.n > 0) {
    if (!s.master) fail("master is null");
    if (!s.grad) fail("grad is null");
    if (states >= 1 && !s0) fail("the first state buffer is null");
    if (states >= 2 && !s1) fail("the second state buffer is null");
  }
  cpu::Run r;
  r.p = s.master;
  r.s0 = s0;
  r.s1 = s1;
  r.grad = s.grad;
  r.grad_dtype = s.grad_dtype;
  r.copy = s.param_copy;
  r.copy_dtype = s.param_dtype;
  r.n = s.n;
  return r;
}

float f(double x) {
  return static_cast<float>(x);
}

}  // namespace

void check_adam(std::string_view op, const AdamParams& hp, const StepArgs& args) {
  check_lr(op, hp.lr);
  check_beta(op, "beta1", hp.beta1);
  check_beta(op, "beta2", hp.beta2);
  check_eps(op, hp.eps);
  check_args(op, args);
}

cpu::AdamConsts adam_consts(const AdamParams& hp, const StepArgs& args, float weight_decay) {
  const double lr = hp.lr, b1 = hp.beta1, b2 = hp.beta2, t = static_cast<double>(args.step);
  cpu::AdamConsts c{};
  c.beta1 = hp.beta1;
  c.beta2 = hp.beta2;
  c.one_minus_beta1 = f(1.0 - b1);
  c.one_minus_beta2 = f(1.0 - b2);
  c.step_size = f(hp.bias_correction ? lr / (1.0 - std::pow(b1, t)) : lr);
  c.bc2_sqrt = f(hp.bias_correction ? std::sqrt(1.0 - std::pow(b2, t)) : 1.0);
  c.eps = hp.eps;
  c.grad_scale = args.grad_scale;
  c.decay = hp.decoupled ? f(1.0 - lr * static_cast<double>(weight_decay)) : 1.0f;
  c.l2_wd = hp.decoupled ? 0.0f : weight_decay;
  return c;
}

void adam_step(std::span<const AdamSegment> runs, const AdamParams& hp, const StepArgs& args,
               Device device, Stream stream) {
  constexpr std::string_view op = "adam_step";
  check_adam(op, hp, args);
  std::vector<cpu::Run> rs;
  std::vector<cpu::AdamConsts> cs;
  for (size_t i = 0; i < runs.size(); ++i) {
    const AdamSegment& s = runs[i];
    rs.push_back(check_run(op, s, i, s.exp_avg, s.exp_avg_sq, 2));
    if (hp.amsgrad && s.n > 0 && !s.max_exp_avg_sq)
      throw ValueError(kComponent, str(op, ": run #", i, ": max_exp_avg_sq is null with amsgrad"));
    if (!hp.amsgrad && s.max_exp_avg_sq)
      throw ValueError(kComponent,
                       str(op, ": run #", i, ": max_exp_avg_sq given but amsgrad = false"));
    rs.back().s2 = s.max_exp_avg_sq;
    cs.push_back(adam_consts(hp, args, s.weight_decay));
  }
  if (device.is_cuda())
    ZT_ON_CUDA("adam_step", cuda::adam(rs, cs, device, stream));
  else
    cpu::adam(rs, cs, cpu::kernel_table(args.isa));
}

void lion_step(std::span<const LionSegment> runs, const LionParams& hp, const StepArgs& args,
               Device device, Stream stream) {
  constexpr std::string_view op = "lion_step";
  check_lr(op, hp.lr);
  check_beta(op, "beta1", hp.beta1);
  check_beta(op, "beta2", hp.beta2);
  check_args(op, args);
  std::vector<cpu::Run> rs;
  std::vector<cpu::LionConsts> cs;
  for (size_t i = 0; i < runs.size(); ++i) {
    const LionSegment& s = runs[i];
    rs.push_back(check_run(op, s, i, s.exp_avg, nullptr, 1));
    cpu::LionConsts c{};
    c.lr = hp.lr;
    c.beta1 = hp.beta1;
    c.beta2 = hp.beta2;
    c.one_minus_beta1 = f(1.0 - static_cast<double>(hp.beta1));
    c.one_minus_beta2 = f(1.0 - static_cast<double>(hp.beta2));
    c.grad_scale = args.grad_scale;
    c.decay = f(1.0 - static_cast<double>(hp.lr) * static_cast<double>(s.weight_decay));
    cs.push_back(c);
  }
  if (device.is_cuda())
    ZT_ON_CUDA("lion_step", cuda::lion(rs, cs, device, stream));
  else
    cpu::lion(rs, cs, cpu::kernel_table(args.isa));
}

void sgd_step(std::span<const SgdSegment> runs, const SgdParams& hp, const StepArgs& args,
              Device device, Stream stream) {
  constexpr std::string_view op = "sgd_step";
  check_lr(op, hp.lr);
  if (!(hp.momentum >= 0.f) || !std::isfinite(hp.momentum))
    bad(op, "momentum", hp.momentum, "finite and >= 0");
  if (!std::isfinite(hp.dampening)) bad(op, "dampening", hp.dampening, "finite");
  if (hp.nesterov && (hp.momentum <= 0.f || hp.dampening != 0.f))
    bad(op, "dampening", hp.dampening, "0 with momentum > 0 for nesterov");
  check_args(op, args);
  const bool has_momentum = hp.momentum != 0.f;
  std::vector<cpu::Run> rs;
  std::vector<cpu::SgdConsts> cs;
  for (size_t i = 0; i < runs.size(); ++i) {
    const SgdSegment& s = runs[i];
    if (!has_momentum && s.momentum_buffer)
      throw ValueError(kComponent,
                       str(op, ": run #", i, ": momentum_buffer given but momentum = 0"));
    rs.push_back(check_run(op, s, i, has_momentum ? s.momentum_buffer : nullptr, nullptr,
                           has_momentum ? 1 : 0));
    cpu::SgdConsts c{};
    c.lr = hp.lr;
    c.momentum = hp.momentum;
    c.one_minus_dampening = f(1.0 - static_cast<double>(hp.dampening));
    c.grad_scale = args.grad_scale;
    c.wd = s.weight_decay;
    c.first_step = args.step == 1;
    c.nesterov = hp.nesterov;
    cs.push_back(c);
  }
  if (device.is_cuda())
    ZT_ON_CUDA("sgd_step", cuda::sgd(rs, cs, device, stream));
  else
    cpu::sgd(rs, cs, cpu::kernel_table(args.isa));
}

namespace {

void check_lamb(const LambParams& hp, const StepArgs& args) {
  constexpr std::string_view op = "lamb_step";
  check_lr(op, hp.lr);
  check_beta(op, "beta1", hp.beta1);
  check_beta(op, "beta2", hp.beta2);
  check_eps(op, hp.eps);
  if (!(hp.min_coeff >= 0.f) || !std::isfinite(hp.min_coeff))
    bad(op, "min_coeff", hp.min_coeff, "finite and >= 0");
  if (!(hp.max_coeff >= hp.min_coeff) || !std::isfinite(hp.max_coeff))
    bad(op, "max_coeff", hp.max_coeff, "finite and >= min_coeff");
  check_args(op, args);
}

void lamb_runs(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
               std::vector<cpu::Run>& rs, std::vector<cpu::LambConsts>& cs) {
  const double b1 = hp.beta1, b2 = hp.beta2, t = static_cast<double>(args.step);
  for (size_t i = 0; i < runs.size(); ++i) {
    const LambSegment& s = runs[i];
    rs.push_back(check_run("lamb_step", s, i, s.exp_avg, s.exp_avg_sq, 2));
    cpu::LambConsts c{};
    c.beta1 = hp.beta1;
    c.beta2 = hp.beta2;
    c.one_minus_beta1 = f(1.0 - b1);
    c.one_minus_beta2 = f(1.0 - b2);
    c.bc1 = hp.bias_correction ? f(1.0 - std::pow(b1, t)) : 1.0f;
    c.bc2 = hp.bias_correction ? f(1.0 - std::pow(b2, t)) : 1.0f;
    c.eps = hp.eps;
    c.grad_scale = args.grad_scale;
    c.eps_inside_sqrt = hp.eps_inside_sqrt;
    c.wd = s.weight_decay;
    cs.push_back(c);
  }
}

}  // namespace

std::vector<LambNorms> lamb_moments(std::span<const LambSegment> runs, const LambParams& hp,
                                    const StepArgs& args) {
  check_lamb(hp, args);
  std::vector<cpu::Run> rs;
  std::vector<cpu::LambConsts> cs;
  lamb_runs(runs, hp, args, rs, cs);
  return cpu::lamb_moments(rs, cs, cpu::kernel_table(args.isa));
}

void lamb_apply(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
                std::span<const LambNorms> norms) {
  check_lamb(hp, args);
  if (norms.size() != runs.size())
    throw ValueError(kComponent,
                     str("lamb_apply: ", norms.size(), " norms for ", runs.size(), " runs"));
  std::vector<cpu::Run> rs;
  std::vector<cpu::LambConsts> cs;
  lamb_runs(runs, hp, args, rs, cs);
  for (size_t i = 0; i < cs.size(); ++i) {
    // DeepSpeed's trust ratio: |p| / |u| clamped, 1 when either norm is 0; computed in f32.
    const float w = std::sqrt(f(norms[i].param_sq)), u = std::sqrt(f(norms[i].update_sq));
    float coeff = 1.0f;
    if (w != 0.f && u != 0.f) coeff = std::min(std::max(w / u, hp.min_coeff), hp.max_coeff);
    cs[i].lr_coeff = hp.lr * coeff;
  }
  cpu::lamb_apply(rs, cs, cpu::kernel_table(args.isa));
}

namespace {

// The device-norm overloads: a CUDA device and, with runs to update, a norms buffer.
void check_device_norms(std::string_view op, size_t runs, const void* norms, Device device) {
  if (!device.is_cuda())
    throw ValueError(kComponent, str(op,
                                     ": device = cpu: the device-norm overload runs on CUDA "
                                     "(the host one returns LambNorms)"));
  if (runs > 0 && !norms)
    throw ValueError(kComponent, str(op, ": device_norms is null for ", runs, " runs"));
}

}  // namespace

void lamb_moments(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
                  double* device_norms, Device device, Stream stream) {
  check_lamb(hp, args);
  check_device_norms("lamb_moments", runs.size(), device_norms, device);
  std::vector<cpu::Run> rs;
  std::vector<cpu::LambConsts> cs;
  lamb_runs(runs, hp, args, rs, cs);
  ZT_ON_CUDA("lamb_moments", cuda::lamb_moments(rs, cs, device_norms, device, stream));
}

void lamb_apply(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
                const double* device_norms, Device device, Stream stream) {
  check_lamb(hp, args);
  check_device_norms("lamb_apply", runs.size(), device_norms, device);
  std::vector<cpu::Run> rs;
  std::vector<cpu::LambConsts> cs;
  lamb_runs(runs, hp, args, rs, cs);
  ZT_ON_CUDA("lamb_apply",
             cuda::lamb_apply(rs, cs, device_norms,
                              cuda::LambTrust{hp.lr, hp.min_coeff, hp.max_coeff}, device, stream));
}

void lamb_step(std::span<const LambSegment> runs, const LambParams& hp, const StepArgs& args,
               Device device, Stream stream) {
  if (device.is_cuda()) {
    check_lamb(hp, args);
    std::vector<cpu::Run> rs;
    std::vector<cpu::LambConsts> cs;
    lamb_runs(runs, hp, args, rs, cs);
    ZT_ON_CUDA("lamb_step", cuda::lamb(rs, cs, cuda::LambTrust{hp.lr, hp.min_coeff, hp.max_coeff},
                                       device, stream));
    return;
  }
  const std::vector<LambNorms> norms = lamb_moments(runs, hp, args);
  lamb_apply(runs, hp, args, norms);
}

}  // namespace zt::optim
