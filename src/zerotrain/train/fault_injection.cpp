// The run's fault injection; see fault_injection.h.
#include "zerotrain/train/fault_injection.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/train/owned_gradients.h"

namespace zt::train {

namespace {

int64_t parse_step(const std::string& text, const char* variable, const std::string& value) {
  char* end = nullptr;
  const long long step = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || step < 1)
    throw ValueError("train", str(variable, "=", quote_excerpt(value),
                                  ": expected a step >= 1 (STEP or STEP:PARAM[:inf])"));
  return step;
}

void inject_gradient_fault(const InjectedFaults& f, int64_t step, zero::ZeroStage& engine,
                           Stream stream) {
  if (f.grad_step != step) return;
  bool known = false;
  for (const auto& group : engine.groups())
    for (const nn::Parameter* p : group->params())
      known |= p->name == f.grad_param;
  if (!known)
    throw ValueError("train",
                     str("ZT_FAULT_NAN_GRAD: no parameter named ", quote_excerpt(f.grad_param)));
  const double value = f.grad_inf ? std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::quiet_NaN();
  for (const OwnedGradient& g : owned_gradients(engine))
    if (g.param->name == f.grad_param && g.values.numel() > 0) {
      g.values.slice(0, 0, 1).fill(value, stream);
      return;
    }
}

double inject_loss_fault(const InjectedFaults& f, int64_t step, double loss) {
  return f.loss_step == step ? std::numeric_limits<double>::quiet_NaN() : loss;
}

void inject_leak_fault(const InjectedFaults& f) {
  if (f.leak_bytes_per_step <= 0) return;
  // Reachable until exit (so a leak checker stays quiet), never used again: what a leak looks like
  // from outside. Written, so every page is resident.
  static std::vector<std::unique_ptr<char[]>> kept;
  const auto bytes = static_cast<size_t>(f.leak_bytes_per_step);
  kept.push_back(std::make_unique_for_overwrite<char[]>(bytes));
  std::memset(kept.back().get(), 0x5a, bytes);
}

}  // namespace

InjectedFaults injected_faults_from_env() {
  InjectedFaults f;
  if (const char* v = std::getenv("ZT_FAULT_NAN_GRAD"); v && *v) {
    const std::string value(v);
    const size_t colon = value.find(':');
    if (colon == std::string::npos)
      throw ValueError(
          "train", str("ZT_FAULT_NAN_GRAD=", quote_excerpt(value), ": expected STEP:PARAM[:inf]"));
    f.grad_step = parse_step(value.substr(0, colon), "ZT_FAULT_NAN_GRAD", value);
    f.grad_param = value.substr(colon + 1);
    if (f.grad_param.size() > 4 && f.grad_param.ends_with(":inf")) {
      f.grad_inf = true;
      f.grad_param.resize(f.grad_param.size() - 4);
    }
  }
  if (const char* v = std::getenv("ZT_FAULT_NAN_LOSS"); v && *v)
    f.loss_step = parse_step(v, "ZT_FAULT_NAN_LOSS", v);
  if (const char* v = std::getenv("ZT_FAULT_LEAK_BYTES"); v && *v) {
    char* end = nullptr;
    const long long bytes = std::strtoll(v, &end, 10);
    if (*end != '\0' || bytes < 1 || bytes > (int64_t{1} << 30))
      throw ValueError("train", str("ZT_FAULT_LEAK_BYTES=", quote_excerpt(v),
                                    ": expected bytes per step, 1 to 2^30"));
    f.leak_bytes_per_step = bytes;
  }
  return f;
}

FaultHooks::FaultHooks(InjectedFaults from_env, std::vector<int64_t> overflow_steps)
    : env_(std::move(from_env)), overflow_steps_(std::move(overflow_steps)) {}

bool FaultHooks::overflows_at(int64_t step) const {
  return std::find(overflow_steps_.begin(), overflow_steps_.end(), step) != overflow_steps_.end();
}

void FaultHooks::after_gradient_sync(int64_t step, zero::ZeroStage& engine, Stream stream) const {
  inject_gradient_fault(env_, step, engine, stream);
}

double FaultHooks::after_loss(int64_t step, double loss) const {
  const double seen = inject_loss_fault(env_, step, loss);
  inject_leak_fault(env_);
  return seen;
}

}  // namespace zt::train
