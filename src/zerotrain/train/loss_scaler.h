// fp16 loss scaling as DeepSpeed 0.19 does it (deepspeed/runtime/fp16/loss_scaler.py): a static
// scale (ds_config fp16.loss_scale > 0) or the dynamic scaler driven by initial_scale_power,
// loss_scale_window, hysteresis, consecutive_hysteresis and min_loss_scale. Its state is a small
// JSON object saved in the trainer's checkpoint. Tested by tests/train/test_loss_scaler.cpp.
//
// [Note: dynamic loss scale]
// State: cur_scale, cur_iter (updates seen), last_overflow_iter (-1: none yet) and
// cur_hysteresis (overflows still tolerated before the scale drops). After every optimizer step's
// overflow check, update(overflow) runs DeepSpeed's DynamicLossScaler.update_scale:
// - overflow: when hysteresis is 1 or cur_hysteresis is 1 the scale halves, floored at
//   min_loss_scale; a scale already at min_loss_scale is an error (DeepSpeed's
//   raise_error_at_min_scale, which its engine always leaves on); otherwise cur_hysteresis drops
//   by one and the scale stays. Either way last_overflow_iter = cur_iter.
// - no overflow: with consecutive_hysteresis, cur_hysteresis refills to hysteresis. Then with
//   stable = cur_iter - last_overflow_iter - 1, the scale doubles when stable > 0 and stable is a
//   multiple of loss_scale_window (refilling cur_hysteresis there when consecutive_hysteresis is
//   off). So the first doubling comes at the (window + 1)-th clean update, later ones every window.
// - cur_iter += 1 in both cases.
// A static scaler never changes. The overflowed step itself is skipped by the trainer (no
// optimizer step, no scheduler step) whichever scaler runs; see [Note: fp16 step] in
// train/fp16_step.h.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace zt::train {

// ds_config's fp16 section, as the trainer takes it (DeepSpeed's defaults).
struct LossScalerOptions {
  double loss_scale = 0;                // > 0: this static scale; 0: dynamic scaling
  int64_t initial_scale_power = 16;     // the dynamic scale starts at 2^initial_scale_power
  int64_t loss_scale_window = 1000;     // clean updates between doublings
  int64_t hysteresis = 2;               // overflows tolerated before the scale halves
  bool consecutive_hysteresis = false;  // refill the hysteresis on every clean update
  double min_loss_scale = 1;            // the floor of the dynamic scale
  // An overflow at min_loss_scale (hysteresis exhausted) throws; false: the scale stays there.
  bool raise_error_at_min_scale = true;
};

class LossScaler {
 public:
  // Throws ValueError naming the option for a negative or non-finite loss_scale, an
  // initial_scale_power outside [0, 127] (the scale must fit a float), a loss_scale_window or
  // hysteresis below 1, a min_loss_scale that is not finite and > 0.
  explicit LossScaler(const LossScalerOptions& options);

  bool dynamic() const { return dynamic_; }
  double scale() const { return cur_scale_; }  // what the loss gradient is multiplied by now
  int64_t cur_iter() const { return cur_iter_; }
  int64_t last_overflow_iter() const { return last_overflow_iter_; }
  int64_t cur_hysteresis() const { return cur_hysteresis_; }

  // After a step's overflow check; see [Note: dynamic loss scale]. Throws zt::Error("loss_scaler")
  // when a dynamic scale at min_loss_scale would have to drop (raise_error_at_min_scale).
  void update(bool overflow);

  // {"dynamic", "cur_scale"} and, when dynamic, {"cur_iter", "last_overflow_iter",
  // "cur_hysteresis"}.
  nlohmann::json state() const;
  // Restores state() of a scaler of the same kind (the options stay this scaler's). Throws
  // ValueError naming the key for a missing or ill-typed entry, or a state of the other kind.
  void load_state(const nlohmann::json& state);

 private:
  LossScalerOptions options_;
  bool dynamic_ = false;
  double cur_scale_ = 1;
  int64_t cur_iter_ = 0;
  int64_t last_overflow_iter_ = -1;
  int64_t cur_hysteresis_ = 1;
};

}  // namespace zt::train
