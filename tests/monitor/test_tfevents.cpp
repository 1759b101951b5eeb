// TensorBoard event files: CRC-32C against RFC 3720's vectors, the protobuf wire encoding, the
// TFRecord framing and Event records of TfEventsWriter (decoded by
// tests/monitor/tfevents_reader.h), the purge records of a resumed monitor, and a trainer run with
// the monitor on whose scalars equal metrics.jsonl at DeepSpeed's tags and sample steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "monitor/tfevents_reader.h"
#include "train/train_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/monitor/crc32.h"
#include "zerotrain/monitor/proto_wire.h"
#include "zerotrain/monitor/tensorboard_monitor.h"
#include "zerotrain/monitor/tfevents_writer.h"
#include "zerotrain/train/trainer.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> event_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) out.push_back(e.path());
  return out;
}

TEST(TfEvents, Crc32cMatchesRfc3720Vectors) {
  EXPECT_EQ(monitor::crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(monitor::crc32c(std::string(32, '\xFF')), 0x62A8AB43u);
  std::string up, down;
  for (int i = 0; i < 32; ++i) {
    up += static_cast<char>(i);
    down += static_cast<char>(31 - i);
  }
  EXPECT_EQ(monitor::crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(monitor::crc32c(down), 0x113FDB5Cu);
  EXPECT_EQ(monitor::crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(monitor::crc32c(""), 0u);
  // Continuing a CRC equals one pass over the concatenation.
  EXPECT_EQ(monitor::crc32c("56789", monitor::crc32c("1234")), 0xE3069283u);
  // The mask rotates right by 15 and adds TFRecord's constant.
  EXPECT_EQ(monitor::mask_crc32c(0u), 0xa282ead8u);
  EXPECT_EQ(monitor::mask_crc32c(0x8000u), 0xa282ead9u);
}

TEST(TfEvents, ProtoWireMatchesTheEncodingGuideExamples) {
  monitor::proto::Writer w;
  w.varint(1, 150);  // the guide's first example: 08 96 01
  EXPECT_EQ(w.data(), std::string("\x08\x96\x01", 3));
  monitor::proto::Writer s;
  s.bytes(2, "testing");
  EXPECT_EQ(s.data(), std::string("\x12\x07testing"));
  monitor::proto::Writer d;
  d.double_value(1, 1.0);  // 0x3FF0000000000000 little-endian
  EXPECT_EQ(d.data(), std::string("\x09\0\0\0\0\0\0\xF0\x3F", 9));
  monitor::proto::Writer f;
  f.float_value(2, -2.0f);  // 0xC0000000
  EXPECT_EQ(f.data(), std::string("\x15\0\0\0\xC0", 5));
  monitor::proto::Writer big;
  big.varint(3, uint64_t{1} << 63);
  EXPECT_EQ(big.data().size(), 11u);  // key + ten 7-bit groups
  EXPECT_EQ(monitor::proto::little_endian(0x0102, 3), std::string("\x02\x01\0", 3));
}

TEST(TfEvents, WriterFramesEventRecordsWithCheckedCrcs) {
  test::TempDir dir;
  fs::path path;
  {
    monitor::TfEventsWriter w(dir / "tb" / "job");
    path = w.path();
    w.add_scalar("Train/Samples/train_loss", 2.5, 8);
    w.add_scalar("Train/Samples/lr", 1e-3, 16);
    // Flushed after each record: readable while the writer is open.
    EXPECT_EQ(test::read_tfevents(path).size(), 3u);
  }
  const std::string name = path.filename().string();
  ASSERT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  EXPECT_EQ(name.substr(20, 11).find('.'), 10u) << name;  // ten digits of seconds
  EXPECT_EQ(path.parent_path(), dir / "tb" / "job");

  const std::vector<test::DecodedEvent> ev = test::read_tfevents(path);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].file_version, "brain.Event:2");
  EXPECT_EQ(ev[0].step, 0);
  EXPECT_TRUE(ev[0].scalars.empty());
  EXPECT_GT(ev[0].wall_time, 1.6e9);
  ASSERT_EQ(ev[1].scalars.size(), 1u);
  EXPECT_EQ(ev[1].scalars[0].first, "Train/Samples/train_loss");
  EXPECT_EQ(ev[1].scalars[0].second, 2.5f);
  EXPECT_EQ(ev[1].step, 8);
  EXPECT_EQ(ev[2].scalars[0].first, "Train/Samples/lr");
  EXPECT_EQ(ev[2].scalars[0].second, 1e-3f);
  EXPECT_EQ(ev[2].step, 16);
  EXPECT_GE(ev[2].wall_time, ev[0].wall_time);

  // A flipped payload byte fails the reader's CRC check.
  std::string bytes = test::read_bytes(path);
  bytes[bytes.size() - 6] ^= 0x01;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_THROW(test::read_tfevents(path), std::runtime_error);
}

TEST(TfEvents, ResumedMonitorPurgesTheStepsAfterItsCheckpoint) {
  test::TempDir dir;
  monitor::TensorBoardMonitor m(dir / "tb", 64);
  monitor::StepMetrics s;
  s.step = 5;
  s.loss = 3.0;
  s.lr = 0.5;
  m.write(s, 80);
  const std::vector<test::DecodedEvent> ev = test::read_tfevents(m.path());
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].file_version, "brain.Event:2");
  EXPECT_EQ(ev[0].step, 65);
  ASSERT_TRUE(ev[1].session_status.has_value());
  EXPECT_EQ(*ev[1].session_status, 1);  // SessionLog.START
  EXPECT_EQ(ev[1].step, 65);
  EXPECT_EQ(ev[2].scalars[0], (std::pair<std::string, float>{"Train/Samples/train_loss", 3.0f}));
  EXPECT_EQ(ev[3].scalars[0], (std::pair<std::string, float>{"Train/Samples/lr", 0.5f}));
  EXPECT_EQ(ev[3].step, 80);
}

