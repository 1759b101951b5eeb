// The one optimizer of every ZeRO stage: Adam/AdamW (or torch.optim.Adam's L2 decay, amsgrad, no
// bias correction), Lamb, Lion or SGD (OptimizerConfig::kind) over a list of flat runs, each a
// contiguous value buffer holding pieces of named parameters. Stage 0 hands it each block's whole
// flat group, stages 1-3 this rank's shard of every group (zero/optimizer_options.h); a test may
// hand it one run per parameter. Each step gives the rule's step function (optimizers.h;
// adam_step_lowp for bf16 values in Precision::low) one run per piece, with that piece's weight
// decay; Adam, Lion and SGD are elementwise and every CPU path gives the scalar path's bits
// ([Note: flat segments] in segment.h), so how the values are cut into runs never changes a bit.
// Lamb's trust ratio is per parameter, over pieces that may lie on several ranks: [Note: Lamb
// across shards].
// State tensors (state_slots.h, [Note: optimizer masters]) are flat like the runs and live on
// their run's device. Tested by tests/optim/test_flat_adam.cpp, test_adam_variants.cpp,
// test_flat_optimizer.cpp and tests/mpi/test_zero_parity.cpp.
//
// optim/ knows no model: which pieces decay is the caller's decision (zero/ decides it from
// nn::ParamKind), passed as FlatParam::decays.
//
// [Note: Lamb across shards]
// FusedLamb scales each parameter's update by clamp(|p| / |u|, min_coeff, max_coeff), norms over
// the whole parameter, which a sharded stage holds in pieces on several ranks. So that every stage
// computes bitwise the same norms, they have one definition that does not depend on who holds
// what: each run is cut at multiples of kLambNormChunk of its own coordinates and at piece
// boundaries into segments; each segment's sums of p^2 and u^2 are taken in one fixed order
// (lamb_moments over the segment as a run of its own); a parameter's norms are the f64 sums of its
// segments' in element order. A caller whose runs start at multiples of kLambNormChunk of the
// flat buffers they are cut from (the ZeRO groups: shards are multiples of zero::kNormChunk) gets
// the same segments in every stage. Each parameter has norm_slots() slots, ceil(numel /
// kLambNormChunk) + 1, indexed by the segment's place in the parameter; a run fills the slots of
// its segments and leaves the others 0. With pieces of a parameter on other ranks, the engine's
// NormSum adds the slot vectors over the ranks before the update: every slot is written by exactly
// one rank, so adding zeros to it is exact in any order (zero/lamb_norm_sum.cpp adds the f64 bit
// patterns as integers). The CUDA path sums the same segments on the device (optimizers.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/optimizer_config.h"
#include "zerotrain/optim/optimizer_state.h"
#include "zerotrain/optim/optimizers.h"
#include "zerotrain/optim/precision.h"
#include "zerotrain/optim/precision_guard.h"
#include "zerotrain/optim/state_slots.h"

