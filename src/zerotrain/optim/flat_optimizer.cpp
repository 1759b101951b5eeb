// The flat optimizer; see flat_optimizer.h, [Note: Lamb across shards] there and [Note: optimizer
// masters] in state_slots.h.
#include "zerotrain/optim/flat_optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

AdamParams adam_params(const OptimizerConfig& config, float lr) {
  AdamParams hp;
  hp.lr = lr;
  hp.beta1 = static_cast<float>(config.beta1);
  hp.beta2 = static_cast<float>(config.beta2);
  hp.eps = static_cast<float>(config.eps);
  hp.decoupled = config.adam_w_mode;
  hp.bias_correction = config.bias_correction;
  hp.amsgrad = config.amsgrad;
  return hp;
}

LambParams lamb_params(const OptimizerConfig& config, float lr) {
  LambParams hp;
  hp.lr = lr;
  hp.beta1 = static_cast<float>(config.beta1);
  hp.beta2 = static_cast<float>(config.beta2);
  hp.eps = static_cast<float>(config.eps);
  hp.bias_correction = config.bias_correction;
  hp.eps_inside_sqrt = config.eps_inside_sqrt;
  hp.max_coeff = static_cast<float>(config.max_coeff);
  hp.min_coeff = static_cast<float>(config.min_coeff);
  return hp;
}

LionParams lion_params(const OptimizerConfig& config, float lr) {
  LionParams hp;
  hp.lr = lr;
  hp.beta1 = static_cast<float>(config.beta1);
  hp.beta2 = static_cast<float>(config.beta2);
  return hp;
}

SgdParams sgd_params(const OptimizerConfig& config, float lr) {
  SgdParams hp;
  hp.lr = lr;
  hp.momentum = static_cast<float>(config.momentum);
  hp.dampening = static_cast<float>(config.dampening);
  hp.nesterov = config.nesterov;
  return hp;
}

Tensor* FlatOptimizer::RunState::of(SlotKind k) {
  switch (k) {
    case SlotKind::exp_avg:
      return &exp_avg;
    case SlotKind::exp_avg_sq:
      return &exp_avg_sq;
    case SlotKind::max_exp_avg_sq:
      return &max_exp_avg_sq;
    case SlotKind::momentum_buffer:
      return &momentum_buffer;
    case SlotKind::master:
      return &master;
  }
  return nullptr;
}

const Tensor* FlatOptimizer::RunState::of(SlotKind k) const {
  return const_cast<RunState*>(this)->of(k);
}

FlatOptimizer::FlatOptimizer(std::vector<FlatParam> params, std::vector<FlatRun> runs,
                             OptimizerConfig config, Precision precision,
                             std::shared_ptr<PrecisionGuard> guard, const OptimizerState& initial,
                             Stream stream)
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
    if (steps_in_place_lowp(r.value.dtype(), precision_) && config_.amsgrad &&
        config_.kind == OptimizerKind::adam)
      throw ValueError(kComponent, str(first, ": amsgrad needs an f32 max_exp_avg_sq, which ",
                                       "low precision (bf16 moments, no masters) does not keep"));
    if (steps_in_place_lowp(r.value.dtype(), precision_) && config_.kind != OptimizerKind::adam)
      throw ValueError(kComponent, str(first, ": ", optimizer_kind_name(config_.kind),
                                       " steps f32 masters; low precision (bf16 values stepped "
                                       "in place) is Adam's alone"));
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

std::string FlatOptimizer::run_name(size_t i) const {
  const FlatRun& r = runs_[i];
  return r.pieces.empty() ? str("run ", i) : params_[r.pieces.front().param].name;
}

