// AdamW with parameter groups and f32 masters; see optimizer.h and [Note: optimizer masters].
// Tested by tests/train/test_optimizer.cpp.
#include "zerotrain/train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "zerotrain/kernels/cast.h"
#include "zerotrain/optim/low_precision.h"
#include "zerotrain/optim/optimizers.h"
#include "zerotrain/train/precision_guard.h"

namespace zt::train {

namespace {

constexpr std::string_view kComponent = "optimizer";

constexpr char kExpAvg[] = ".exp_avg";
constexpr char kExpAvgSq[] = ".exp_avg_sq";
constexpr char kMaxExpAvgSq[] = ".max_exp_avg_sq";
constexpr char kMaster[] = ".master";

// A state tensor from a checkpoint: present, f32 (or `also`), shaped like the parameter.
const Tensor& expect_state_tensor(const std::map<std::string, Tensor>& tensors,
                                  const std::string& name, const nn::Parameter& p,
                                  DType also = DType::f32) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw ValueError(kComponent, str(name, ": missing from the state"));
  const Tensor& t = it->second;
  if (!t.defined()) throw ValueError(kComponent, str(name, ": undefined tensor"));
  if (t.dtype() != DType::f32 && t.dtype() != also)
    throw DTypeError(kComponent, str(name, ": expected ", dtype_name(DType::f32),
                                     also != DType::f32 ? str(" or ", dtype_name(also)) : "",
                                     ", got ", t.describe()));
  if (t.shape() != p.value.shape())
    throw ShapeError(kComponent,
                     str(name, ": expected ", to_string(p.value.shape()), ", got ", t.describe()));
  return t;
}

// A copy of `src` in new memory on `device`, cast to `dtype`.
Tensor copy_to_device(const Tensor& src, Device device, DType dtype, Stream stream) {
  Tensor dst = Tensor::empty(src.shape(), dtype, device, stream);
  if (src.dtype() == dtype) {
    dst.copy_from(src, stream);
  } else {
    const Tensor on_device = src.to(device, stream);
    kernels::cast(on_device, dst, stream);
  }
  return dst;
}

}  // namespace

DecayRule decay_kinds(std::vector<nn::ParamKind> kinds) {
  return [kinds = std::move(kinds)](const nn::Parameter& p) {
    return std::find(kinds.begin(), kinds.end(), p.kind) != kinds.end();
  };
}

optim::AdamParams adam_params(const AdamWOptions& options, float lr) {
  optim::AdamParams hp;
  hp.lr = lr;
  hp.beta1 = options.beta1;
  hp.beta2 = options.beta2;
  hp.eps = options.eps;
  hp.decoupled = options.decoupled;
  hp.bias_correction = options.bias_correction;
  hp.amsgrad = options.amsgrad;
  return hp;
}

AdamW::AdamW(std::vector<nn::Parameter*> params, AdamWOptions options)
    : options_(std::move(options)) {
  if (!options_.decays) throw ValueError(kComponent, "decays: the DecayRule is empty");
  groups_ = {{"decay", options_.weight_decay, {}}, {"no_decay", 0.0f, {}}};
  std::set<std::string> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    nn::Parameter* p = params[i];
    if (!p) throw ValueError(kComponent, str("parameter #", i, " is null"));
    if (!seen.insert(p->name).second)
      throw ValueError(kComponent, str(p->name, ": parameter listed twice"));
    if (p->value.defined() != params.front()->value.defined())
      throw ValueError(kComponent,
                       str(p->name, ": value is ", p->value.defined() ? "defined" : "undefined",
                           " but ", params.front()->name, "'s is not (all or none)"));
    if (p->value.defined() && !is_floating(p->value.dtype()))
      throw DTypeError(kComponent, str(p->name, ": value is ", p->value.describe(),
                                       ", expected f32, f16 or bf16"));
    if (options_.precision == optim::Precision::low && p->value.dtype() == DType::f16)
      throw DTypeError(kComponent, str(p->name, ": value is ", p->value.describe(),
                                       ": low precision steps bf16 or f32 values"));
    if (options_.precision == optim::Precision::low && options_.amsgrad && p->value.dtype() == DType::bf16)
      throw ValueError(kComponent, str(p->name, ": amsgrad needs an f32 max_exp_avg_sq, which ",
                                       "low precision (bf16 moments, no masters) does not keep"));
    Slot s;
    s.param = p;
    s.decay = options_.decays(*p);
    groups_[s.decay ? 0 : 1].params.push_back(p->name);
    slots_.push_back(std::move(s));
  }
}

