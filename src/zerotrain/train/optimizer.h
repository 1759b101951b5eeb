// AdamW over a model's parameters (torch.optim.AdamW semantics, one optim::adam_step per step),
// with two parameter groups and mixed precision; options make it torch.optim.Adam (L2 weight decay
// in the gradient), add amsgrad or drop the bias correction. Tested by
// tests/train/test_optimizer.cpp and tests/train/test_adam_variants.cpp.
//
// Groups: weight decay applies to the parameters the DecayRule picks (by default ParamKind::weight,
// so not norms, biases or embeddings, as the HF Trainer does); the others form the "no_decay"
// group.
//
// [Note: optimizer masters]
// A parameter whose value is f16/bf16 gets an f32 master copy; its moments are f32 too. The step
// updates the master and writes the rounded value in the same pass (the run's param_copy), so
// value == round(master) after every step. An f32 parameter is stepped in place, its value being
// its own master. State tensors live on their parameter's device, shaped like the parameter.
//
// In optim::Precision::low ([Note: precision modes] in precision.h) a bf16 parameter has no master: it is
// stepped in place with bf16 moments (optim::adam_step_lowp), and its state tensors are bf16. That
// mode has no third moment, so amsgrad with it is refused.
//
// State is created on the first step from the values as they are then (as torch does), or by
// load_state; until then the optimizer is Fresh and state() is empty.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/nn/parameter.h"
#include "zerotrain/optim/optimizers.h"
#include "zerotrain/optim/precision.h"

namespace zt::train {

class PrecisionGuard;

// Says whether weight decay applies to a parameter.
using DecayRule = std::function<bool(const nn::Parameter&)>;
// Decays exactly the parameters of these kinds.
DecayRule decay_kinds(std::vector<nn::ParamKind> kinds);

struct AdamWOptions {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.01f;  // torch.optim.AdamW's default; applied to the "decay" group only
  // false: torch.optim.Adam's L2 term (wd * p added to the gradient, so it enters the moments)
  // instead of AdamW's decoupled p *= 1 - lr * wd (DeepSpeed's adam_w_mode).
  bool decoupled = true;
  bool bias_correction = true;
  // torch's amsgrad: the denominator uses the running max of v, a third f32 state tensor. Not with
  // optim::Precision::low.
  bool amsgrad = false;
  DecayRule decays = decay_kinds({nn::ParamKind::weight});
  optim::Precision precision = optim::Precision::mixed;  // low: bf16 values stepped in place, bf16 moments
  // Checks the updates after the steps it says are due (precision_guard.h); null: no checks.
  std::shared_ptr<PrecisionGuard> guard;
};

// The flat-shard step's hyper-parameters for one update at `lr` (the per-run weight decay comes
// from the groups). Shared by AdamW and the ZeRO engine's ShardedAdam.
optim::AdamParams adam_params(const AdamWOptions& options, float lr);

struct ParamGroup {
  std::string name;                 // "decay" or "no_decay"
  float weight_decay = 0;           // AdamWOptions::weight_decay, or 0
  std::vector<std::string> params;  // parameter names, in the order given
};

// What a checkpoint saves. Names: "<param>.exp_avg", "<param>.exp_avg_sq", with amsgrad
// "<param>.max_exp_avg_sq" and, for f16/bf16 parameters in mixed precision, "<param>.master";
// every tensor f32 (bf16 moments of bf16 parameters in low precision) and shaped like its
// parameter.
struct OptimizerState {
  int64_t step = 0;  // updates taken
  std::map<std::string, Tensor> tensors;
};

class AdamW {
 public:
  // params: non-null, distinct names, floating values. Throws ValueError naming the offending
  // parameter, or amsgrad with optim::Precision::low. The parameters must outlive the optimizer. Values
  // may be undefined all at once (a model built without them, whose ZeRO stage 3 engine owns the
  // shards: zero.Init); such an optimizer only carries options and a fresh state, and step() /
  // load_state() of a non-empty state throw.
  AdamW(std::vector<nn::Parameter*> params, AdamWOptions options = {});

  // One update of every parameter with learning rate `lr`; each gradient is multiplied by
  // `grad_scale` first (loss unscaling and clipping, see grad_clip.h). Throws ValueError for a
  // non-finite grad_scale or lr, or a parameter whose gradient is undefined or misshapen.
  void step(float lr, float grad_scale = 1.0f, Stream stream = {});
  // Sets every defined gradient to zero.
  void zero_grad(Stream stream = {});

  int64_t step_count() const { return step_; }
  const std::vector<ParamGroup>& groups() const { return groups_; }
  const AdamWOptions& options() const { return options_; }
  // The betas of the next updates (a scheduler that cycles momentum, train_scheduler.h). Throws
  // ValueError unless both are in [0, 1).
  void set_betas(float beta1, float beta2);

  // The state as named tensors sharing storage with the optimizer (no copy); empty while Fresh.
  OptimizerState state() const;
  // Copies a saved state in (from any device). Every expected name must be present with the
  // parameter's shape and dtype f32 (f32 or bf16 for low-precision moments), and no other; masters
  // are cast back into the f16/bf16 values so that value == round(master) holds. Throws ValueError
  // / ShapeError / DTypeError naming the tensor. A state with step 0 and no tensors makes the
  // optimizer Fresh again.
  void load_state(const OptimizerState& state, Stream stream = {});

 private:
  enum class Phase { fresh, ready };  // Fresh: no state tensors yet; Ready: every slot has them

  struct Slot {
    nn::Parameter* param = nullptr;
    bool decay = false;
    Tensor master;          // [shape] f32 for f16/bf16 values; undefined for f32 values
    Tensor exp_avg;         // [shape] f32, or bf16 when low_precision(slot)
    Tensor exp_avg_sq;      // [shape] f32, or bf16 when low_precision(slot)
    Tensor max_exp_avg_sq;  // [shape] f32 with amsgrad (never low precision); else undefined
  };

  bool needs_master(const Slot& s) const;
  bool low_precision(const Slot& s) const;  // a bf16 value in optim::Precision::low
  DType state_dtype(const Slot& s) const { return low_precision(s) ? DType::bf16 : DType::f32; }
  void check_updates(float lr, Stream stream);  // the precision guard, when due
  void create_state(Stream stream);             // Fresh -> Ready, from the current values
  // One state tensor of a slot: its checkpoint suffix (".exp_avg", ...), member and dtype.
  struct StateTensor {
    const char* suffix;
    Tensor Slot::*member;
    DType dtype;
  };
  std::vector<StateTensor> state_tensors(const Slot& s) const;  // those this slot has

  AdamWOptions options_;
  std::vector<Slot> slots_;
  std::vector<ParamGroup> groups_;
  Phase phase_ = Phase::fresh;
  int64_t step_ = 0;
};

}  // namespace zt::train