void FlatOptimizer::create_fresh(Stream stream) {
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

void FlatOptimizer::step(std::span<const Tensor> grads, float lr, float grad_scale, Stream stream) {
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

void FlatOptimizer::cancel_step() {
  if (!open_) throw ValueError(kComponent, "cancel_step without begin_step");
  for (size_t i = 0; i < runs_.size(); ++i)
    if (open_->stepped[i])
      throw ValueError(kComponent, str(run_name(i), ": stepped already in step ", step_));
  open_.reset();
  --step_;
}

void FlatOptimizer::begin_step(float lr, float grad_scale) {
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

void FlatOptimizer::finish_step(Stream stream) {
  if (!open_) throw ValueError(kComponent, "finish_step without begin_step");
  for (size_t i = 0; i < runs_.size(); ++i)
    if (!open_->stepped[i])
      throw ValueError(kComponent, str(run_name(i), ": not stepped in step ", step_));
  const float lr = open_->lr;
  open_.reset();
  check_updates(lr, stream);
}

void FlatOptimizer::step_runs(size_t first, size_t last, std::span<const Tensor> grads,
                              Stream stream) {
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
  if (config_.kind == OptimizerKind::lamb) {
    if (first != 0 || last != runs_.size())
      throw ValueError(kComponent, str("Lamb steps every run at once (its trust ratio needs each ",
                                       "parameter's whole norm), got runs [", first, ", ", last,
                                       ") of ", runs_.size()));
    update_lamb(grads, stream);
  } else {
    update_elementwise(first, last, grads, stream);
  }
  for (size_t i = first; i < last; ++i)
    open_->stepped[i] = true;
}

namespace {

// The buffers of one piece of a run, at element `at` of the run for `n` elements.
struct PieceBuffers {
  float* master;
  void* param_copy;  // null when the value is its own master
  DType param_dtype;
  const void* grad;
  DType grad_dtype;
};

template <class Segment>
Segment segment_of(const PieceBuffers& b, int64_t n, float weight_decay) {
  Segment s;
  s.master = b.master;
  s.grad = b.grad;
  s.grad_dtype = b.grad_dtype;
  s.param_copy = b.param_copy;
  s.param_dtype = b.param_dtype;
  s.n = n;
  s.weight_decay = weight_decay;
  return s;
}

}  // namespace

void FlatOptimizer::update_elementwise(size_t first, size_t last, std::span<const Tensor> grads,
                                       Stream stream) {
  // One multi-tensor step per device over every piece (see optim/optimizers.h): one OpenMP
  // region on the host or fused launches on the GPU.
  const StepArgs args{step_, open_->grad_scale};
  struct DeviceRuns {
    Device device;
    std::vector<AdamSegment> mixed;    // f32 masters (or f32 values): Adam
    std::vector<AdamSegmentLowp> low;  // bf16 values stepped in place: Adam
    std::vector<LionSegment> lion;
    std::vector<SgdSegment> sgd;
  };
  std::vector<DeviceRuns> by_device;
  for (size_t i = first; i < last; ++i) {
    const FlatRun& r = runs_[i];
    const RunState& s = state_[i];
    const Tensor& g = grads[i - first];
    auto it = std::find_if(by_device.begin(), by_device.end(),
                           [&](const DeviceRuns& d) { return d.device == r.value.device(); });
    if (it == by_device.end()) {
      DeviceRuns fresh;
      fresh.device = r.value.device();
      it = by_device.insert(by_device.end(), std::move(fresh));
    }
    const bool low = steps_in_place_lowp(r.value.dtype(), precision_);
    const Tensor& master = s.master.defined() ? s.master : r.value;
    for (const FlatPiece& piece : r.pieces) {
      const int64_t at = piece.at, n = piece.end - piece.begin;
      const float wd = weight_decay_of(piece);
      if (low) {
        AdamSegmentLowp seg;
        seg.param = at_element<bf16>(r.value, at);
        seg.exp_avg = at_element<bf16>(s.exp_avg, at);
        seg.exp_avg_sq = at_element<bf16>(s.exp_avg_sq, at);
        seg.grad = at_element<const char>(g, at);
        seg.grad_dtype = g.dtype();
        seg.n = n;
        seg.weight_decay = wd;
        it->low.push_back(seg);
        continue;
      }
      const PieceBuffers b{at_element<float>(master, at),
                           s.master.defined() ? at_element<char>(r.value, at) : nullptr,
                           r.value.dtype(), at_element<const char>(g, at), g.dtype()};
      switch (config_.kind) {
        case OptimizerKind::adam: {
          AdamSegment seg = segment_of<AdamSegment>(b, n, wd);
          seg.exp_avg = at_element<float>(s.exp_avg, at);
          seg.exp_avg_sq = at_element<float>(s.exp_avg_sq, at);
          seg.max_exp_avg_sq =
              s.max_exp_avg_sq.defined() ? at_element<float>(s.max_exp_avg_sq, at) : nullptr;
          it->mixed.push_back(seg);
          break;
        }
        case OptimizerKind::lion: {
          LionSegment seg = segment_of<LionSegment>(b, n, wd);
          seg.exp_avg = at_element<float>(s.exp_avg, at);
          it->lion.push_back(seg);
          break;
        }
        case OptimizerKind::sgd: {
          SgdSegment seg = segment_of<SgdSegment>(b, n, wd);
          seg.momentum_buffer =
              s.momentum_buffer.defined() ? at_element<float>(s.momentum_buffer, at) : nullptr;
          it->sgd.push_back(seg);
          break;
        }
        case OptimizerKind::lamb:
          break;  // update_lamb
      }
    }
  }
  const float lr = open_->lr;
  for (const DeviceRuns& d : by_device) {
    if (!d.mixed.empty()) adam_step(d.mixed, adam_params(config_, lr), args, d.device, stream);
    if (!d.low.empty()) adam_step_lowp(d.low, adam_params(config_, lr), args, d.device, stream);
    if (!d.lion.empty()) lion_step(d.lion, lion_params(config_, lr), args, d.device, stream);
    if (!d.sgd.empty()) sgd_step(d.sgd, sgd_params(config_, lr), args, d.device, stream);
  }
}

int64_t FlatOptimizer::norm_slots(size_t param) const {
  return (numel_of(params_.at(param).shape) + kLambNormChunk - 1) / kLambNormChunk + 1;
}

void FlatOptimizer::update_lamb(std::span<const Tensor> grads, Stream stream) {
  // The segments of every piece (see [Note: Lamb across shards]), each a run of its own, grouped
  // by device, with the norm slot each fills.
  std::vector<int64_t> base(params_.size() + 1, 0);  // first slot of each parameter
  for (size_t p = 0; p < params_.size(); ++p)
    base[p + 1] = base[p] + norm_slots(p);
  struct DeviceSegments {
    Device device;
    std::vector<LambSegment> segments;
    std::vector<int64_t> slot;   // per segment: its norm slot
    std::vector<size_t> param;   // per segment: its parameter
  };
  std::vector<DeviceSegments> by_device;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const FlatRun& r = runs_[i];
    const RunState& s = state_[i];
    const Tensor& g = grads[i];
    auto it = std::find_if(by_device.begin(), by_device.end(),
                           [&](const DeviceSegments& d) { return d.device == r.value.device(); });
    if (it == by_device.end()) {
      DeviceSegments fresh;
      fresh.device = r.value.device();
      it = by_device.insert(by_device.end(), std::move(fresh));
    }
    const Tensor& master = s.master.defined() ? s.master : r.value;
    for (const FlatPiece& piece : r.pieces) {
      // Run position pos holds parameter element pos - shift; slot k covers the parameter's
      // elements whose run positions lie in [(k + lag) C, (k + lag + 1) C).
      const int64_t shift = piece.at - piece.begin;
      const int64_t lag = shift >= 0 ? shift / kLambNormChunk
                                     : -((-shift + kLambNormChunk - 1) / kLambNormChunk);
      const int64_t end = piece.at + (piece.end - piece.begin);
      for (int64_t pos = piece.at; pos < end;) {
        const int64_t chunk = pos / kLambNormChunk;
        const int64_t stop = std::min(end, (chunk + 1) * kLambNormChunk);
        const PieceBuffers b{at_element<float>(master, pos),
                             s.master.defined() ? at_element<char>(r.value, pos) : nullptr,
                             r.value.dtype(), at_element<const char>(g, pos), g.dtype()};
        LambSegment seg = segment_of<LambSegment>(b, stop - pos, weight_decay_of(piece));
        seg.exp_avg = at_element<float>(s.exp_avg, pos);
        seg.exp_avg_sq = at_element<float>(s.exp_avg_sq, pos);
        it->segments.push_back(seg);
        it->slot.push_back(base[piece.param] + chunk - lag);
        it->param.push_back(piece.param);
        pos = stop;
      }
    }
  }
  // Pass 1: the moments, and each segment's norms into its slot ([2 slot] p^2, [2 slot + 1] u^2).
  const LambParams hp = lamb_params(config_, open_->lr);
  const StepArgs args{step_, open_->grad_scale};
  std::vector<double> slots(static_cast<size_t>(2 * base.back()), 0.0);
  std::vector<Tensor> device_norms(by_device.size());  // CUDA: [2 segments] f64 (as i64)
  for (size_t d = 0; d < by_device.size(); ++d) {
    const DeviceSegments& ds = by_device[d];
    std::vector<LambNorms> norms(ds.segments.size());
    if (ds.device.is_cuda()) {
      device_norms[d] = Tensor::empty({static_cast<int64_t>(2 * ds.segments.size())}, DType::i64,
                                      ds.device, stream);
      lamb_moments(ds.segments, hp, args, static_cast<double*>(device_norms[d].data()), ds.device,
                   stream);
      const Tensor host = device_norms[d].to(Device::cpu(), stream);
      synchronize(stream);
      std::memcpy(norms.data(), host.data(), norms.size() * sizeof(LambNorms));
    } else {
      norms = lamb_moments(ds.segments, hp, args);
    }
    for (size_t k = 0; k < norms.size(); ++k) {
      slots[static_cast<size_t>(2 * ds.slot[k])] = norms[k].param_sq;
      slots[static_cast<size_t>(2 * ds.slot[k] + 1)] = norms[k].update_sq;
    }
  }
  if (norm_sum_) norm_sum_(slots, stream);
  // Each parameter's norms: its slots added in element order.
  std::vector<LambNorms> total(params_.size());
  for (size_t p = 0; p < params_.size(); ++p)
    for (int64_t k = base[p]; k < base[p + 1]; ++k) {
      total[p].param_sq += slots[static_cast<size_t>(2 * k)];
      total[p].update_sq += slots[static_cast<size_t>(2 * k + 1)];
    }
  // Pass 2: every segment updated with its parameter's trust ratio.
  static_assert(sizeof(LambNorms) == 2 * sizeof(double));
  for (size_t d = 0; d < by_device.size(); ++d) {
    const DeviceSegments& ds = by_device[d];
    std::vector<LambNorms> norms;
    for (const size_t p : ds.param)
      norms.push_back(total[p]);
    if (ds.device.is_cuda()) {
      Tensor host = Tensor::empty({static_cast<int64_t>(2 * norms.size())}, DType::i64);
      std::memcpy(host.data(), norms.data(), norms.size() * sizeof(LambNorms));
      device_norms[d].copy_from(host, stream);
      lamb_apply(ds.segments, hp, args, static_cast<const double*>(device_norms[d].data()),
                 ds.device, stream);
      synchronize(stream);  // `host` is copied before it goes
    } else {
      lamb_apply(ds.segments, hp, args, norms);
    }
  }
}

void FlatOptimizer::check_updates(float lr, Stream stream) {
  if (!guard_ || config_.kind != OptimizerKind::adam || !guard_->due(step_)) return;
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

void FlatOptimizer::set_betas(double beta1, double beta2) {
  for (const double b : {beta1, beta2})
    if (!(b >= 0.0 && b < 1.0))
      throw ValueError(kComponent, str("betas (", beta1, ", ", beta2, "): each must be in [0, 1)"));
  if (config_.kind == OptimizerKind::sgd) {
    if (config_.momentum == 0.0 || beta1 == 0.0)
      throw ValueError(kComponent, str("momentum ", config_.momentum, " -> ", beta1, ": SGD ",
                                       "cycles a momentum that stays > 0 (its momentum buffer ",
                                       "exists only then; set optimizer.params.momentum)"));
    config_.momentum = beta1;
    return;
  }
  config_.beta1 = beta1;
  config_.beta2 = beta2;
}

void FlatOptimizer::load_state(const OptimizerState& state, Stream stream) {
  check_resident("load_state");
  if (state.step < 0) throw ValueError(kComponent, str("step = ", state.step, ": must be >= 0"));
  if (state.step == 0 && state.tensors.empty()) {
    create_fresh(stream);
    return;
  }
  // Check everything before touching anything, so a bad state leaves the optimizer as it was.
  std::set<std::string> expected;
  for (const FlatParam& p : params_)
    for (const StateSlot& slot : state_slots(p.value_dtype, precision_, config_)) {
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

std::vector<FlatOptimizer::SlotTensor> FlatOptimizer::run_state(size_t i) const {
  check_resident("run_state");
  std::vector<SlotTensor> out;
  for (const StateSlot& slot : slots_of(runs_.at(i)))
    out.push_back({slot, *state_[i].of(slot.kind)});
  return out;
}

OptimizerState FlatOptimizer::full_state() const {
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

std::vector<FlatOptimizer::PieceTensor> FlatOptimizer::piece_tensors() const {
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

void FlatOptimizer::set_step_count(int64_t step) {
  if (step < 0) throw ValueError(kComponent, str("step = ", step, ": must be >= 0"));
  step_ = step;
}

void FlatOptimizer::check_resident(const char* what) const {
  if (evicted_)
    throw ValueError(kComponent, str(what, ": the state is evicted (restore_state first)"));
}

std::vector<Tensor> FlatOptimizer::evict_state() {
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

void FlatOptimizer::restore_state(std::vector<Tensor> tensors) {
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

int64_t FlatOptimizer::bytes() const {
  int64_t b = 0;
  for (const RunState& s : state_)
    for (const Tensor* t :
         {&s.master, &s.exp_avg, &s.exp_avg_sq, &s.max_exp_avg_sq, &s.momentum_buffer})
      if (t->defined()) b += static_cast<int64_t>(t->nbytes());
  return b;
}

}  // namespace zt::optim
