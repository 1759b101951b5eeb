// What `zerotrain train` writes and how its schedule is wired, on the CPU with a tiny llama: the lr
// column of metrics.jsonl follows optim's WarmupDecayLR (DeepSpeed's numbering) and the HF path
// keeps the old lr_at(step) sequence; metrics.csv has a header and the JSONL's rows; wall-clock
// fields appear only with the breakdown; DeepSpeed's csv_monitor layout; the loss/throughput PNG;
// CSV row trimming for resumes; the breakdown's per-step means.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "monitor/png_decode.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/monitor/metrics_csv.h"
#include "zerotrain/optim/hf_schedule.h"
#include "zerotrain/optim/scheduler.h"
#include "zerotrain/train/train_scheduler.h"
#include "zerotrain/train/trainer.h"
#include "zerotrain/train/wall_clock.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> jsonl(const fs::path& path) {
  std::vector<nlohmann::json> out;
  for (const std::string& line : test::text_lines(path))
    out.push_back(nlohmann::json::parse(line));
  return out;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, ',');)
    out.push_back(cell);
  return out;
}

const nlohmann::json kWarmupDecay = nlohmann::json::parse(R"({"type": "WarmupDecayLR",
    "params": {"total_num_steps": 6, "warmup_min_lr": 0.001, "warmup_max_lr": 0.02,
               "warmup_num_steps": 3, "warmup_type": "linear"}})");

TEST(TrainOutputs, DeepSpeedScheduleDrivesTheLrOfEachUpdate) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.paths.out = dir / "run";
  c.schedule.deepspeed = config::parse_scheduler_block(kWarmupDecay);
  train::train(c);
  const std::vector<nlohmann::json> lines = jsonl(c.paths.out / "metrics.jsonl");
  ASSERT_EQ(lines.size(), 6u);
  const auto expected = optim::make_scheduler(kWarmupDecay, c.schedule.lr);
  for (size_t i = 0; i < lines.size(); ++i) {
    // metrics.jsonl writes 9 significant digits.
    EXPECT_NEAR(lines[i]["lr"].get<double>(), expected->lr(), 1e-8 * expected->lr())
        << "update " << i + 1;
    expected->step();
  }
  // DeepSpeed's first update runs at iteration -1: warmup_min_lr, not 0.
  EXPECT_DOUBLE_EQ(lines[0]["lr"].get<double>(), 0.001);
}

TEST(TrainOutputs, HfScheduleKeepsTheTrainersNumbering) {
  train::TrainConfig c;
  c.schedule.lr = 1e-2;
  c.steps = 10;
  c.schedule.warmup_steps = 3;
  c.schedule.decay = "cosine";
  c.schedule.min_lr_ratio = 0.1;
  const auto s = train::make_train_scheduler(c);
  const optim::LrSchedule old({optim::ScheduleKind::cosine, c.schedule.lr, 3, 10, 0.1});
  for (int64_t step = 0; step < 10; ++step) {
    EXPECT_DOUBLE_EQ(s->lr(), old.lr_at(step)) << "step " << step;
    s->step();
  }
  // A checkpoint without scheduler state resumes at the iteration after its steps.
  const auto r = train::make_train_scheduler(c);
  train::restore_scheduler(*r, nullptr, 4);
  EXPECT_DOUBLE_EQ(r->lr(), old.lr_at(4));
  const auto t = train::make_train_scheduler(c);
  train::restore_scheduler(*t, r->state(), 0);
  EXPECT_DOUBLE_EQ(t->lr(), old.lr_at(4));
}

TEST(TrainOutputs, CsvMatchesJsonlAndBreakdownOnlyWhenEnabled) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.steps = 4;
  c.reporting.log_every = 2;
  c.paths.out = dir / "plain";
  const train::TrainSummary s = train::train(c);
  EXPECT_EQ(s.csv_path, c.paths.out / "metrics.csv");
  const std::vector<nlohmann::json> j = jsonl(c.paths.out / "metrics.jsonl");
  const std::vector<std::string> csv = test::text_lines(s.csv_path);
  ASSERT_EQ(j.size(), 2u);
  ASSERT_EQ(csv.size(), 3u);
  const std::vector<std::string> header = split(csv[0]);
  EXPECT_EQ(header.size(), j[0].size());
  for (size_t r = 0; r < 2; ++r) {
    const std::vector<std::string> row = split(csv[r + 1]);
    ASSERT_EQ(row.size(), header.size());
    for (size_t k = 0; k < header.size(); ++k) {
      const nlohmann::json& v = j[r].at(header[k]);
      if (v.is_null())
        EXPECT_EQ(row[k], "null") << header[k];
      else
        EXPECT_DOUBLE_EQ(std::stod(row[k]), v.get<double>()) << header[k];
    }
  }
  EXPECT_EQ(j[1]["step"], 4);
  EXPECT_EQ(j[1]["world_size"], 1);
  EXPECT_EQ(j[1]["loss_scale"], 1.0);
  EXPECT_EQ(j[1]["tokens_per_s"], j[1]["tokens_per_s_per_gpu"]);
  EXPECT_FALSE(j[1].contains("forward_ms"));
  // The process's host memory closes every record: a resident set, its peak, malloc's heap (null
  // where a sanitizer's allocator stands in for glibc's).
  EXPECT_EQ(header.back(), "heap_mmap_gib");
  EXPECT_GT(j[1]["host_rss_gib"].get<double>(), 0.0);
  EXPECT_GE(j[1]["host_peak_rss_gib"].get<double>(), j[1]["host_rss_gib"].get<double>());
  if (!j[1]["heap_in_use_gib"].is_null()) {
    EXPECT_GT(j[1]["heap_in_use_gib"].get<double>(), 0.0);
    EXPECT_GE(j[1]["heap_arena_gib"].get<double>(), 0.0);
  }

  c.paths.out = dir / "breakdown";
  c.reporting.wall_clock_breakdown = true;
  train::train(c);
  const std::vector<nlohmann::json> b = jsonl(c.paths.out / "metrics.jsonl");
  ASSERT_EQ(b.size(), 2u);
  for (const char* key : {"forward_ms", "backward_ms", "comm_ms", "step_ms"}) {
    ASSERT_TRUE(b[1].contains(key)) << key;
    EXPECT_GE(b[1][key].get<double>(), 0.0) << key;
  }
  EXPECT_GT(b[1]["forward_ms"].get<double>() + b[1]["backward_ms"].get<double>(), 0.0);
  EXPECT_NE(
      test::text_lines(c.paths.out / "metrics.csv")[0].find(",forward_ms,backward_ms,comm_ms,"),
      std::string::npos);
}

