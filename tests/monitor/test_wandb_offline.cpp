// wandb offline runs: zlib's CRC-32, the .wandb block framing (records across blocks, block
// padding; read back by tests/monitor/wandb_log_reader.h), the records of a trainer run with the
// monitor on (header, run with the section's project/group/team, a history and a summary per
// logged step equal to metrics.jsonl at DeepSpeed's tags and sample steps, exit and final), the
// run directory's layout, and the exit code of a run that fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "monitor/wandb_log_reader.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/monitor/crc32.h"
#include "zerotrain/monitor/wandb_datastore.h"
#include "zerotrain/monitor/wandb_monitor.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

TEST(WandbOffline, Crc32IsZlibs) {
  EXPECT_EQ(monitor::crc32_ieee("123456789"), 0xCBF43926u);
  EXPECT_EQ(monitor::crc32_ieee("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  EXPECT_EQ(monitor::crc32_ieee("6789", monitor::crc32_ieee("12345")), 0xCBF43926u);
  EXPECT_EQ(monitor::crc32_ieee(""), 0u);
}

TEST(WandbOffline, DataStoreSplitsRecordsAcrossBlocksAndPadsTails) {
  test::TempDir dir;
  const fs::path path = dir / "run-x.wandb";
  auto payload = [](size_t n, char c) { return std::string(n, c); };
  // 7 (file) + 7 + 32751 leaves 3 bytes in the first block: zero padding, then block 2.
  const std::vector<std::string> payloads = {payload(32751, 'a'), payload(10, 'b'),
                                             payload(70000, 'c'), "", payload(5, 'd')};
  {
    monitor::WandbDataStore ds(path);
    for (const std::string& p : payloads)
      ds.write(p);
  }
  EXPECT_EQ(test::read_wandb_payloads(path), payloads);
  const std::string bytes = test::read_bytes(path);
  EXPECT_EQ(bytes.substr(32765, 3), std::string(3, '\0'));
  EXPECT_EQ(bytes[32768 + 6], '\x01');  // "b" is a FULL record at the start of block 2
  // 70000 bytes: FIRST in block 2, MIDDLE for block 3, LAST in block 4.
  EXPECT_EQ(bytes[32768 + 7 + 10 + 6], '\x02');
  EXPECT_EQ(bytes[2 * 32768 + 6], '\x03');
  EXPECT_EQ(bytes[3 * 32768 + 6], '\x04');
  EXPECT_THROW(monitor::WandbDataStore{path}, Error);  // never overwrites a log

  std::string corrupt = bytes;
  corrupt[40000] ^= 0x01;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << corrupt;
  EXPECT_THROW(test::read_wandb_payloads(path), std::runtime_error);
}

TEST(WandbOffline, TrainerWritesAnOfflineRunEqualToMetricsJsonl) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.steps = 4;
  c.reporting.log_every = 2;
  c.paths.out = dir / "run";
  c.reporting.wall_clock_breakdown = true;
  c.reporting.wandb.enabled = true;
  c.reporting.wandb.project = "proj";
  c.reporting.wandb.group = "grp";
  c.reporting.wandb.team = "team";
  const train::TrainSummary s = train::train(c);

  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(c.paths.out / "wandb"))
    if (e.path().filename().string().rfind("offline-run-", 0) == 0) runs.push_back(e.path());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(s.wandb_run_dir, runs[0]);
  const std::string name = runs[0].filename().string();  // offline-run-YYYYmmdd_HHMMSS-<id>
  ASSERT_EQ(name.size(), 12u + 15u + 1u + 8u) << name;
  EXPECT_EQ(name[20], '_');
  EXPECT_EQ(name[27], '-');
  const std::string id = name.substr(28);
  EXPECT_TRUE(fs::is_directory(runs[0] / "files"));
  EXPECT_EQ(fs::read_symlink(c.paths.out / "wandb" / "latest-run"), fs::path(name));

  const std::vector<std::string> payloads =
      test::read_wandb_payloads(runs[0] / str("run-", id, ".wandb"));
  std::vector<nlohmann::json> lines;
  for (const std::string& line : test::text_lines(c.paths.out / "metrics.jsonl"))
    lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_EQ(payloads.size(), 2 + 2 * lines.size() + 2);
  std::vector<std::map<int, std::vector<std::string>>> rec;
  for (size_t i = 0; i < payloads.size(); ++i) {
    rec.push_back(test::proto_fields(payloads[i]));
    EXPECT_EQ(rec[i][1], std::vector<std::string>{std::to_string(i + 1)}) << "record number";
  }
  // Header and run, each with _info.stream_id = the id.
  ASSERT_EQ(rec[0].count(21), 1u);
  EXPECT_EQ(test::proto_fields(test::proto_fields(rec[0][21][0])[1][0])[1][0], "zerotrain");
  EXPECT_EQ(test::proto_fields(rec[0][200][0])[1][0], id);
  ASSERT_EQ(rec[1].count(17), 1u);
  auto run = test::proto_fields(rec[1][17][0]);
  EXPECT_EQ(run[1][0], id);
  EXPECT_EQ(run[2][0], "team");
  EXPECT_EQ(run[3][0], "proj");
  EXPECT_EQ(run[6][0], "grp");
  EXPECT_EQ(test::proto_items(run[4][0]).at("_wandb"), "{}");
  EXPECT_GT(std::stoll(test::proto_fields(run[17][0])[1][0]), 1600000000);

  const std::vector<std::pair<std::string, std::string>> tags = {
      {"train_loss", "loss"},
      {"lr", "lr"},
      {"elapsed_time_ms_forward", "forward_ms"},
      {"elapsed_time_ms_backward", "backward_ms"},
      {"elapsed_time_ms_backward_allreduce", "comm_ms"},
      {"elapsed_time_ms_step", "step_ms"}};
  const int64_t batch = c.data.micro_batch * c.data.grad_accum;  // one rank
  for (size_t r = 0; r < lines.size(); ++r) {
    auto& history = rec[2 + 2 * r];
    auto& summary = rec[3 + 2 * r];
    ASSERT_EQ(history.count(2), 1u) << r;
    ASSERT_EQ(summary.count(3), 1u) << r;
    const auto items = test::proto_items(history[2][0]);
    EXPECT_EQ(test::proto_items(summary[3][0]), items);
    const int64_t samples = lines[r]["step"].get<int64_t>() * batch;
    EXPECT_EQ(items.at("_step"), std::to_string(samples));
    EXPECT_EQ(test::proto_fields(test::proto_fields(history[2][0])[2][0])[1][0],
              std::to_string(samples));
    EXPECT_GE(nlohmann::json::parse(items.at("_runtime")).get<double>(), 0.0);
    EXPECT_GT(nlohmann::json::parse(items.at("_timestamp")).get<double>(), 1.6e9);
    EXPECT_EQ(items.size(), tags.size() + 3);
    for (const auto& [tag, key] : tags)
      EXPECT_EQ(nlohmann::json::parse(items.at("Train/Samples/" + tag)).get<double>(),
                lines[r][key].get<double>())
          << tag;
  }
  // Exit code 0 (left out) and a final record.
  const auto& exit = rec[rec.size() - 2];
  ASSERT_EQ(exit.count(18), 1u);
  EXPECT_EQ(test::proto_fields(exit.at(18)[0]).count(1), 0u);
  EXPECT_EQ(rec.back().count(20), 1u);
}

TEST(WandbOffline, AFailingRunExitsWithCodeOne) {
  test::TempDir dir;
  fs::path log;
  try {
    monitor::WandbMonitor m(dir / "wandb", config::WandbConfig{});
    log = m.log_path();
    throw std::runtime_error("training failed");
  } catch (const std::runtime_error&) {
  }
  const std::vector<std::string> payloads = test::read_wandb_payloads(log);
  ASSERT_EQ(payloads.size(), 4u);
  auto run = test::proto_fields(test::proto_fields(payloads[1])[17][0]);
  EXPECT_EQ(run[3][0], "deepspeed");  // DeepSpeed's default project
  EXPECT_EQ(run.count(2), 0u);        // no team: no entity
  EXPECT_EQ(test::proto_fields(test::proto_fields(payloads[2])[18][0])[1][0], "1");
}

}  // namespace
}  // namespace zt
