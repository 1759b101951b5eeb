// The precision guard; see precision_guard.h and [Note: precision guard].
// Tested by tests/optim/test_precision_guard.cpp.
#include "zerotrain/optim/precision_guard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "zerotrain/core/error.h"

namespace zt::optim {

namespace {

constexpr std::string_view kComponent = "precision";

// A window [begin, end) of one tensor's elements.
struct Window {
  size_t tensor;
  int64_t begin, end;
};

// Fixed windows spread evenly over the concatenation of the tensors.
std::vector<Window> sample_windows(std::span<const GuardTensors> tensors,
                                   const PrecisionGuardOptions& o) {
  std::vector<int64_t> first(tensors.size() + 1, 0);
  for (size_t i = 0; i < tensors.size(); ++i)
    first[i + 1] = first[i] + tensors[i].value.numel();
  const int64_t total = first.back();
  std::vector<Window> out;
  if (total <= o.sample) {
    for (size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].value.numel() > 0) out.push_back({i, 0, tensors[i].value.numel()});
    return out;
  }
  const int64_t windows = std::max<int64_t>(1, o.sample / o.window);
  const int64_t stride = total / windows;
  for (int64_t w = 0; w < windows; ++w) {
    const int64_t at = w * stride;
    const auto t =
        static_cast<size_t>(std::upper_bound(first.begin(), first.end(), at) - first.begin() - 1);
    const int64_t begin = at - first[t];
    out.push_back({t, begin, std::min(begin + o.window, tensors[t].value.numel())});
  }
  return out;
}

std::vector<float> read(const Tensor& t, const Window& w, Stream stream) {
  return t.flatten().slice(0, w.begin, w.end).to_floats(stream);
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

double update_resolution(DType update_dtype) {
  switch (update_dtype) {
    case DType::bf16:
      return std::ldexp(1.0, -9);
    case DType::f16:
      return std::ldexp(1.0, -12);
    case DType::f32:
      return std::ldexp(1.0, -25);
    default:
      throw DTypeError(kComponent, str("update dtype ", dtype_name(update_dtype),
                                       ": expected bf16, f16 or f32"));
  }
}

PrecisionGuard::PrecisionGuard(WarningSink sink, PrecisionGuardOptions options)
    : sink_(std::move(sink)), options_(std::move(options)) {
  if (!sink_) throw ValueError(kComponent, "sink: the WarningSink is empty");
  if (options_.sample < 1)
    throw ValueError(kComponent, str("sample = ", options_.sample, ": must be >= 1"));
  if (options_.window < 1)
    throw ValueError(kComponent, str("window = ", options_.window, ": must be >= 1"));
  if (options_.every < 0)
    throw ValueError(kComponent, str("every = ", options_.every, ": must be >= 0"));
}

bool PrecisionGuard::due(int64_t step) const {
  if (warned_ || step < 1) return false;
  if (std::find(options_.early_steps.begin(), options_.early_steps.end(), step) !=
      options_.early_steps.end())
    return true;
  return options_.every > 0 && step % options_.every == 0;
}

std::optional<GuardReading> PrecisionGuard::check(int64_t step, const AdamParams& hp,
                                                  std::span<const GuardTensors> tensors,
                                                  Stream stream) {
  for (const GuardTensors& t : tensors)
    if (t.exp_avg.numel() != t.value.numel() || t.exp_avg_sq.numel() != t.value.numel())
      throw ValueError(kComponent, str("moments ", t.exp_avg.describe(), ", ",
                                       t.exp_avg_sq.describe(), " for value ", t.value.describe()));
  const double lr = hp.lr, t = static_cast<double>(step);
  const double step_size = hp.bias_correction ? lr / (1.0 - std::pow(hp.beta1, t)) : lr;
  const double bc2 = hp.bias_correction ? std::sqrt(1.0 - std::pow(hp.beta2, t)) : 1.0;
  std::vector<double> ratios;
  std::map<DType, int64_t> per_dtype;
  for (const Window& w : sample_windows(tensors, options_)) {
    const GuardTensors& g = tensors[w.tensor];
    const std::vector<float> p = read(g.value, w, stream), m = read(g.exp_avg, w, stream),
                             v = read(g.exp_avg_sq, w, stream);
    const double decay = hp.decoupled ? lr * g.weight_decay : 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] == 0.0f || !std::isfinite(p[i])) continue;
      const double dir = m[i] / (std::sqrt(static_cast<double>(v[i])) / bc2 + hp.eps);
      ratios.push_back(std::abs(step_size * dir + decay * p[i]) / std::abs(p[i]));
      ++per_dtype[g.value.dtype()];
    }
  }
  if (ratios.empty()) return std::nullopt;
  GuardReading r;
  r.sampled = static_cast<int64_t>(ratios.size());
  r.dtype = std::max_element(per_dtype.begin(), per_dtype.end(), [](const auto& a, const auto& b) {
              return a.second < b.second;
            })->first;
  r.threshold = update_resolution(r.dtype);
  const auto mid = ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2);
  std::nth_element(ratios.begin(), mid, ratios.end());
  r.median_ratio = *mid;
  // [Note: precision guard]: one low reading warns only when the previous one was low at an lr
  // no lower than this one; at lr 0 nothing is meant to move.
  const bool low = lr > 0 && r.median_ratio < r.threshold;
  const bool confirmed = low && last_low_lr_ && lr <= *last_low_lr_;
  last_low_lr_ = low ? std::optional<double>(lr) : std::nullopt;
  if (confirmed) {
    warned_ = true;
    sink_(precision_warning(r, step, lr));
  }
  return r;
}

std::shared_ptr<PrecisionGuard> make_precision_guard(WarningSink sink) {
  if (!sink) sink = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  return std::make_shared<PrecisionGuard>(std::move(sink));
}

std::string precision_warning(const GuardReading& r, int64_t step, double lr) {
  const bool low = r.dtype != DType::f32;
  return str("[precision] warning: updates are vanishing at step ", step,
             ": median |update| / |param| = ", sci(r.median_ratio), " over ", r.sampled,
             " sampled parameters is below the ", dtype_name(r.dtype), " resolution ",
             sci(r.threshold), " (half an ulp) at lr ", sci(lr),
             ", so most parameters do not move; ",
             low ? "raise the lr or use mixed precision with f32 master weights (--precision mixed)"
                 : "raise the lr");
}

}  // namespace zt::optim