TEST(TfEvents, UnwritableDirectoryIsAnError) {
  test::TempDir dir;
  std::ofstream(dir / "file") << "x";
  try {
    monitor::TfEventsWriter w(dir / "file" / "tb");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[tensorboard]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("file/tb"), std::string::npos) << e.what();
  }
}

TEST(TfEvents, TrainerWritesDeepSpeedsScalarsEqualToMetricsJsonl) {
  test::TempDir dir;
  train::TrainConfig c = test::tiny_train_config(dir.path(), DType::f32);
  c.steps = 4;
  c.reporting.log_every = 2;
  c.paths.out = dir / "run";
  c.reporting.tensorboard_dir = dir / "logs" / "job";
  c.reporting.wall_clock_breakdown = true;
  const train::TrainSummary s = train::train(c);
  const std::vector<fs::path> files = event_files(c.reporting.tensorboard_dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(s.tensorboard_file, files[0]);

  std::vector<nlohmann::json> lines;
  for (const std::string& line : test::text_lines(c.paths.out / "metrics.jsonl"))
    lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  const std::vector<test::DecodedEvent> ev = test::read_tfevents(files[0]);
  const std::vector<std::pair<std::string, std::string>> tags = {
      {"train_loss", "loss"},
      {"lr", "lr"},
      {"elapsed_time_ms_forward", "forward_ms"},
      {"elapsed_time_ms_backward", "backward_ms"},
      {"elapsed_time_ms_backward_allreduce", "comm_ms"},
      {"elapsed_time_ms_step", "step_ms"}};
  ASSERT_EQ(ev.size(), 1 + lines.size() * tags.size());
  EXPECT_EQ(ev[0].file_version, "brain.Event:2");
  const int64_t batch = c.data.micro_batch * c.data.grad_accum;  // one rank
  for (size_t r = 0; r < lines.size(); ++r) {
    for (size_t t = 0; t < tags.size(); ++t) {
      const test::DecodedEvent& e = ev[1 + r * tags.size() + t];
      ASSERT_EQ(e.scalars.size(), 1u);
      EXPECT_EQ(e.scalars[0].first, "Train/Samples/" + tags[t].first);
      EXPECT_EQ(e.step, lines[r]["step"].get<int64_t>() * batch);
      EXPECT_FLOAT_EQ(e.scalars[0].second, lines[r][tags[t].second].get<float>()) << tags[t].first;
    }
  }
}

}  // namespace
}  // namespace zt
