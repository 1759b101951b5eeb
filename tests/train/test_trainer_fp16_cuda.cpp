// fp16 training on a GPU with overflows injected at steps 3 and 4 ([Note: fp16 step]): the loss
// scale and the skipped steps follow DeepSpeed's scaler exactly as on the CPU, the skipped steps
// leave the weights and optimizer state bitwise unchanged, and every step's loss stays within 2%
// of the CPU run's (f16 GEMMs and attention accumulate in another order). Skips without a CUDA
// device.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "nn/nn_test_util.h"
#include "support/checkpoint_tensors.h"
#include "support/test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/train/checkpoint.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

std::vector<double> column(const fs::path& metrics, const char* key) {
  std::vector<double> out;
  for (const std::string& line : test::text_lines(metrics)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    out.push_back(j.at(key).is_null() ? std::nan("") : j.at(key).get<double>());
  }
  return out;
}

TEST(TrainerFp16Cuda, InjectedOverflowsMatchTheCpuRun) {
  ZT_SKIP_WITHOUT_CUDA();
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f16);
  // The CUDA attention needs a head size of 32 or more.
  io::write_hf_config(test::tiny_cuda_config(nn::Family::llama), c.paths.model);
  c.steps = 6;
  c.precision.loss_scaler.initial_scale_power = 8;
  c.precision.loss_scaler.loss_scale_window = 2;
  c.test_hooks.inject_overflow_steps = {3, 4};
  c.reporting.save_every = 1;
  c.paths.out = dir / "cpu";
  train::train(c);

  c.device = Device::cuda(0);
  c.paths.out = dir / "gpu";
  c.reporting.keep_checkpoints = 10;  // every step's checkpoint stays
  const train::TrainSummary s = train::train(c);
  EXPECT_EQ(s.skipped_steps, 2);

  const fs::path cpu = dir / "cpu" / "metrics.jsonl", gpu = dir / "gpu" / "metrics.jsonl";
  EXPECT_EQ(column(gpu, "loss_scale"), (std::vector<double>{256, 256, 256, 256, 128, 128}));
  EXPECT_EQ(column(gpu, "skipped"), column(cpu, "skipped"));
  EXPECT_EQ(column(gpu, "lr"), column(cpu, "lr"));
  const std::vector<double> loss_cpu = column(cpu, "loss"), loss_gpu = column(gpu, "loss");
  ASSERT_EQ(loss_gpu.size(), loss_cpu.size());
  for (size_t i = 0; i < loss_cpu.size(); ++i)
    EXPECT_NEAR(loss_gpu[i], loss_cpu[i], 0.02 * loss_cpu[i]) << "step " << i + 1;
  const auto saved = [&](int step) {
    return test::checkpoint_tensor_bytes(c.paths.out / checkpoint::kCheckpointsDirName /
                                         checkpoint::tag_for_step(step));
  };
  for (int skipped : {3, 4})
    EXPECT_TRUE(saved(skipped) == saved(2))
        << "weights, masters or moments changed at skipped step " << skipped;
}

}  // namespace
}  // namespace zt
