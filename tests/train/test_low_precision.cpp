// The low-precision mode ([Note: precision modes] in optim/precision.h): train::AdamW keeps bf16
// moments and no masters for bf16 values (state() names and dtypes, a third of the mixed mode's
// bytes) and resumes bitwise through state()/load_state, also from f32 moments; the trainer
// warns once at a tiny lr in stage 0 and stage 2 (ShardedAdam) and not in mixed precision, and
// reports a third of the mixed mode's optimizer bytes;
// `--precision` parsing and the ds_config mapping (bf16_master_weights_and_grads +
// bf16_optimizer_states).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "data_pipeline/temp_dir.h"
#include "support/test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"
#include "zerotrain/optim/precision.h"
#include "zerotrain/train/ds_train_config.h"
#include "zerotrain/train/optimizer.h"

namespace zt {
namespace {

using optim::Precision;

struct Model {
  std::vector<std::unique_ptr<nn::Parameter>> params;
  std::vector<nn::Parameter*> ptrs;
  explicit Model(uint64_t seed) {
    const std::pair<const char*, Shape> specs[] = {{"a.weight", {9, 7}}, {"b.bias", {7}}};
    for (const auto& [name, shape] : specs) {
      auto p = std::make_unique<nn::Parameter>();
      p->name = name;
      p->shape = shape;
      p->kind = std::string(name).find("bias") != std::string::npos ? nn::ParamKind::bias
                                                                    : nn::ParamKind::weight;
      p->value = test::random_tensor(shape, DType::bf16, ++seed);
      p->grad = Tensor::zeros(shape, DType::f32);
      ptrs.push_back(p.get());
      params.push_back(std::move(p));
    }
  }
  void set_grads(int step) {
    for (size_t i = 0; i < params.size(); ++i)
      params[i]->grad = test::random_tensor(params[i]->shape, DType::f32, 50 * step + i);
  }
  std::vector<std::vector<float>> values() const {
    std::vector<std::vector<float>> out;
    for (const auto& p : params)
      out.push_back(p->value.to_floats());
    return out;
  }
};

train::AdamWOptions low() {
  train::AdamWOptions o;
  o.precision = optim::Precision::low;
  return o;
}

TEST(LowPrecision, AdamWKeepsBf16MomentsAndNoMasters) {
  Model m(1), mixed(1);
  train::AdamW opt(m.ptrs, low()), ref(mixed.ptrs, train::AdamWOptions{});
  m.set_grads(1);
  mixed.set_grads(1);
  opt.step(1e-2f);
  ref.step(1e-2f);
  const train::OptimizerState st = opt.state();
  EXPECT_EQ(st.tensors.size(), 4u);
  int64_t bytes = 0, ref_bytes = 0;
  for (const auto& [name, t] : st.tensors) {
    EXPECT_EQ(name.find(".master"), std::string::npos) << name;
    EXPECT_EQ(t.dtype(), DType::bf16) << name;
    bytes += static_cast<int64_t>(t.nbytes());
  }
  for (const auto& [name, t] : ref.state().tensors)
    ref_bytes += static_cast<int64_t>(t.nbytes());
  EXPECT_EQ(bytes * 3, ref_bytes);  // 2 bf16 moments vs 2 f32 moments and an f32 master
  EXPECT_NE(m.values(), Model(1).values());
}

TEST(LowPrecision, AdamWResumesBitwiseFromItsStateAndFromF32Moments) {
  Model a(2), b(2), c(2);
  train::AdamW oa(a.ptrs, low());
  for (int step = 1; step <= 2; ++step) {
    a.set_grads(step);
    oa.step(1e-2f);
  }
  train::OptimizerState saved = oa.state();
  train::OptimizerState as_f32 = saved;
  for (auto& [name, t] : as_f32.tensors) {
    Tensor f = Tensor::empty(t.shape(), DType::f32);
    f.copy_from(Tensor::from_floats(t.to_floats(), t.shape(), DType::f32));
    t = f;
  }
  for (size_t i = 0; i < a.params.size(); ++i) {
    b.params[i]->value.copy_from(a.params[i]->value);
    c.params[i]->value.copy_from(a.params[i]->value);
  }
  train::AdamW ob(b.ptrs, low()), oc(c.ptrs, low());
  ob.load_state(saved);
  oc.load_state(as_f32);
  for (Model* m : {&a, &b, &c})
    m->set_grads(3);
  oa.step(1e-2f);
  ob.step(1e-2f);
  oc.step(1e-2f);
  EXPECT_EQ(b.values(), a.values());
  EXPECT_EQ(c.values(), a.values());
  // A master in a low-precision state is not a tensor of this optimizer.
  saved.tensors.emplace("a.weight.master", Tensor::zeros({9, 7}, DType::f32));
  EXPECT_THROW(ob.load_state(saved), ValueError);
}

TEST(LowPrecision, AdamWRejectsF16ValuesInLowPrecision) {
  nn::Parameter p{"x.weight",
                  {4},
                  nn::ParamKind::weight,
                  Tensor::zeros({4}, DType::f16),
                  Tensor::zeros({4}, DType::f32)};
  EXPECT_THROW(train::AdamW({&p}, low()), DTypeError);
}

struct TrainRun {
  std::vector<std::string> warnings;
  int64_t optimizer_bytes = 0;
};

// A 4-step trainer run at `lr` (constant after `warmup` steps rising from lr 0): the warnings rank
// 0 got, the optimizer state's bytes.
TrainRun train_run(optim::Precision precision, int stage, double lr = 1e-7, int64_t warmup = 0) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::bf16);
  c.paths.out = dir.path() / "out";
  c.steps = 4;
  c.schedule.lr = lr;
  c.schedule.warmup_steps = warmup;
  c.schedule.decay = "constant";
  c.precision.mode = precision;
  c.zero.stage = stage;
  TrainRun out;
  train::TrainCallbacks cb;
  cb.on_warning = [&out](const std::string& l) { out.warnings.push_back(l); };
  out.optimizer_bytes = train::train(c, cb).optimizer_bytes;
  return out;
}

