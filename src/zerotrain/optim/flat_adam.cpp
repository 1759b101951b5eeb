// The flat Adam; see flat_adam.h and [Note: optimizer masters] in state_slots.h.
#include "zerotrain/optim/flat_adam.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cast.h"
#include "zerotrain/optim/low_precision.h"

namespace zt::optim {

namespace {

constexpr std::string_view kComponent = "optimizer";

// A state tensor from a saved state: present, f32 (or `also`), shaped like the parameter.
const Tensor& expect_state_tensor(const std::map<std::string, Tensor>& tensors,
                                  const std::string& name, const FlatParam& p, DType also) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw ValueError(kComponent, str(name, ": missing from the state"));
  const Tensor& t = it->second;
  if (!t.defined()) throw ValueError(kComponent, str(name, ": undefined tensor"));
  if (t.dtype() != DType::f32 && t.dtype() != also)
    throw DTypeError(kComponent, str(name, ": expected ", dtype_name(DType::f32),
                                     also != DType::f32 ? str(" or ", dtype_name(also)) : "",
                                     ", got ", t.describe()));
  if (t.shape() != p.shape)
    throw ShapeError(kComponent,
                     str(name, ": expected ", to_string(p.shape), ", got ", t.describe()));
  return t;
}

// Copies elements [piece.begin, piece.end) of a full state tensor into `state` at piece.at, cast
// to its dtype when they differ (an f32 checkpoint into bf16 moments).
void copy_in(const Tensor& full, const FlatPiece& piece, const Tensor& state, Stream stream) {
  const Tensor src = full.flatten().slice(0, piece.begin, piece.end);
  Tensor dst = state.slice(0, piece.at, piece.at + (piece.end - piece.begin));
  if (src.dtype() == dst.dtype()) {
    dst.copy_from(src.to(dst.device(), stream), stream);
  } else {
    const Tensor on_device = src.contiguous(stream).to(dst.device(), stream);
    kernels::cast(on_device, dst, stream);
  }
}

template <typename T>
T* at_element(const Tensor& t, int64_t at) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data()) +
                              at * static_cast<int64_t>(t.element_size()));
}

}  // namespace

AdamParams adam_params(const AdamConfig& config, float lr) {
  AdamParams hp;
  hp.lr = lr;
  hp.beta1 = static_cast<float>(config.beta1);
  hp.beta2 = static_cast<float>(config.beta2);
  hp.eps = static_cast<float>(config.eps);
  hp.decoupled = config.decoupled_weight_decay;
  hp.bias_correction = config.bias_correction;
  hp.amsgrad = config.amsgrad;
  return hp;
}

Tensor* FlatAdam::RunState::of(SlotKind k) {
  switch (k) {
    case SlotKind::exp_avg:
      return &exp_avg;
    case SlotKind::exp_avg_sq:
      return &exp_avg_sq;
    case SlotKind::max_exp_avg_sq:
      return &max_exp_avg_sq;
    case SlotKind::master:
      return &master;
  }
  return nullptr;
}

const Tensor* FlatAdam::RunState::of(SlotKind k) const {
  return const_cast<RunState*>(this)->of(k);
}