bool AdamW::needs_master(const Slot& s) const {
  return s.param->value.dtype() != DType::f32 && !low_precision(s);
}

bool AdamW::low_precision(const Slot& s) const {
  return options_.precision == optim::Precision::low && s.param->value.dtype() == DType::bf16;
}

std::vector<AdamW::StateTensor> AdamW::state_tensors(const Slot& s) const {
  std::vector<StateTensor> out = {{kExpAvg, &Slot::exp_avg, state_dtype(s)},
                                  {kExpAvgSq, &Slot::exp_avg_sq, state_dtype(s)}};
  if (options_.amsgrad) out.push_back({kMaxExpAvgSq, &Slot::max_exp_avg_sq, DType::f32});
  if (needs_master(s)) out.push_back({kMaster, &Slot::master, DType::f32});
  return out;
}

void AdamW::create_state(Stream stream) {
  for (Slot& s : slots_) {
    const Tensor& value = s.param->value;
    s.exp_avg = Tensor::zeros(value.shape(), state_dtype(s), value.device(), stream);
    s.exp_avg_sq = Tensor::zeros(value.shape(), state_dtype(s), value.device(), stream);
    if (options_.amsgrad)
      s.max_exp_avg_sq = Tensor::zeros(value.shape(), DType::f32, value.device(), stream);
    if (needs_master(s)) {
      s.master = Tensor::empty(value.shape(), DType::f32, value.device(), stream);
      kernels::cast(value, s.master, stream);
    }
  }
  phase_ = Phase::ready;
}

void AdamW::step(float lr, float grad_scale, Stream stream) {
  if (!std::isfinite(lr) || lr < 0)
    throw ValueError(kComponent, str("lr = ", lr, ": must be finite and >= 0"));
  if (!std::isfinite(grad_scale))
    throw ValueError(kComponent, str("grad_scale = ", grad_scale,
                                     ": not finite (skip the step when the gradient norm is not "
                                     "finite)"));
  for (const Slot& s : slots_) {
    const nn::Parameter& p = *s.param;
    if (!p.value.defined()) throw ValueError(kComponent, str(p.name, ": value is undefined"));
    if (!p.grad.defined()) throw ValueError(kComponent, str(p.name, ": gradient is undefined"));
    if (p.grad.shape() != p.value.shape())
      throw ShapeError(kComponent, str(p.name, ": gradient ", p.grad.describe(), " for value ",
                                       p.value.describe()));
    if (!p.value.is_contiguous() || !p.grad.is_contiguous() || p.grad.device() != p.value.device())
      throw ValueError(kComponent, str(p.name, ": value ", p.value.describe(), " and gradient ",
                                       p.grad.describe(), " must be contiguous on one device"));
  }
  if (phase_ == Phase::fresh) create_state(stream);
  ++step_;
  // One multi-tensor step over every slot (see optim/optimizers.h): on each device, one OpenMP
  // region on the host or fused launches on the GPU.
  const optim::AdamParams hp = adam_params(options_, lr);
  const optim::StepArgs args{step_, grad_scale};
  // Runs per device: f32 masters (or f32 values), and bf16 values stepped in place.
  struct DeviceRuns {
    Device device;
    std::vector<optim::AdamShard> mixed;
    std::vector<optim::AdamShardLowp> low;
  };
  std::vector<DeviceRuns> by_device;
  for (Slot& s : slots_) {
    nn::Parameter& p = *s.param;
    auto it = std::find_if(by_device.begin(), by_device.end(),
                           [&](const DeviceRuns& d) { return d.device == p.value.device(); });
    if (it == by_device.end()) it = by_device.insert(by_device.end(), {p.value.device(), {}, {}});
    const float wd = s.decay ? options_.weight_decay : 0.0f;
    if (low_precision(s)) {
      optim::AdamShardLowp shard;
      shard.param = static_cast<bf16*>(p.value.data());
      shard.exp_avg = static_cast<bf16*>(s.exp_avg.data());
      shard.exp_avg_sq = static_cast<bf16*>(s.exp_avg_sq.data());
      shard.grad = p.grad.data();
      shard.grad_dtype = p.grad.dtype();
      shard.n = p.value.numel();
      shard.weight_decay = wd;
      it->low.push_back(shard);
      continue;
    }
    optim::AdamShard shard;
    shard.master = static_cast<float*>(s.master.defined() ? s.master.data() : p.value.data());
    shard.exp_avg = static_cast<float*>(s.exp_avg.data());
    shard.exp_avg_sq = static_cast<float*>(s.exp_avg_sq.data());
    shard.max_exp_avg_sq =
        s.max_exp_avg_sq.defined() ? static_cast<float*>(s.max_exp_avg_sq.data()) : nullptr;
    shard.grad = p.grad.data();
    shard.grad_dtype = p.grad.dtype();
    shard.param_copy = s.master.defined() ? p.value.data() : nullptr;
    shard.param_dtype = p.value.dtype();
    shard.n = p.value.numel();
    shard.weight_decay = wd;
    it->mixed.push_back(shard);
  }
  for (const DeviceRuns& d : by_device) {
    if (!d.mixed.empty()) optim::adam_step(d.mixed, hp, args, d.device, stream);
    if (!d.low.empty()) optim::adam_step_lowp(d.low, hp, args, d.device, stream);
  }
  check_updates(lr, stream);
}

