// The precision guard: warns once, with numbers, when the typical update the optimizer wants to
// apply is below the resolution of the dtype it updates in, so that most parameters do not move
// (a bf16 optimizer at a small learning rate). Silent on healthy runs. Tested by
// tests/optim/test_precision_guard.cpp.
//
// [Note: precision guard]
// At a few early steps and then every `every` steps, after the update, the guard reads a fixed
// strided sample of the optimizer's state (windows of consecutive elements spread evenly over all
// tensors: a few small copies, no full pass) and computes per element the intended update
//   |u| = |step_size * m / (sqrt(v) / sqrt(1 - b2^t) + eps) + lr * wd * p|   (wd: AdamW only)
// relative to |p|, skipping zero parameters. An update below half an ulp of p rounds back to p;
// half an ulp relative to p is at least 2^-(mantissa bits + 2): 2^-9 for bf16 updated in place,
// 2^-12 for f16, 2^-25 for f32 masters. When the median ratio is below that resolution at two
// checks in a row, the second at an lr no higher than the first, the guard emits one line through
// its sink and stays quiet afterwards: a warmup's first steps (lr 0, or an lr still rising) are
// meant to move little and must not warn a healthy run. The trainer gives a guard to rank 0
// only, which samples its own (shard of the) state.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::optim {

// One tensor the optimizer updates in place (an f32 master or a bf16 value) with its moments, all
// contiguous, same numel, on one device.
struct GuardTensors {
  Tensor value;
  Tensor exp_avg;
  Tensor exp_avg_sq;  // the second moment the denominator uses: max_exp_avg_sq with amsgrad
  float weight_decay = 0.0f;
};

struct PrecisionGuardOptions {
  std::vector<int64_t> early_steps = {1, 2, 3, 5, 10, 20, 50, 100, 200, 500};
  int64_t every = 1000;   // then every N steps (0: early steps only)
  int64_t sample = 1024;  // elements read per check, at most
  int64_t window = 32;    // consecutive elements per read
};

using WarningSink = std::function<void(const std::string& line)>;

// What one check measured.
struct GuardReading {
  double median_ratio = 0;  // median |intended update| / |param| over the sample
  double threshold = 0;     // the resolution of the update dtype
  int64_t sampled = 0;      // non-zero parameters in the sample
  DType dtype = DType::f32;
};

// Half an ulp relative to the value, at least: 2^-9 bf16, 2^-12 f16, 2^-25 f32. Throws DTypeError
// for another dtype.
double update_resolution(DType update_dtype);

class PrecisionGuard {
 public:
  // Throws ValueError naming a non-positive sample or window, or a negative period.
  explicit PrecisionGuard(WarningSink sink, PrecisionGuardOptions options = {});

  // Whether update `step` (1-based) is checked: an early step or a multiple of `every`, and no
  // warning yet.
  bool due(int64_t step) const;
  // After update `step` with `hp`: samples `tensors` (dtype: the value tensors' dtype, the one
  // the optimizer updated in), warns through the sink when the median ratio is below the
  // resolution at this check and the previous one (see the Note). Returns the reading, or nothing
  // when the sample has no non-zero parameter. Throws ValueError naming a tensor whose moments do
  // not match its value.
  std::optional<GuardReading> check(int64_t step, const AdamParams& hp,
                                    std::span<const GuardTensors> tensors, Stream stream = {});
  bool warned() const { return warned_; }

 private:
  WarningSink sink_;
  PrecisionGuardOptions options_;
  bool warned_ = false;
  std::optional<double> last_low_lr_;  // the lr of the previous check, when it read low
};

// A guard with the default options writing to `sink`, or to stderr when `sink` is unset (the
// trainer's, for rank 0).
std::shared_ptr<PrecisionGuard> make_precision_guard(WarningSink sink);

// The warning line for a reading at update `step` with learning rate `lr`.
std::string precision_warning(const GuardReading& r, int64_t step, double lr);

}  // namespace zt::optim