FlatAdam::FlatAdam(std::vector<FlatParam> params, std::vector<FlatRun> runs, AdamConfig config,
                   Precision precision, std::shared_ptr<PrecisionGuard> guard,
                   const OptimizerState& initial, Stream stream)
    : params_(std::move(params)),
      runs_(std::move(runs)),
      config_(config),
      precision_(precision),
      guard_(std::move(guard)) {
  std::set<std::string> names;
  for (const FlatParam& p : params_)
    if (!names.insert(p.name).second)
      throw ValueError(kComponent, str(p.name, ": parameter listed twice"));
  for (size_t i = 0; i < runs_.size(); ++i) {
    const FlatRun& r = runs_[i];
    for (const FlatPiece& p : r.pieces)
      if (p.param >= params_.size())
        throw ValueError(kComponent, str("piece of parameter #", p.param, " of ", params_.size()));
    const std::string first = run_name(i);
    if (!r.value.defined() || r.value.dim() != 1 || !r.value.is_contiguous())
      throw ValueError(kComponent, str(first, ": a run's value must be flat and contiguous, got ",
                                       r.value.describe()));
    if (!is_floating(r.value.dtype()))
      throw DTypeError(
          kComponent, str(first, ": value is ", r.value.describe(), ", expected f32, f16 or bf16"));
    if (precision_ == Precision::low && r.value.dtype() == DType::f16)
      throw DTypeError(kComponent, str(first, ": value is ", r.value.describe(),
                                       ": low precision steps bf16 or f32 values"));
    if (steps_in_place_lowp(r.value.dtype(), precision_) && config_.amsgrad)
      throw ValueError(kComponent, str(first, ": amsgrad needs an f32 max_exp_avg_sq, which ",
                                       "low precision (bf16 moments, no masters) does not keep"));
    for (const FlatPiece& p : r.pieces) {
      const FlatParam& fp = params_[p.param];
      if (p.begin < 0 || p.end <= p.begin || p.end > numel_of(fp.shape) || p.at < 0 ||
          p.at + (p.end - p.begin) > r.value.numel())
        throw ValueError(kComponent,
                         str(fp.name, ": piece [", p.begin, ", ", p.end, ") at ", p.at,
                             " is outside the parameter or its run ", r.value.describe()));
    }
  }
  state_.resize(runs_.size());
  create_fresh(stream);
  if (initial.step != 0 || !initial.tensors.empty()) load_state(initial, stream);
}

std::string FlatAdam::run_name(size_t i) const {
  const FlatRun& r = runs_[i];
  return r.pieces.empty() ? str("run ", i) : params_[r.pieces.front().param].name;
}

void FlatAdam::create_fresh(Stream stream) {
  for (size_t i = 0; i < runs_.size(); ++i) {
    const Tensor& v = runs_[i].value;
    RunState& s = state_[i];
    s = RunState{};
    for (const StateSlot& slot : slots_of(runs_[i])) {
      if (slot.kind == SlotKind::master) {
        s.master = Tensor::empty({v.numel()}, DType::f32, v.device(), stream);
        kernels::cast(v, s.master, stream);
      } else {
        *s.of(slot.kind) = Tensor::zeros({v.numel()}, slot.dtype, v.device(), stream);
      }
    }
  }
  step_ = 0;
}

void FlatAdam::step(std::span<const Tensor> grads, float lr, float grad_scale, Stream stream) {
  if (grads.size() != runs_.size())
    throw ValueError(kComponent, str(grads.size(), " gradients for ", runs_.size(), " runs"));
  begin_step(lr, grad_scale);
  try {
    step_runs(0, runs_.size(), grads, stream);
  } catch (...) {
    cancel_step();  // step_runs checks every run before stepping any
    throw;
  }
  finish_step(stream);
}

void FlatAdam::cancel_step() {
  if (!open_) throw ValueError(kComponent, "cancel_step without begin_step");
  for (size_t i = 0; i < runs_.size(); ++i)
    if (open_->stepped[i])
      throw ValueError(kComponent, str(run_name(i), ": stepped already in step ", step_));
  open_.reset();
  --step_;
}

void FlatAdam::begin_step(float lr, float grad_scale) {
  if (open_) throw ValueError(kComponent, str("step ", step_, " was begun and not finished"));
  if (!std::isfinite(lr) || lr < 0)
    throw ValueError(kComponent, str("lr = ", lr, ": must be finite and >= 0"));
  if (!std::isfinite(grad_scale))
    throw ValueError(kComponent, str("grad_scale = ", grad_scale,
                                     ": not finite (skip the step when the gradient norm is not "
                                     "finite)"));
  open_ = OpenStep{lr, grad_scale, std::vector<bool>(runs_.size(), false)};
  ++step_;
}