void AdamW::check_updates(float lr, Stream stream) {
  if (!options_.guard || !options_.guard->due(step_)) return;
  std::vector<GuardTensors> tensors;
  for (const Slot& s : slots_)
    tensors.push_back({s.master.defined() ? s.master : s.param->value, s.exp_avg,
                       options_.amsgrad ? s.max_exp_avg_sq : s.exp_avg_sq,
                       s.decay ? options_.weight_decay : 0.0f});
  options_.guard->check(step_, adam_params(options_, lr), tensors, stream);
}

void AdamW::set_betas(float beta1, float beta2) {
  for (const float b : {beta1, beta2})
    if (!(b >= 0.0f && b < 1.0f))
      throw ValueError(kComponent, str("betas (", beta1, ", ", beta2, "): each must be in [0, 1)"));
  options_.beta1 = beta1;
  options_.beta2 = beta2;
}

void AdamW::zero_grad(Stream stream) {
  for (Slot& s : slots_)
    if (s.param->grad.defined()) s.param->grad.fill(0.0, stream);
}

OptimizerState AdamW::state() const {
  OptimizerState st;
  st.step = step_;
  if (phase_ == Phase::fresh) return st;
  // The tensors each slot holds, not state_tensors(s): that asks the value's dtype, and a ZeRO-3
  // engine has taken the values over (left them undefined) by the time it asks for the state.
  for (const Slot& s : slots_)
    for (const auto& [suffix, t] : {std::pair<const char*, const Tensor*>{kExpAvg, &s.exp_avg},
                                    {kExpAvgSq, &s.exp_avg_sq},
                                    {kMaxExpAvgSq, &s.max_exp_avg_sq},
                                    {kMaster, &s.master}})
      if (t->defined()) st.tensors.emplace(s.param->name + suffix, *t);
  return st;
}

void AdamW::load_state(const OptimizerState& state, Stream stream) {
  if (state.step < 0) throw ValueError(kComponent, str("step = ", state.step, ": must be >= 0"));
  if (state.step == 0 && state.tensors.empty()) {
    for (Slot& s : slots_)
      s.master = s.exp_avg = s.exp_avg_sq = s.max_exp_avg_sq = Tensor();
    phase_ = Phase::fresh;
    step_ = 0;
    return;
  }
  // Check everything before touching anything, so a bad state leaves the optimizer as it was.
  size_t expected = 0;
  for (const Slot& s : slots_) {
    if (!s.param->value.defined())
      throw ValueError(kComponent, str(s.param->name, ": value is undefined"));
    for (const StateTensor& t : state_tensors(s)) {
      expect_state_tensor(state.tensors, s.param->name + t.suffix, *s.param, t.dtype);
      ++expected;
    }
  }
  if (state.tensors.size() != expected) {
    for (const auto& [name, tensor] : state.tensors) {
      const bool known = std::any_of(slots_.begin(), slots_.end(), [&](const Slot& s) {
        const std::vector<StateTensor> ts = state_tensors(s);
        return std::any_of(ts.begin(), ts.end(),
                           [&](const StateTensor& t) { return name == s.param->name + t.suffix; });
      });
      if (!known) throw ValueError(kComponent, str(name, ": not a state tensor of this optimizer"));
    }
  }
  for (Slot& s : slots_) {
    const Device device = s.param->value.device();
    s.master = s.max_exp_avg_sq = Tensor();
    for (const StateTensor& t : state_tensors(s))
      s.*t.member =
          copy_to_device(state.tensors.at(s.param->name + t.suffix), device, t.dtype, stream);
    if (s.master.defined()) kernels::cast(s.master, s.param->value, stream);
  }
  step_ = state.step;
  phase_ = Phase::ready;
}

}  // namespace zt::train