TEST(LowPrecision, TrainerWarnsOnceAtATinyLrInLowPrecisionOnly) {
  for (int stage : {0, 2}) {
    const TrainRun low = train_run(optim::Precision::low, stage);
    ASSERT_EQ(low.warnings.size(), 1u) << "stage " << stage;
    EXPECT_NE(low.warnings[0].find("bf16"), std::string::npos) << low.warnings[0];
    const TrainRun mixed = train_run(optim::Precision::mixed, stage);
    EXPECT_TRUE(mixed.warnings.empty()) << "stage " << stage << ": " << mixed.warnings[0];
    // bf16 moments (4 bytes per parameter) against f32 moments and masters (12).
    EXPECT_EQ(low.optimizer_bytes * 3, mixed.optimizer_bytes) << "stage " << stage;
  }
}

TEST(LowPrecision, TrainerStaysSilentThroughAWarmupFromLrZero) {
  // The first step of a warmup runs at lr 0 and the next ones at a rising lr: nothing vanishes
  // that is meant to move, in either mode.
  for (optim::Precision precision : {optim::Precision::mixed, optim::Precision::low}) {
    const TrainRun r = train_run(precision, 0, 1e-2, 3);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  }
}

TEST(LowPrecision, TrainerRejectsLowPrecisionWithF32) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.paths.out = dir.path() / "out";
  c.precision.mode = optim::Precision::low;
  EXPECT_THROW(train::train(c), ValueError);
}

TEST(LowPrecision, ParsesTheModeNames) {
  EXPECT_EQ(optim::parse_precision("low"), optim::Precision::low);
  EXPECT_EQ(optim::parse_precision("mixed"), optim::Precision::mixed);
  EXPECT_EQ(optim::precision_name(optim::Precision::low), "low");
  EXPECT_THROW(optim::parse_precision("fp8"), ValueError);
}

train::TrainConfig apply(const std::string& bf16_section, train::GivenFlags g = {},
                         optim::Precision flag = optim::Precision::mixed) {
  train::TrainConfig c;
  c.precision.mode = flag;
  const std::string text =
      R"({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 2}, "bf16": )" +
      bf16_section + "}";
  const config::DsConfig ds =
      config::parse_ds_config(text, "test", train::train_overrides(c, g, std::nullopt)).config;
  train::apply_ds_config(ds, g, c);
  return c;
}

TEST(LowPrecision, DsConfigBf16MastersAndOptimizerStatesSelectLowPrecision) {
  EXPECT_EQ(apply(R"({"enabled": true})").precision.mode, optim::Precision::mixed);
  EXPECT_EQ(apply(R"({"enabled": true, "bf16_master_weights_and_grads": true,
                      "bf16_optimizer_states": true})")
                .precision.mode,
            optim::Precision::low);
  try {
    apply(R"({"enabled": true, "bf16_master_weights_and_grads": true})");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bf16.bf16_master_weights_and_grads"), std::string::npos)
        << e.what();
  }
  const train::GivenFlags g{"--precision"};
  EXPECT_THROW(apply(R"({"enabled": true, "bf16_master_weights_and_grads": true,
                         "bf16_optimizer_states": true})",
                     g, optim::Precision::mixed),
               ValueError);
}

}  // namespace
}  // namespace zt
