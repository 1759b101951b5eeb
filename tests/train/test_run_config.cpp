// The sections of the run configuration (train/trainer.h) and their one check each: every bad value
// is refused by validate_train_config with one "[config]" line naming the ds_config key and the
// flag, and the defaults pass. Covers train/data_config.h, schedule_config.h, precision_config.h,
// report_config.h, zero/zero_config.h and validate_train_config.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {
namespace {

// The message validate_train_config gives for the defaults changed by `change`.
std::string error_of(const std::function<void(TrainConfig&)>& change) {
  TrainConfig c;
  change(c);
  try {
    validate_train_config(c);
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunConfig, DefaultsPass) {
  EXPECT_EQ(error_of([](TrainConfig&) {}), "no error");
}

TEST(RunConfig, EachBadValueNamesItsKeyAndFlag) {
  struct Case {
    std::function<void(TrainConfig&)> change;
    std::string message;
  };
  const Case cases[] = {
      {[](TrainConfig& c) { c.data.micro_batch = 0; },
       "[config] train_micro_batch_size_per_gpu (--micro-batch): must be > 0, got 0"},
      {[](TrainConfig& c) { c.data.grad_accum = -2; },
       "[config] gradient_accumulation_steps (--grad-accum): must be > 0, got -2"},
      {[](TrainConfig& c) { c.data.seq_len = 0; }, "[config] --seq-len: must be > 0, got 0"},
      {[](TrainConfig& c) { c.data.grad_accum = int64_t{1} << 62; },
       "[config] --micro-batch x --grad-accum x --seq-len: 8 x 4611686018427387904 x 128 tokens "
       "per step is above the ceiling of 2^48"},
      {[](TrainConfig& c) {
         c.data.micro_batch = 1 << 12;
         c.data.seq_len = (int64_t{1} << 36) + 1;
       },
       "[config] --micro-batch x --grad-accum x --seq-len: 4096 x 1 x 68719476737 tokens per "
       "step is above the ceiling of 2^48"},
      {[](TrainConfig& c) { c.steps = 0; },
       "[config] scheduler.params.total_num_steps (--steps): must be > 0, got 0"},
      {[](TrainConfig& c) { c.schedule.lr = -1; },
       "[config] optimizer.params.lr (--lr): must be >= 0, got -1"},
      {[](TrainConfig& c) { c.schedule.warmup_steps = -1; },
       "[config] scheduler.params.warmup_num_steps (--warmup): must be >= 0, got -1"},
      {[](TrainConfig& c) { c.schedule.decay = "exponential"; },
       "[config] --schedule: must be constant, linear or cosine, got exponential"},
      {[](TrainConfig& c) { c.zero.stage = 4; },
       "[config] zero_optimization.stage (--zero-stage): must be 0, 1, 2 or 3, got 4"},
      {[](TrainConfig& c) { c.zero.reduce_bucket_size = -1; },
       "[config] zero_optimization.reduce_bucket_size (--reduce-bucket-size): must be >= 0, got "
       "-1"},
      {[](TrainConfig& c) { c.zero.prefetch_bucket_size = -5; },
       "[config] zero_optimization.stage3_prefetch_bucket_size (--stage3-prefetch-bucket-size): "
       "must be >= 0, got -5"},
      {[](TrainConfig& c) { c.reporting.log_every = 0; },
       "[config] steps_per_print (--log-every): must be > 0, got 0"},
      {[](TrainConfig& c) { c.reporting.save_every = -1; },
       "[config] --save-every: must be >= 0, got -1"},
      {[](TrainConfig& c) { c.precision.mode = optim::Precision::low; },
       "[config] bf16.bf16_master_weights_and_grads (--precision low): needs dtype bf16, got f32"},
      {[](TrainConfig& c) { c.precision.grad_accum_dtype = DType::bf16; },
       "[config] data_types.grad_accum_dtype (--grad-accum-dtype): bf16 needs the model in that "
       "dtype (--dtype / bf16.enabled), or use f32"},
      {[](TrainConfig& c) { c.precision.comm_dtype = DType::i32; },
       "[config] communication_data_type (--comm-dtype): must be f32, bf16 or f16, got i32"},
      {[](TrainConfig& c) { c.test_hooks.inject_overflow_steps = {0}; },
       "[config] inject_overflow_steps holds 0, not >= 1"},
  };
  for (const Case& k : cases)
    EXPECT_EQ(error_of(k.change), k.message);
}

// reduce_bucket_size 0 is DeepSpeed's lower bound, not an error; amsgrad with the low-precision
// mode is refused naming both.
TEST(RunConfig, BoundsAreDeepSpeeds) {
  EXPECT_EQ(error_of([](TrainConfig& c) { c.zero.reduce_bucket_size = 0; }), "no error");
  const std::string low = error_of([](TrainConfig& c) {
    c.precision.dtype = DType::bf16;
    c.precision.mode = optim::Precision::low;
    c.optimizer.amsgrad = true;
  });
  EXPECT_NE(low.find("optimizer.params.amsgrad (--amsgrad)"), std::string::npos) << low;
  EXPECT_NE(low.find("--precision low"), std::string::npos) << low;
}

}  // namespace
}  // namespace zt::train
