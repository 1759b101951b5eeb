// The per-rank memory report of a run (train/memory_report.h) on the CPU with a tiny llama, one
// process: the categories add up to the allocator's bytes at start and at the peak, model states
// match ZeroStage::memory() as the summary reports it for every stage, activations grow with the
// micro-batch and shrink with checkpointing, and metrics.jsonl carries the peak's split.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "io/io_test_util.h"
#include "train/train_test_util.h"
#include "zerotrain/monitor/metrics.h"
#include "zerotrain/train/memory_report.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

train::TrainConfig config_in(const test::TempDir& dir, const std::string& name) {
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.paths.out = dir / name;
  c.steps = 2;
  c.data.grad_accum = 1;
  c.data.seq_len = 16;
  return c;
}

TEST(MemoryReport, CategoriesAddUpAndMatchTheEngineForEveryStage) {
  test::TempDir dir;
  for (int stage = 0; stage <= 3; ++stage) {
    SCOPED_TRACE(stage);
    train::TrainConfig c = config_in(dir, "stage" + std::to_string(stage));
    c.zero.stage = stage;
    c.zero.param_persistence_threshold = 0;
    const train::TrainSummary s = train::train(c);
    const train::MemoryReport& start = s.memory_start;
    const train::MemoryReport& peak = s.memory_peak;
    EXPECT_EQ(start.step, 0);
    EXPECT_EQ(start.activations, 0);
    EXPECT_GE(start.other, 0);
    EXPECT_GT(start.params, 0);
    // Values never change size; the optimizer state exists once the first step ran.
    EXPECT_EQ(start.params + start.grads + start.optimizer + start.activations + start.other,
              start.total());
    EXPECT_EQ(peak.params + peak.grads + peak.optimizer + peak.activations + peak.other,
              peak.total());
    EXPECT_GE(peak.step, 1);
    EXPECT_LE(peak.step, c.steps);
    EXPECT_EQ(peak.optimizer, s.optimizer_bytes);
    EXPECT_GT(peak.activations, 0);
    EXPECT_GE(peak.other, 0);
    // The peak report's total is the allocator's peak, which the summary logs in GiB.
    EXPECT_NEAR(static_cast<double>(peak.total()), s.peak_mem_gib * kGiB, 1.0);
    if (stage < 3) {
      EXPECT_EQ(start.params, s.param_bytes);
      EXPECT_EQ(peak.params, s.param_bytes);
    } else {
      // Stage 3 holds the value shards; at the peak its gathered blocks are in flight too.
      EXPECT_GE(peak.params, s.param_bytes);
    }
    if (stage < 2) {
      EXPECT_EQ(peak.grads, s.grad_bytes);
    }
  }
}

TEST(MemoryReport, ActivationsGrowWithTheMicroBatchAndShrinkWithCheckpointing) {
  test::TempDir dir;
  train::TrainConfig c = config_in(dir, "mb2");
  c.data.micro_batch = 2;
  const train::MemoryReport two = train::train(c).memory_peak;
  c.paths.out = dir / "mb4";
  c.data.micro_batch = 4;
  const train::MemoryReport four = train::train(c).memory_peak;
  c.paths.out = dir / "mb4_ac";
  c.activation_checkpointing = true;
  const train::MemoryReport four_ac = train::train(c).memory_peak;
  EXPECT_GT(four.activations, two.activations);
  EXPECT_LT(four_ac.activations, four.activations);
  EXPECT_EQ(four.model_states(), two.model_states());
  EXPECT_EQ(four_ac.model_states(), four.model_states());
}

TEST(MemoryReport, MetricsCarryThePeakSplit) {
  test::TempDir dir;
  train::TrainConfig c = config_in(dir, "run");
  const train::TrainSummary s = train::train(c);
  const auto lines = test::text_lines(c.paths.out / "metrics.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  const nlohmann::json last = nlohmann::json::parse(lines.back());
  const double split =
      last.at("peak_params_gib").get<double>() + last.at("peak_grads_gib").get<double>() +
      last.at("peak_optimizer_gib").get<double>() + last.at("peak_activations_gib").get<double>() +
      last.at("peak_other_gib").get<double>();
  EXPECT_NEAR(split, last.at("peak_mem_gib").get<double>(), 1e-8);
  EXPECT_EQ(last.at("peak_step").get<int64_t>(), s.memory_peak.step);
  EXPECT_NEAR(last.at("peak_activations_gib").get<double>() * kGiB,
              static_cast<double>(s.memory_peak.activations), 1.0);
  const auto csv = test::text_lines(c.paths.out / "metrics.csv");
  ASSERT_FALSE(csv.empty());
  EXPECT_NE(csv[0].find("peak_activations_gib"), std::string::npos) << csv[0];
}

TEST(MemoryReport, FormatNamesEveryCategory) {
  train::MemoryReport r;
  r.params = 1 << 20;
  r.grads = 2 << 20;
  r.optimizer = 4 << 20;
  r.activations = 512;
  r.other = 64;
  EXPECT_EQ(train::format_memory_report(r),
            "params 1.0 MiB, grads 2.0 MiB, optimizer 4.0 MiB, activations 512 B, other 64 B, "
            "total 7.0 MiB");
  // With offload: the host categories and the swap files after the allocator's total; on the CPU
  // the host bytes are the run allocator's own and count in its total.
  r.host_grads = 2 << 20;
  r.host_optimizer = 12 << 20;
  EXPECT_EQ(train::format_memory_report(r),
            "params 1.0 MiB, grads 2.0 MiB, optimizer 4.0 MiB, activations 512 B, other 64 B, "
            "total 7.0 MiB; host params 0 B, host grads 2.0 MiB, host optimizer 12.0 MiB");
  r.nvme = int64_t{3} << 30;
  r.host_in_total = true;
  EXPECT_EQ(train::format_memory_report(r),
            "params 1.0 MiB, grads 2.0 MiB, optimizer 4.0 MiB, activations 512 B, other 64 B, "
            "total 21.0 MiB; host params 0 B, host grads 2.0 MiB, host optimizer 12.0 MiB; swap "
            "files 3.00 GiB");
}

// The metrics carry the host and swap-file split only when offload holds bytes.
TEST(MemoryReport, MetricsAddHostColumnsOnlyWithOffload) {
  monitor::StepMetrics m;
  m.memory_peak = monitor::MemorySplitGib{};
  auto has = [&](const char* key) {
    for (const auto& [name, value] : monitor::metric_fields(m))
      if (name == key) return true;
    return false;
  };
  EXPECT_TRUE(has("peak_other_gib"));
  EXPECT_FALSE(has("peak_host_optimizer_gib"));
  EXPECT_FALSE(has("peak_swap_gib"));
  m.memory_peak->host_optimizer = 1.5;
  EXPECT_TRUE(has("peak_host_params_gib"));
  EXPECT_TRUE(has("peak_host_optimizer_gib"));
  EXPECT_TRUE(has("peak_swap_gib"));
  EXPECT_NE(monitor::to_json_line(m).find("\"peak_host_optimizer_gib\":1.5"), std::string::npos);
}

}  // namespace
}  // namespace zt