namespace zt::optim {

// A parameter some run holds (part of): its checkpoint name and full shape.
struct FlatParam {
  std::string name;
  Shape shape;
  DType value_dtype = DType::f32;  // the dtype of the runs holding it
  bool decays = false;             // the "decay" group: weight decay applies
};

// Elements [begin, end) of parameter `param`'s row-major flattened value, at `at` in a run.
struct FlatPiece {
  size_t param = 0;  // index into the FlatOptimizer's params
  int64_t begin = 0, end = 0;
  int64_t at = 0;
};

struct FlatRun {
  Tensor value;                   // [n] f32, bf16 or f16, contiguous: stepped in place
  std::vector<FlatPiece> pieces;  // disjoint; elements outside every piece are never stepped
};

// The step's f32 hyper-parameters at learning rate `lr` (the weight decay is per piece).
AdamParams adam_params(const OptimizerConfig& config, float lr);
LambParams lamb_params(const OptimizerConfig& config, float lr);
LionParams lion_params(const OptimizerConfig& config, float lr);
SgdParams sgd_params(const OptimizerConfig& config, float lr);

// Lamb's norm segments (see [Note: Lamb across shards]).
inline constexpr int64_t kLambNormChunk = 4096;
// Sums a vector of Lamb norm slots over the ranks holding other pieces of the same parameters,
// in place (every rank passes the same length), ordered on `stream`.
using NormSum = std::function<void(std::span<double> slots, Stream stream)>;

class FlatOptimizer {
 public:
  // Creates the state from `initial`: fresh (step 0, no tensors: masters from the runs' current
  // values, zero moments) or a full state to take this optimizer's pieces of (load_state). Every
  // param appears in some FlatParam; pieces index them. guard: checks the updates after the steps
  // it says are due (precision_guard.h; Adam only: the guard measures Adam's update); null: no
  // checks. Throws ValueError for a parameter listed twice, amsgrad with a bf16 value in
  // Precision::low, another rule than Adam with a bf16 value in Precision::low, a piece outside
  // its run or parameter, an undefined or non-flat run value; DTypeError for a non-floating value
  // or an f16 value in Precision::low.
  FlatOptimizer(std::vector<FlatParam> params, std::vector<FlatRun> runs, OptimizerConfig config,
           Precision precision, std::shared_ptr<PrecisionGuard> guard,
           const OptimizerState& initial = {}, Stream stream = {});

  // One update of every run with `grads[i]` ([n] f32/bf16/f16, contiguous, on run i's device)
  // multiplied by `grad_scale` first. Throws ValueError for a non-finite grad_scale or lr, or an
  // undefined gradient (naming the run's first parameter); ShapeError for a gradient of another
  // size. Nothing is stepped when it throws.
  void step(std::span<const Tensor> grads, float lr, float grad_scale = 1.0f, Stream stream = {});
  // The same update in parts, for an engine that steps sub-groups of runs one after another
  // (zero/shard_optimizer.h, overlapping one sub-group's update with the next one's transfers):
  // begin_step counts the step and checks lr and grad_scale; step_runs updates runs [first, last)
  // with grads[i - first] (checked as above); finish_step runs the precision guard. Every run is
  // stepped exactly once in between: throws ValueError for a run stepped twice, a step_runs
  // outside begin_step/finish_step, or a finish_step with a run left out. Lamb needs every
  // parameter's pieces in one step_runs: it throws ValueError for a range other than every run.
  void begin_step(float lr, float grad_scale);
  // Takes back a begun step before any run was stepped (a caller's check failed). Throws
  // ValueError when a run was stepped already.
  void cancel_step();
  void step_runs(size_t first, size_t last, std::span<const Tensor> grads, Stream stream = {});
  void finish_step(Stream stream = {});
  // The betas of the next updates (a scheduler that cycles momentum; SGD takes beta1 as its
  // momentum). Throws ValueError unless both are in [0, 1), or for SGD without momentum.
  void set_betas(double beta1, double beta2);
  // Lamb: how the norm slots are summed over the ranks (see [Note: Lamb across shards]); unset,
  // this optimizer holds every piece of its parameters.
  void set_norm_sum(NormSum sum) { norm_sum_ = std::move(sum); }
  // Lamb: the norm slots of parameter `param` (every rank counts alike) and of all parameters.
  int64_t norm_slots(size_t param) const;

  int64_t step_count() const { return step_; }
  const OptimizerConfig& config() const { return config_; }
  Precision precision() const { return precision_; }
  const std::vector<FlatParam>& params() const { return params_; }
  const std::vector<FlatRun>& runs() const { return runs_; }

  // Copies this optimizer's pieces of a full state in (from any device, cast to the slot dtype).
  // Every slot tensor of every param must be present, f32 (or the slot's dtype) and shaped like
  // the param, and no other name; a master is cast back into its value (value == round(master)).
  // Everything is checked before anything changes: throws ValueError / ShapeError / DTypeError
  // naming the tensor. Step 0 with no tensors: fresh again.
  void load_state(const OptimizerState& state, Stream stream = {});

