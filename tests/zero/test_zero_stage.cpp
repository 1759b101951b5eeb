// The ZeRO stages in one process (no communicator, world 1): stages 1, 2 and 3 train a tiny llama
// to bitwise stage 0's losses, weights and optimizer state in f32 and bf16 with accumulation, and
// an unknown stage is refused. Multi-rank parity: tests/mpi/test_zero_parity.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/token_file.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/zero/zero_stage.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

train::TrainConfig make_config(const fs::path& dir, DType dtype) {
  const nn::ModelConfig mc = test::tiny_config(nn::Family::llama);
  io::write_hf_config(mc, dir / "config.json");
  std::vector<uint32_t> tokens(600);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<uint32_t>((i * 7919 + i / 3) % static_cast<size_t>(mc.vocab_size));
  io::TokenFileWriter writer(dir / "tokens.bin", static_cast<uint64_t>(mc.vocab_size),
                             std::nullopt);
  writer.write_document(tokens);
  writer.finish();
  train::TrainConfig c;
  c.model = dir / "config.json";
  c.data = dir / "tokens.bin";
  c.steps = 4;
  c.micro_batch = 2;
  c.seq_len = 8;
  c.grad_accum = 2;
  c.lr = 1e-2;
  c.clip = 0.05;
  c.log_every = 1;
  c.dtype = dtype;
  return c;
}

TEST(ZeroStageOneProcess, EveryStageMatchesStageZeroBitwise) {
  for (DType dtype : {DType::f32, DType::bf16}) {
    const fs::path dir =
        fs::temp_directory_path() / ("zt_zero_one_" + std::string(dtype_name(dtype)));
    fs::remove_all(dir);
    fs::create_directories(dir);
    train::TrainConfig c = make_config(dir, dtype);
    std::vector<std::string> weights, optimizer, metrics;
    for (int stage = 0; stage <= 3; ++stage) {
      c.zero_stage = stage;
      c.out = dir / ("stage" + std::to_string(stage));
      train::train(c);
      weights.push_back(bytes_of(c.out / "model" / "model.safetensors"));
      optimizer.push_back(bytes_of(c.out / "checkpoint" / "optimizer.safetensors"));
      metrics.push_back(bytes_of(c.out / "metrics.jsonl"));
    }
    ASSERT_FALSE(weights[0].empty());
    for (int stage = 1; stage <= 3; ++stage) {
      EXPECT_TRUE(weights[stage] == weights[0]) << dtype_name(dtype) << " stage " << stage;
      EXPECT_TRUE(optimizer[stage] == optimizer[0]) << dtype_name(dtype) << " stage " << stage;
      // Losses and norms equal; the lines differ only in timings, so compare those two fields.
      std::istringstream a(metrics[0]), b(metrics[stage]);
      std::string la, lb;
      int lines = 0;
      while (std::getline(a, la) && std::getline(b, lb)) {
        const auto ja = nlohmann::json::parse(la), jb = nlohmann::json::parse(lb);
        EXPECT_EQ(ja.at("loss"), jb.at("loss")) << "stage " << stage;
        EXPECT_EQ(ja.at("grad_norm"), jb.at("grad_norm")) << "stage " << stage;
        ++lines;
      }
      EXPECT_EQ(lines, 4);
    }
    fs::remove_all(dir);
  }
}

TEST(ZeroStageOneProcess, UnknownStageIsRefused) {
  const fs::path dir = fs::temp_directory_path() / "zt_zero_bad_stage";
  fs::create_directories(dir);
  train::TrainConfig c = make_config(dir, DType::f32);
  c.out = dir / "out";
  c.zero_stage = 4;
  EXPECT_THROW(train::train(c), ValueError);
  nn::Transformer model(test::tiny_config(nn::Family::llama), {});
  train::AdamW adam(model.parameters());
  zero::ZeroOptions o;
  o.stage = -1;
  EXPECT_THROW(zero::make_zero_stage(o, model.blocks(), nullptr, Device::cpu(), {}, adam),
               ValueError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zt