void FlatAdam::finish_step(Stream stream) {
  if (!open_) throw ValueError(kComponent, "finish_step without begin_step");
  for (size_t i = 0; i < runs_.size(); ++i)
    if (!open_->stepped[i])
      throw ValueError(kComponent, str(run_name(i), ": not stepped in step ", step_));
  const float lr = open_->lr;
  open_.reset();
  check_updates(lr, stream);
}

void FlatAdam::step_runs(size_t first, size_t last, std::span<const Tensor> grads, Stream stream) {
  if (!open_) throw ValueError(kComponent, "step_runs outside begin_step / finish_step");
  check_resident("step_runs");
  if (first > last || last > runs_.size() || grads.size() != last - first)
    throw ValueError(kComponent, str(grads.size(), " gradients for runs [", first, ", ", last,
                                     ") of ", runs_.size()));
  for (size_t i = first; i < last; ++i) {
    const FlatRun& r = runs_[i];
    const Tensor& g = grads[i - first];
    if (open_->stepped[i])
      throw ValueError(kComponent, str(run_name(i), ": stepped twice in step ", step_));
    if (!g.defined()) throw ValueError(kComponent, str(run_name(i), ": gradient is undefined"));
    if (g.numel() != r.value.numel())
      throw ShapeError(kComponent, str(run_name(i), ": gradient ", g.describe(), " for value ",
                                       r.value.describe()));
    if (!g.is_contiguous() || g.device() != r.value.device())
      throw ValueError(kComponent,
                       str(run_name(i), ": value ", r.value.describe(), " and gradient ",
                           g.describe(), " must be contiguous on one device"));
  }
  // One multi-tensor step per device over every piece (see optim/optimizers.h): one OpenMP
  // region on the host or fused launches on the GPU.
  const AdamParams hp = adam_params(config_, open_->lr);
  const StepArgs args{step_, open_->grad_scale};
  struct DeviceRuns {
    Device device;
    std::vector<AdamShard> mixed;    // f32 masters (or f32 values)
    std::vector<AdamShardLowp> low;  // bf16 values stepped in place
  };
  std::vector<DeviceRuns> by_device;
  for (size_t i = first; i < last; ++i) {
    const FlatRun& r = runs_[i];
    const RunState& s = state_[i];
    const Tensor& g = grads[i - first];
    auto it = std::find_if(by_device.begin(), by_device.end(),
                           [&](const DeviceRuns& d) { return d.device == r.value.device(); });
    if (it == by_device.end()) it = by_device.insert(by_device.end(), {r.value.device(), {}, {}});
    const bool low = steps_in_place_lowp(r.value.dtype(), precision_);
    const Tensor& master = s.master.defined() ? s.master : r.value;
    for (const FlatPiece& piece : r.pieces) {
      const int64_t at = piece.at, n = piece.end - piece.begin;
      const float wd = weight_decay_of(piece);
      if (low) {
        AdamShardLowp shard;
        shard.param = at_element<bf16>(r.value, at);
        shard.exp_avg = at_element<bf16>(s.exp_avg, at);
        shard.exp_avg_sq = at_element<bf16>(s.exp_avg_sq, at);
        shard.grad = at_element<const char>(g, at);
        shard.grad_dtype = g.dtype();
        shard.n = n;
        shard.weight_decay = wd;
        it->low.push_back(shard);
        continue;
      }
      AdamShard shard;
      shard.master = at_element<float>(master, at);
      shard.exp_avg = at_element<float>(s.exp_avg, at);
      shard.exp_avg_sq = at_element<float>(s.exp_avg_sq, at);
      shard.max_exp_avg_sq =
          s.max_exp_avg_sq.defined() ? at_element<float>(s.max_exp_avg_sq, at) : nullptr;
      shard.grad = at_element<const char>(g, at);
      shard.grad_dtype = g.dtype();
      shard.param_copy = s.master.defined() ? at_element<char>(r.value, at) : nullptr;
      shard.param_dtype = r.value.dtype();
      shard.n = n;
      shard.weight_decay = wd;
      it->mixed.push_back(shard);
    }
  }
  for (const DeviceRuns& d : by_device) {
    if (!d.mixed.empty()) adam_step(d.mixed, hp, args, d.device, stream);
    if (!d.low.empty()) adam_step_lowp(d.low, hp, args, d.device, stream);
  }
  for (size_t i = first; i < last; ++i)
    open_->stepped[i] = true;
}

