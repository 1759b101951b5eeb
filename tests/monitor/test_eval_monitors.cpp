// Where an evaluation's numbers go ([Note: evaluation] in src/zerotrain/train/evaluation.h): its
// metrics.jsonl record, and in one 4-step run with --eval-data, --eval-every 2, csv_monitor,
// tensorboard and wandb: the Eval/Samples/eval_loss and eval_perplexity events at the global
// samples of their step in each monitor, equal to metrics.jsonl; the loss plot draws them as a
// second curve in their own colour.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "monitor/tfevents_reader.h"
#include "monitor/wandb_log_reader.h"
#include "support/token_fixture.h"
#include "train/train_test_util.h"
#include "zerotrain/monitor/loss_plot.h"
#include "zerotrain/monitor/metrics.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

TEST(EvalMonitors, JsonLineIsTypedEval) {
  monitor::EvalMetrics m;
  m.step = 12;
  m.loss = 2.5;
  m.perplexity = std::exp(2.5);
  m.tokens = 512;
  m.sequences = 8;
  m.seconds = 0.25;
  EXPECT_EQ(monitor::to_json_line(m),
            "{\"type\":\"eval\",\"step\":12,\"eval_loss\":2.5,\"eval_perplexity\":12.182494,"
            "\"eval_tokens\":512,\"eval_sequences\":8,\"eval_seconds\":0.25}");
  m.loss = std::nan("");
  m.perplexity = std::nan("");
  const nlohmann::json j = nlohmann::json::parse(monitor::to_json_line(m));
  EXPECT_TRUE(j.at("eval_loss").is_null());  // every target masked
}

TEST(EvalMonitors, EveryMonitorGetsTheEvaluationsOfMetricsJsonl) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  test::write_random_tokens(dir / "eval.bin", 50, 100, 77);
  c.steps = 4;
  c.reporting.log_every = 2;
  c.paths.out = dir / "run";
  c.eval.data = dir / "eval.bin";
  c.eval.every = 2;
  c.reporting.csv_monitor_dir = dir / "csv" / "job";
  c.reporting.tensorboard_dir = dir / "tb" / "job";
  c.reporting.wandb.enabled = true;
  c.reporting.wandb.project = "proj";
  const train::TrainSummary s = train::train(c);
  ASSERT_EQ(s.evals.size(), 2u);

  std::vector<nlohmann::json> evals;
  for (const std::string& line : test::text_lines(c.paths.out / "metrics.jsonl")) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("type", "") == "eval") evals.push_back(j);
  }
  ASSERT_EQ(evals.size(), 2u);
  const int64_t batch = c.data.micro_batch * c.data.grad_accum;  // one rank
  const std::vector<std::pair<std::string, std::string>> tags = {
      {"Eval/Samples/eval_loss", "eval_loss"}, {"Eval/Samples/eval_perplexity", "eval_perplexity"}};

  // csv_monitor: one file per event, "step,<name>" then "<samples>,<value>".
  for (const auto& [tag, key] : tags) {
    const std::string name = tag.substr(tag.rfind('/') + 1);
    const std::vector<std::string> rows =
        test::text_lines(c.reporting.csv_monitor_dir / ("Eval_Samples_" + name + ".csv"));
    ASSERT_EQ(rows.size(), 3u) << tag;
    EXPECT_EQ(rows[0], "step," + name);
    for (size_t r = 0; r < 2; ++r) {
      const size_t comma = rows[r + 1].find(',');
      EXPECT_EQ(rows[r + 1].substr(0, comma),
                std::to_string(evals[r]["step"].get<int64_t>() * batch));
      EXPECT_EQ(std::stod(rows[r + 1].substr(comma + 1)), evals[r][key].get<double>());
    }
  }

  // tensorboard: the eval scalars at their global samples.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(c.reporting.tensorboard_dir))
    files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  std::map<std::string, std::vector<std::pair<int64_t, float>>> scalars;
  for (const test::DecodedEvent& e : test::read_tfevents(files[0]))
    for (const auto& [tag, value] : e.scalars)
      scalars[tag].emplace_back(e.step, value);
  for (const auto& [tag, key] : tags) {
    ASSERT_EQ(scalars[tag].size(), 2u) << tag;
    for (size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(scalars[tag][r].first, evals[r]["step"].get<int64_t>() * batch);
      EXPECT_FLOAT_EQ(scalars[tag][r].second, evals[r][key].get<float>());
    }
  }
  EXPECT_EQ(scalars["Train/Samples/train_loss"].size(), 2u);

  // wandb: a history record of the eval items after each step's own, at the same _step.
  std::vector<std::map<std::string, std::string>> history;
  for (const std::string& p : test::read_wandb_payloads(
           s.wandb_run_dir /
           str("run-", s.wandb_run_dir.filename().string().substr(28), ".wandb"))) {
    auto fields = test::proto_fields(p);
    if (fields.count(2)) history.push_back(test::proto_items(fields[2][0]));
  }
  ASSERT_EQ(history.size(), 4u);  // steps 2 and 4, each with its evaluation
  for (size_t r = 0; r < 2; ++r) {
    const auto& step = history[2 * r];
    const auto& eval = history[2 * r + 1];
    EXPECT_EQ(step.count("Train/Samples/train_loss"), 1u);
    EXPECT_EQ(eval.at("_step"), step.at("_step"));
    EXPECT_EQ(eval.at("_step"), std::to_string(evals[r]["step"].get<int64_t>() * batch));
    for (const auto& [tag, key] : tags)
      EXPECT_EQ(nlohmann::json::parse(eval.at(tag)).get<double>(), evals[r][key].get<double>());
  }
}

// Pixels of the eval curve's green.
int green_pixels(const monitor::plot::RgbImage& img) {
  int n = 0;
  for (size_t i = 0; i + 2 < img.pixels.size(); i += 3)
    if (std::abs(img.pixels[i] - 44) < 30 && std::abs(img.pixels[i + 1] - 160) < 30 &&
        std::abs(img.pixels[i + 2] - 44) < 30)
      ++n;
  return n;
}

TEST(EvalMonitors, LossPlotDrawsTheEvaluationsAsASecondCurve) {
  std::vector<monitor::LossPoint> records;
  for (int s = 1; s <= 100; ++s) {
    monitor::LossPoint m;
    m.step = s;
    m.loss = 5.0 / std::sqrt(static_cast<double>(s));
    m.tokens_per_s = 1000;
    records.push_back(m);
  }
  std::vector<monitor::EvalMetrics> evals;
  for (int s = 20; s <= 100; s += 20) {
    monitor::EvalMetrics e;
    e.step = s;
    e.loss = 6.0 / std::sqrt(static_cast<double>(s));
    evals.push_back(e);
  }
  const monitor::plot::RgbImage without = monitor::render_loss_plot(records);
  const monitor::plot::RgbImage with = monitor::render_loss_plot(records, evals);
  EXPECT_EQ(green_pixels(without), 0);
  EXPECT_GT(green_pixels(with), 300);
  EXPECT_TRUE(monitor::render_loss_plot(records, std::vector<monitor::EvalMetrics>{}).pixels ==
              without.pixels);
  // An evaluation above every training loss widens the loss axis: the training curve moves.
  evals.back().loss = 20;
  EXPECT_FALSE(monitor::render_loss_plot(records, evals).pixels == with.pixels);
}

}  // namespace
}  // namespace zt