  // One state tensor of a run: [n] like the run, the slot's dtype.
  struct SlotTensor {
    StateSlot slot;
    Tensor tensor;
  };
  // The slots of run `i` (state_slots order).
  std::vector<SlotTensor> run_state(size_t i) const;
  // The full state when every param is one piece (a world of one): views sharing storage, no copy;
  // empty tensors while no step was taken. Throws ValueError for a param cut into several pieces
  // or none (a sharded engine gathers instead: zero/optimizer_options.h).
  OptimizerState full_state() const;
  // Bytes of state tensors this optimizer holds (0 while evicted).
  int64_t bytes() const;

  // For state kept elsewhere between steps (NVMe offload, zero/state_swap.h): evict_state hands
  // out every state tensor (run by run, in state_slots order) and leaves the optimizer without
  // state; restore_state takes tensors of the same shapes and dtypes back (any storage, e.g. a
  // swap buffer). While evicted, a step, a state read or a load throws ValueError.
  std::vector<Tensor> evict_state();
  void restore_state(std::vector<Tensor> tensors);
  bool evicted() const { return evicted_; }

  // What a sharded checkpoint keeps of one piece: the value or one state slot ("<param>" or
  // "<param><suffix>") over elements [begin, end) of the param's flattened full tensor, as a view
  // into this optimizer's run (writable: a reader fills it in place).
  struct PieceTensor {
    std::string name;
    Shape full_shape;
    int64_t begin = 0, end = 0;
    Tensor tensor;  // [end - begin]
  };
  // Every piece's value and state slots, run by run.
  std::vector<PieceTensor> piece_tensors() const;
  // After piece_tensors() were filled from a saved shard: the updates that shard had taken.
  void set_step_count(int64_t step);

 private:
  struct RunState {
    Tensor master;          // [n] f32 for f16/bf16 values (not low); else undefined
    Tensor exp_avg;         // [n] f32, or bf16 when low
    Tensor exp_avg_sq;      // [n] f32, or bf16 when low
    Tensor max_exp_avg_sq;  // [n] f32 with amsgrad (never low); else undefined
    Tensor momentum_buffer;  // [n] f32, SGD with momentum; else undefined
    Tensor* of(SlotKind k);
    const Tensor* of(SlotKind k) const;
  };
  std::vector<StateSlot> slots_of(const FlatRun& r) const {
    return state_slots(r.value.dtype(), precision_, config_);
  }
  // For messages: run i's first parameter ("run i" without pieces).
  std::string run_name(size_t i) const;
  // The weight decay of a piece's parameter: the config's for the "decay" group, else 0.
  float weight_decay_of(const FlatPiece& piece) const {
    return params_[piece.param].decays ? static_cast<float>(config_.weight_decay) : 0.0f;
  }
  void create_fresh(Stream stream);
  // The update of runs [first, last) by the config's rule (the grads checked).
  void update_elementwise(size_t first, size_t last, std::span<const Tensor> grads,
                          Stream stream);
  void update_lamb(std::span<const Tensor> grads, Stream stream);
  void check_updates(float lr, Stream stream);  // the precision guard, when due

  std::vector<FlatParam> params_;
  std::vector<FlatRun> runs_;
  std::vector<RunState> state_;  // per run
  OptimizerConfig config_;
  Precision precision_;
  std::shared_ptr<PrecisionGuard> guard_;
  NormSum norm_sum_;
  int64_t step_ = 0;
  // Between begin_step and finish_step: the step's lr and scale, and which runs were stepped.
  struct OpenStep {
    float lr = 0, grad_scale = 1;
    std::vector<bool> stepped;
  };
  std::optional<OpenStep> open_;
  bool evicted_ = false;
  void check_resident(const char* what) const;
};

}  // namespace zt::optim