void FlatAdam::check_updates(float lr, Stream stream) {
  if (!guard_ || !guard_->due(step_)) return;
  check_resident("the precision guard");
  std::vector<GuardTensors> tensors;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const RunState& s = state_[i];
    const Tensor& master = s.master.defined() ? s.master : runs_[i].value;
    const Tensor& v = s.max_exp_avg_sq.defined() ? s.max_exp_avg_sq : s.exp_avg_sq;
    for (const FlatPiece& piece : runs_[i].pieces) {
      const int64_t a = piece.at, b = piece.at + (piece.end - piece.begin);
      tensors.push_back({master.slice(0, a, b), s.exp_avg.slice(0, a, b), v.slice(0, a, b),
                         weight_decay_of(piece)});
    }
  }
  guard_->check(step_, adam_params(config_, lr), tensors, stream);
}

void FlatAdam::set_betas(double beta1, double beta2) {
  for (const double b : {beta1, beta2})
    if (!(b >= 0.0 && b < 1.0))
      throw ValueError(kComponent, str("betas (", beta1, ", ", beta2, "): each must be in [0, 1)"));
  config_.beta1 = beta1;
  config_.beta2 = beta2;
}

void FlatAdam::load_state(const OptimizerState& state, Stream stream) {
  check_resident("load_state");
  if (state.step < 0) throw ValueError(kComponent, str("step = ", state.step, ": must be >= 0"));
  if (state.step == 0 && state.tensors.empty()) {
    create_fresh(stream);
    return;
  }
  // Check everything before touching anything, so a bad state leaves the optimizer as it was.
  std::set<std::string> expected;
  for (const FlatParam& p : params_)
    for (const StateSlot& slot : state_slots(p.value_dtype, precision_, config_.amsgrad)) {
      expect_state_tensor(state.tensors, p.name + slot.suffix, p, slot.dtype);
      expected.insert(p.name + slot.suffix);
    }
  for (const auto& [name, tensor] : state.tensors)
    if (!expected.contains(name))
      throw ValueError(kComponent, str(name, ": not a state tensor of this optimizer"));
  for (size_t i = 0; i < runs_.size(); ++i) {
    const FlatRun& r = runs_[i];
    RunState& s = state_[i];
    for (const StateSlot& slot : slots_of(r))
      for (const FlatPiece& piece : r.pieces)
        copy_in(state.tensors.at(params_[piece.param].name + slot.suffix), piece, *s.of(slot.kind),
                stream);
    if (s.master.defined())
      for (const FlatPiece& piece : r.pieces) {
        const int64_t a = piece.at, b = piece.at + (piece.end - piece.begin);
        Tensor value = r.value.slice(0, a, b);
        kernels::cast(s.master.slice(0, a, b), value, stream);
      }
  }
  step_ = state.step;
}

std::vector<FlatAdam::SlotTensor> FlatAdam::run_state(size_t i) const {
  check_resident("run_state");
  std::vector<SlotTensor> out;
  for (const StateSlot& slot : slots_of(runs_.at(i)))
    out.push_back({slot, *state_[i].of(slot.kind)});
  return out;
}

