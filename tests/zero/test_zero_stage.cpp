// The ZeRO stages in one process (a one-rank communicator, world 1): stages 1, 2 and 3 train a
// tiny llama to bitwise stage 0's losses, weights and optimizer state in f32 and bf16 with
// accumulation (and in f32 with L2 Adam and amsgrad, and with a OneCycle scheduler that cycles
// momentum, which changes the result); an unknown stage is refused; after a step each stage holds
// what it should (stage 1 full gradients, stage 2 only gradient shards, stage 3 neither full
// values nor full gradients), and a stage-3 model run without the engine's hooks fails instead of
// reading released values; an offload policy is refused. Multi-rank parity:
// tests/mpi/test_zero_parity.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "support/checkpoint_tensors.h"
#include "support/one_cycle.h"
#include "support/token_fixture.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/sharded_stage.h"
#include "zerotrain/zero/stage3.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

// The engine's context of a one-process CPU run.
zero::ZeroContext one_process() {
  return zero::ZeroContext::one_process(Device::cpu(), {});
}

namespace fs = std::filesystem;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

train::TrainConfig make_config(const fs::path& dir, DType dtype) {
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  io::write_hf_config(mc, dir / "config.json");
  test::write_random_tokens(dir / "tokens.bin", mc.vocab_size, 600, 88172645463325252ull);
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.steps = 4;
  c.data.micro_batch = 2;
  c.data.seq_len = 8;
  c.data.grad_accum = 2;
  c.schedule.lr = 1e-2;
  c.clip = 0.05;
  c.reporting.log_every = 1;
  c.precision.dtype = dtype;
  return c;
}

// Trains `c` in every stage and expects stages 1-3 bitwise equal to stage 0.
void expect_stages_match_stage0(train::TrainConfig c, const fs::path& dir,
                                const std::string& what) {
  std::vector<std::string> weights, metrics;
  std::vector<std::map<std::string, std::string>> optimizer;
  for (int stage = 0; stage <= 3; ++stage) {
    c.zero.stage = stage;
    c.paths.out = dir / ("stage" + std::to_string(stage));
    train::train(c);
    weights.push_back(bytes_of(c.paths.out / "model" / "model.safetensors"));
    optimizer.push_back(test::checkpoint_tensor_bytes(c.paths.out));
    metrics.push_back(bytes_of(c.paths.out / "metrics.jsonl"));
  }
  ASSERT_FALSE(weights[0].empty());
  for (int stage = 1; stage <= 3; ++stage) {
    EXPECT_TRUE(weights[stage] == weights[0]) << what << " stage " << stage;
    EXPECT_TRUE(optimizer[stage] == optimizer[0]) << what << " stage " << stage;
    // Losses and norms equal; the lines differ only in timings, so compare those two fields.
    std::istringstream a(metrics[0]), b(metrics[stage]);
    std::string la, lb;
    int lines = 0;
    while (std::getline(a, la) && std::getline(b, lb)) {
      const auto ja = nlohmann::json::parse(la), jb = nlohmann::json::parse(lb);
      EXPECT_EQ(ja.at("loss"), jb.at("loss")) << what << " stage " << stage;
      EXPECT_EQ(ja.at("grad_norm"), jb.at("grad_norm")) << what << " stage " << stage;
      ++lines;
    }
    EXPECT_EQ(lines, 4);
  }
}

TEST(ZeroStageOneProcess, EveryStageMatchesStageZeroBitwise) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    const fs::path dir =
        fs::temp_directory_path() / ("zt_zero_one_" + std::string(dtype_name(dtype)));
    fs::remove_all(dir);
    fs::create_directories(dir);
    expect_stages_match_stage0(make_config(dir, dtype), dir, std::string(dtype_name(dtype)));
    fs::remove_all(dir);
  }
}

// torch.optim.Adam's L2 decay with amsgrad: the max_exp_avg_sq shards step, and gather into the
// checkpoint, exactly as stage 0's whole tensors do.
TEST(ZeroStageOneProcess, EveryStageMatchesStageZeroBitwiseWithAmsgradL2Adam) {
  const fs::path dir = fs::temp_directory_path() / "zt_zero_one_amsgrad_l2";
  fs::remove_all(dir);
  fs::create_directories(dir);
  train::TrainConfig c = make_config(dir, DType::f32);
  c.optimizer.adam_w_mode = false;
  c.optimizer.amsgrad = true;
  expect_stages_match_stage0(c, dir, "f32 amsgrad l2");
  fs::remove_all(dir);
}