TEST(TrainOutputs, CsvMonitorMirrorsDeepSpeedsLayoutAndPlotIsAPng) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.steps = 3;
  c.paths.out = dir / "run";
  c.reporting.csv_monitor_dir = dir / "logs" / "job";
  c.reporting.wall_clock_breakdown = true;
  const train::TrainSummary s = train::train(c);
  const int64_t batch = c.data.micro_batch * c.data.grad_accum;  // one rank
  for (const char* name :
       {"train_loss", "lr", "elapsed_time_ms_forward", "elapsed_time_ms_backward",
        "elapsed_time_ms_backward_allreduce", "elapsed_time_ms_step"}) {
    const std::vector<std::string> rows =
        test::text_lines(c.reporting.csv_monitor_dir / str("Train_Samples_", name, ".csv"));
    ASSERT_EQ(rows.size(), 4u) << name;
    EXPECT_EQ(rows[0], str("step,", name));
    for (int64_t i = 1; i <= 3; ++i)
      EXPECT_EQ(split(rows[static_cast<size_t>(i)])[0], std::to_string(i * batch));
  }
  const std::vector<nlohmann::json> j = jsonl(c.paths.out / "metrics.jsonl");
  const std::vector<std::string> lr =
      test::text_lines(c.reporting.csv_monitor_dir / "Train_Samples_lr.csv");
  EXPECT_DOUBLE_EQ(std::stod(split(lr[2])[1]), j[1]["lr"].get<double>());

  const std::string bytes = test::read_bytes(s.plot_path);
  const std::vector<uint8_t> png(bytes.begin(), bytes.end());
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n"));
  const monitor::plot::RgbImage img = test::decode_png(png);
  EXPECT_GT(img.width, 0);
}

TEST(TrainOutputs, DropCsvRowsAfterKeepsHeaderAndWholeRows) {
  test::TempDir dir;
  const fs::path p = dir / "m.csv";
  std::ofstream(p) << "step,loss\n1,2.5\n2,2.4\n3,2.3\n4,2";
  monitor::drop_csv_rows_after(p, 2);
  EXPECT_EQ(test::text_lines(p), (std::vector<std::string>{"step,loss", "1,2.5", "2,2.4"}));
  std::ofstream(p) << "step,loss,lr\n1,2.5,0.1\n2,2.4\n";  // a row cut short by a crash
  monitor::drop_csv_rows_after(p, 5);
  EXPECT_EQ(test::text_lines(p), (std::vector<std::string>{"step,loss,lr", "1,2.5,0.1"}));
  monitor::drop_csv_rows_after(dir / "missing.csv", 1);
  EXPECT_FALSE(fs::exists(dir / "missing.csv"));
}

TEST(TrainOutputs, WallClockIsSilentWhenOffAndAveragesPerStep) {
  train::WallClockBreakdown off(false, Stream{});
  off.restart();
  off.lap(train::Phase::forward);
  EXPECT_EQ(off.take(1).forward_ms, 0.0);
  train::WallClockBreakdown on(true, Stream{});
  on.restart();
  volatile double sink = 0;
  for (int i = 0; i < 200000; ++i)
    sink = sink + 1.0;
  on.lap(train::Phase::step);
  const monitor::WallClockTimes t = on.take(2);
  EXPECT_GT(t.step_ms, 0.0);
  EXPECT_EQ(t.forward_ms, 0.0);
  EXPECT_EQ(on.take(1).step_ms, 0.0);  // take resets
  EXPECT_THROW(on.take(0), ValueError);
}

}  // namespace
}  // namespace zt