OptimizerState FlatAdam::full_state() const {
  OptimizerState st;
  st.step = step_;
  // Each parameter must be one whole piece of one run.
  std::vector<int> pieces(params_.size(), 0);
  std::vector<bool> whole(params_.size(), true);
  for (const FlatRun& r : runs_)
    for (const FlatPiece& piece : r.pieces) {
      ++pieces[piece.param];
      whole[piece.param] = whole[piece.param] && piece.begin == 0 &&
                           piece.end == numel_of(params_[piece.param].shape);
    }
  for (size_t p = 0; p < params_.size(); ++p)
    if (pieces[p] != 1 || !whole[p])
      throw ValueError(kComponent, str(params_[p].name, ": not whole in exactly one run (a ",
                                       "sharded engine gathers its full state)"));
  if (step_ == 0) return st;
  for (size_t i = 0; i < runs_.size(); ++i)
    for (const SlotTensor& t : run_state(i))
      for (const FlatPiece& piece : runs_[i].pieces) {
        const FlatParam& p = params_[piece.param];
        st.tensors.emplace(p.name + t.slot.suffix,
                           t.tensor.slice(0, piece.at, piece.at + numel_of(p.shape)).view(p.shape));
      }
  return st;
}

std::vector<FlatAdam::PieceTensor> FlatAdam::piece_tensors() const {
  check_resident("piece_tensors");
  std::vector<PieceTensor> out;
  for (size_t i = 0; i < runs_.size(); ++i)
    for (const FlatPiece& piece : runs_[i].pieces) {
      const FlatParam& p = params_[piece.param];
      const int64_t a = piece.at, b = piece.at + (piece.end - piece.begin);
      out.push_back({p.name, p.shape, piece.begin, piece.end, runs_[i].value.slice(0, a, b)});
      for (const SlotTensor& t : run_state(i))
        out.push_back(
            {p.name + t.slot.suffix, p.shape, piece.begin, piece.end, t.tensor.slice(0, a, b)});
    }
  return out;
}

void FlatAdam::set_step_count(int64_t step) {
  if (step < 0) throw ValueError(kComponent, str("step = ", step, ": must be >= 0"));
  step_ = step;
}

void FlatAdam::check_resident(const char* what) const {
  if (evicted_)
    throw ValueError(kComponent, str(what, ": the state is evicted (restore_state first)"));
}

std::vector<Tensor> FlatAdam::evict_state() {
  check_resident("evict_state");
  std::vector<Tensor> out;
  for (size_t i = 0; i < runs_.size(); ++i)
    for (const StateSlot& slot : slots_of(runs_[i])) {
      out.push_back(std::move(*state_[i].of(slot.kind)));
      *state_[i].of(slot.kind) = Tensor();
    }
  evicted_ = true;
  return out;
}

void FlatAdam::restore_state(std::vector<Tensor> tensors) {
  if (!evicted_) throw ValueError(kComponent, "restore_state: the state is not evicted");
  size_t k = 0;
  for (size_t i = 0; i < runs_.size(); ++i)
    for (const StateSlot& slot : slots_of(runs_[i])) {
      const Tensor* t = k < tensors.size() ? &tensors[k] : nullptr;
      if (!t || !t->defined() || t->dtype() != slot.dtype || t->numel() != runs_[i].value.numel() ||
          t->dim() != 1 || !t->is_contiguous())
        throw ValueError(kComponent, str(run_name(i), slot.suffix, ": restore_state needs [",
                                         runs_[i].value.numel(), "] ", dtype_name(slot.dtype),
                                         ", got ", t ? t->describe() : "nothing"));
      ++k;
    }
  if (k != tensors.size())
    throw ValueError(kComponent, str("restore_state: ", tensors.size(), " tensors for ", k,
                                     " state slots"));
  k = 0;
  for (size_t i = 0; i < runs_.size(); ++i)
    for (const StateSlot& slot : slots_of(runs_[i]))
      *state_[i].of(slot.kind) = std::move(tensors[k++]);
  evicted_ = false;
}

int64_t FlatAdam::bytes() const {
  int64_t b = 0;
  for (const RunState& s : state_)
    for (const Tensor* t : {&s.master, &s.exp_avg, &s.exp_avg_sq, &s.max_exp_avg_sq})
      if (t->defined()) b += static_cast<int64_t>(t->nbytes());
  return b;
}

}  // namespace zt::optim