// OneCycle with cycle_momentum sets the engine's betas before every update, in every stage; the
// betas matter (the same schedule without momentum cycling ends elsewhere).
TEST(ZeroStageOneProcess, EveryStageMatchesStageZeroBitwiseWithOneCycleMomentum) {
  const fs::path dir = fs::temp_directory_path() / "zt_zero_one_onecycle";
  fs::remove_all(dir);
  fs::create_directories(dir);
  train::TrainConfig c = make_config(dir, DType::bf16);
  c.schedule.deepspeed = test::one_cycle(false, 2);
  c.paths.out = dir / "plain";
  train::train(c);
  c.schedule.deepspeed = test::one_cycle(true, 2);
  expect_stages_match_stage0(c, dir, "bf16 one cycle");
  EXPECT_FALSE(bytes_of(dir / "plain" / "model" / "model.safetensors") ==
               bytes_of(dir / "stage0" / "model" / "model.safetensors"))
      << "cycling the momentum changed nothing";
  fs::remove_all(dir);
}

TEST(ZeroStageOneProcess, UnknownStageIsRefused) {
  const fs::path dir = fs::temp_directory_path() / "zt_zero_bad_stage";
  fs::create_directories(dir);
  train::TrainConfig c = make_config(dir, DType::f32);
  c.paths.out = dir / "out";
  c.zero.stage = 4;
  EXPECT_THROW(train::train(c), ValueError);
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  zero::ZeroOptions o;
  o.config.stage = -1;
  EXPECT_THROW(zero::make_zero_stage(o, model.blocks(), one_process()), ValueError);
  fs::remove_all(dir);
}

// The offload policy's rules (DeepSpeed's): each bad value is one line naming the key.
TEST(ZeroStageOneProcess, OffloadPolicyRulesNameTheKey) {
  const auto refused = [](int stage, const zero::OffloadPolicy& p, const std::string& line) {
    test::expect_error<ValueError>([&] { zero::validate_offload_policy(p, stage); }, {line});
  };
  zero::OffloadPolicy p;
  zero::validate_offload_policy(p, 0);
  p.optimizer.device = zero::OffloadDevice::cpu;
  refused(0, p, "[config] zero_optimization.offload_optimizer.device (--offload-optimizer): cpu "
                "needs ZeRO stage 1, 2 or 3");
  p.optimizer.ratio = 0.5;
  refused(2, p, "[config] zero_optimization.offload_optimizer.ratio: a partial offload (0.5) needs "
                "ZeRO stage 3");
  p.optimizer.ratio = 0;
  refused(3, p, "[config] zero_optimization.offload_optimizer.ratio: must be in (0, 1], got 0");
  p.optimizer = {};
  p.params.device = zero::OffloadDevice::nvme;
  refused(2, p, "[config] zero_optimization.offload_param.device (--offload-param): nvme needs "
                "ZeRO stage 3, got stage 2");
  refused(3, p, "[config] zero_optimization.offload_param.nvme_path: device nvme needs a directory");
  p.params.nvme_path = "/local_nvme";
  p.params.buffer_count = 0;
  refused(3, p, "[config] zero_optimization.offload_param.buffer_count: must be >= 1, got 0");
  p.params.buffer_count = 5;
  p.aio.queue_depth = 0;
  refused(3, p, "[config] aio.queue_depth: must be >= 1, got 0");
  p = {};
  p.sub_group_size = -1;
  refused(3, p, "[config] zero_optimization.sub_group_size: must be >= 0, got -1");
  p.sub_group_size = 0;  // DeepSpeed's too: one group per sub-group
  zero::validate_offload_policy(p, 3);
}

// One optimizer step of `stage` through the engine's hooks; returns the engine.
std::unique_ptr<zero::ZeroStage> one_step(int stage, nn::Transformer& model,
                                          zero::ZeroOptions o = {}) {
  o.config.stage = stage;
  o.config.param_persistence_threshold = 0;
  auto engine = zero::make_zero_stage(o, model.blocks(), one_process());
  nn::BlockRunner runner(model.blocks());
  runner.set_hooks(engine->hooks());
  const nn::StepContext ctx = test::make_step(model.config(), 2, 8, 5);
  engine->zero_grad();
  engine->begin_micro_step(true);
  runner.forward_backward(ctx);
  engine->finish_gradient_sync();
  const double norm = engine->grad_norm();
  EXPECT_GT(norm, 0.0);
  engine->step(1e-3f, 1.0f);
  return engine;
}

