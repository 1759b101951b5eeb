// fp16 with DeepSpeed's dynamic loss scaler under mpirun (2 and 4 ranks): overflows injected at
// steps 3, 4 and 7 (TrainConfig::inject_overflow_steps) are skipped on every rank, the loss scale
// follows DeepSpeed's sequence (2^8, window 2, hysteresis 2), and ZeRO stages 1, 2 and 3
// reproduce stage 0 bitwise through those steps: every step's loss, unscaled gradient norm, lr,
// loss scale and skip, the final model.safetensors (f16), the checkpoint's optimizer state and its
// loss-scaler state. Clipping is on (on the unscaled norm); the gpt2 case keeps stage 3's small
// groups gathered (persistence) across the skipped steps. See [Note: fp16 step] in
// src/zerotrain/train/fp16_step.h and [Note: ZeRO stages] in src/zerotrain/zero/zero_stage.h.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mpi/mpi_test_env.h"
#include "mpi/training_inputs.h"
#include "support/checkpoint_tensors.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSteps = 8;

struct Fp16Case {
  const char* name;
  nn::ModelConfig model;
  int64_t grad_accum;
  bool activation_checkpointing = false;
  int64_t persistence_threshold = 0;  // stage 3: 2000 keeps the embedding and head gathered
};

train::TrainConfig fp16_config(const fs::path& dir, const Fp16Case& k, int stage) {
  train::TrainConfig c;
  c.paths.model = dir / "config.json";
  c.paths.data = dir / "tokens.bin";
  c.steps = kSteps;
  c.data.micro_batch = 1;
  c.data.seq_len = 8;
  c.data.grad_accum = k.grad_accum;
  c.schedule.lr = 1e-2;
  c.schedule.warmup_steps = 2;
  c.clip = 0.05;
  c.reporting.log_every = 1;
  c.data.seed = 5;
  c.precision.dtype = DType::f16;
  c.precision.loss_scaler.initial_scale_power = 8;
  c.precision.loss_scaler.loss_scale_window = 2;
  c.precision.loss_scaler.hysteresis = 2;
  c.test_hooks.inject_overflow_steps = {3, 4, 7};
  c.activation_checkpointing = k.activation_checkpointing;
  c.comm = &test::process_group().host();
  c.zero.reduce_bucket_size = 3000;
  c.zero.stage = stage;
  c.check_params_every = 4;
  c.zero.param_persistence_threshold = k.persistence_threshold;
  c.paths.out = dir / ("stage" + std::to_string(stage));
  return c;
}

std::vector<nlohmann::json> metrics_lines(const fs::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

void run_fp16_parity(const Fp16Case& k) {
  comm::Communicator& comm = test::process_group().host();
  const fs::path dir = test::shared_temp_dir(std::string("fp16_") + k.name);
  test::write_inputs(dir, k.model);
  for (int stage = 0; stage <= 3; ++stage) {
    const train::TrainSummary s = train::train(fp16_config(dir, k, stage));
    EXPECT_EQ(s.skipped_steps, 3) << k.name << " stage " << stage;
    EXPECT_EQ(s.loss_scale, 64.0) << k.name << " stage " << stage;
  }
  comm.barrier();
  if (comm.rank() == 0) {
    const fs::path ref = dir / "stage0";
    const std::vector<nlohmann::json> m0 = metrics_lines(ref / "metrics.jsonl");
    ASSERT_EQ(m0.size(), static_cast<size_t>(kSteps));
    const std::vector<double> scales = {256, 256, 256, 256, 128, 128, 128, 64};
    const std::vector<int> skipped = {0, 0, 1, 1, 0, 0, 1, 0};
    for (size_t i = 0; i < m0.size(); ++i) {
      EXPECT_EQ(m0[i].at("loss_scale").get<double>(), scales[i]) << k.name << " step " << i + 1;
      EXPECT_EQ(m0[i].at("skipped").get<int>(), skipped[i]) << k.name << " step " << i + 1;
      EXPECT_EQ(m0[i].at("grad_norm").is_null(), skipped[i] == 1) << k.name << " step " << i + 1;
    }
    const std::string model0 = test::file_bytes(ref / "model" / "model.safetensors");
    const auto opt0 = test::checkpoint_tensor_bytes(ref);
    const nlohmann::json scaler0 = train::read_train_state(ref).loss_scaler;
    ASSERT_FALSE(model0.empty());
    EXPECT_EQ(scaler0.at("cur_scale"), 64.0);
    for (int stage = 1; stage <= 3; ++stage) {
      const fs::path out = dir / ("stage" + std::to_string(stage));
      const std::vector<nlohmann::json> m = metrics_lines(out / "metrics.jsonl");
      ASSERT_EQ(m.size(), m0.size()) << k.name << " stage " << stage;
      for (size_t i = 0; i < m0.size(); ++i)
        for (const char* key : {"loss", "grad_norm", "lr", "loss_scale", "skipped"})
          EXPECT_EQ(m[i].at(key), m0[i].at(key))
              << k.name << " stage " << stage << " step " << i + 1 << " " << key;
      EXPECT_TRUE(test::file_bytes(out / "model" / "model.safetensors") == model0)
          << k.name << " stage " << stage << ": final weights differ from stage 0";
      EXPECT_TRUE(test::checkpoint_tensor_bytes(out) == opt0)
          << k.name << " stage " << stage << ": optimizer state differs from stage 0";
      EXPECT_EQ(train::read_train_state(out).loss_scaler, scaler0)
          << k.name << " stage " << stage;
    }
    fs::remove_all(dir);
  }
  comm.barrier();
}

TEST(ZeroFp16, LlamaInjectedOverflowsAccumulation2) {
  run_fp16_parity({"llama_a2", test::tiny_llama(), 2});
}

TEST(ZeroFp16, Gpt2TiedCheckpointedPersistentInjectedOverflows) {
  run_fp16_parity({"gpt2_a1", test::tiny_gpt2(), 1, true, 2000});
}

}  // namespace
}  // namespace zt
