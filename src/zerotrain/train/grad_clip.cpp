// Gradient-norm clipping; see grad_clip.h. Tested by tests/train/test_grad_clip.cpp.
#include "zerotrain/train/grad_clip.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "zerotrain/kernels/reduce.h"

namespace zt::train {

namespace {
constexpr std::string_view kComponent = "grad_clip";
constexpr double kClipEps = 1e-6;  // torch.nn.utils.clip_grad_norm_'s
}  // namespace

double clip_coefficient(double norm, double max_norm) {
  if (!std::isfinite(norm) || norm < 0)
    throw ValueError(kComponent, str("norm = ", norm, ": must be finite and >= 0"));
  if (max_norm <= 0) return 1.0;
  return std::min(1.0, max_norm / (norm + kClipEps));
}

double global_grad_norm(const std::vector<Tensor>& grads, Stream stream) {
  if (grads.empty()) return 0.0;
  Tensor out = Tensor::empty({1}, DType::f32, grads.front().device(), stream);
  kernels::global_l2_norm(grads, out, stream);
  return static_cast<double>(out.to_floats(stream).front());
}

ClipResult clip_grad_norm(const std::vector<nn::Parameter*>& params, double max_norm,
                          double loss_scale, Stream stream) {
  if (!(loss_scale > 0) || !std::isfinite(loss_scale))
    throw ValueError(kComponent, str("loss_scale = ", loss_scale, ": must be finite and > 0"));
  std::vector<Tensor> grads;
  grads.reserve(params.size());
  for (const nn::Parameter* p : params) {
    if (!p->grad.defined()) throw ValueError(kComponent, str(p->name, ": gradient is undefined"));
    grads.push_back(p->grad);
  }
  ClipResult r;
  r.norm = global_grad_norm(grads, stream) / loss_scale;
  r.finite = std::isfinite(r.norm);
  if (!r.finite) {
    r.clip_coef = std::numeric_limits<double>::quiet_NaN();
    r.grad_scale = std::numeric_limits<float>::quiet_NaN();
    return r;
  }
  r.clip_coef = clip_coefficient(r.norm, max_norm);
  r.grad_scale = static_cast<float>(r.clip_coef / loss_scale);
  return r;
}

}  // namespace zt::train