TEST(ZeroStageOneProcess, EachStageHoldsOnlyItsShareAfterAStep) {
  for (int stage = 1; stage <= 3; ++stage) {
    nn::Transformer model(test::tiny_config(nn::Family::gpt2), {});
    model.init_random(2);
    auto engine = one_step(stage, model);
    auto* sharded = dynamic_cast<zero::ShardedStage*>(engine.get());
    ASSERT_NE(sharded, nullptr);
    int64_t shard_value_bytes = 0;
    for (const auto& g : sharded->groups()) {
      EXPECT_EQ(g->has_full_grad(), stage == 1) << "stage " << stage << " block " << g->block();
      EXPECT_EQ(g->state() == zero::ParamState::gathered, stage < 3)
          << "stage " << stage << " block " << g->block();
      for (nn::Parameter* p : g->params()) {
        EXPECT_EQ(p->value.defined(), stage < 3) << p->name;
        EXPECT_EQ(p->grad.defined(), stage == 1) << p->name;
      }
      shard_value_bytes += static_cast<int64_t>(g->value_shard().nbytes());
    }
    const zero::MemoryBytes mem = engine->memory();
    if (stage == 3) {
      EXPECT_EQ(mem.params, shard_value_bytes);
    }
    EXPECT_GT(mem.optimizer, 0);
    EXPECT_EQ(engine->step_count(), 1);
    if (stage == 3) {
      // Without the hooks nothing gathers the values: the run must fail, not read stale memory.
      nn::BlockRunner bare(model.blocks());
      EXPECT_THROW(bare.forward(test::make_step(model.config(), 2, 8, 6)), Error);
      engine->begin_full_parameters();
      for (nn::Parameter* p : model.parameters())
        EXPECT_TRUE(p->value.defined()) << p->name;
      engine->end_full_parameters();
      for (nn::Parameter* p : model.parameters())
        EXPECT_FALSE(p->value.defined()) << p->name;
    }
  }
}

// [Note: stage 3 prefetch]: prefetching everything gathers the whole model at once; no prefetch
// needs one block's groups at a time (the head's: its own and the tied embedding's); a live bound
// lets the prefetch go as far as it allows and no further. Every setting ends at the same values.
TEST(ZeroStageOneProcess, Stage3PrefetchStaysWithinItsBounds) {
  auto numel_of_block = [](nn::Transformer& m, size_t b) {
    int64_t n = 0;
    for (nn::Parameter* p : m.blocks()[b]->parameters())
      n += numel_of(p->shape);
    return n;
  };
  nn::Transformer shape(test::tiny_config(nn::Family::gpt2), {.allocate = false});
  const int64_t emb = numel_of_block(shape, 0), layer = numel_of_block(shape, 1);
  const int64_t head = numel_of_block(shape, 3);
  ASSERT_EQ(shape.blocks().size(), 4u);
  int64_t total = emb + head;
  for (size_t b = 1; b + 1 < shape.blocks().size(); ++b)
    total += numel_of_block(shape, b);
  const int64_t one_block = std::max(layer, head + emb);  // the head also reads the tied table

  struct Setting {
    int64_t prefetch, max_live, expect_peak;
  };
  const std::vector<Setting> settings = {
      {int64_t{1} << 40, int64_t{1} << 40, total},   // everything ahead
      {0, int64_t{1} << 40, one_block},              // nothing ahead
      {int64_t{1} << 40, emb + layer, emb + layer},  // the live bound stops it after one layer
  };
  std::vector<std::vector<float>> first_values;
  for (const Setting& st : settings) {
    nn::Transformer model(test::tiny_config(nn::Family::gpt2), {});
    model.init_random(2);
    zero::ZeroOptions o;
    o.config.prefetch_bucket_size = st.prefetch;
    o.config.max_live_parameters = st.max_live;
    auto engine = one_step(3, model, o);
    const auto* s3 = dynamic_cast<const zero::Stage3*>(engine.get());
    ASSERT_NE(s3, nullptr);
    EXPECT_EQ(s3->peak_live_elements(), st.expect_peak)
        << "prefetch " << st.prefetch << " max_live " << st.max_live;
    engine->begin_full_parameters();
    const std::vector<std::vector<float>> values = test::values_of(model.parameters());
    engine->end_full_parameters();
    if (first_values.empty())
      first_values = values;
    else
      EXPECT_EQ(values, first_values);
  }
}

}  // namespace
}  // namespace zt
