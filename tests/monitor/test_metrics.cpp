// The metrics record: the JSONL line format (every field, nulls for unknowns) and the writer
// (one flushed line per step, append on resume, truncate otherwise).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <unistd.h>

#include "zerotrain/core/error.h"
#include "zerotrain/monitor/metrics.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("zt_test_metrics_" + std::to_string(::getpid()) + "_" + name);
}

TEST(MonitorMetrics, JsonLineHasEveryFieldAndNullsForUnknowns) {
  monitor::StepMetrics m;
  m.step = 12;
  m.loss = 2.5;
  m.lr = 3e-4;
  m.grad_norm = 1.25;
  m.tokens_per_s = 41885;
  m.mem_gib = 12.5;
  m.peak_mem_gib = 30.25;
  m.reserved_gib = 32;
  const std::string line = monitor::to_json_line(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("step").get<int64_t>(), 12);
  EXPECT_DOUBLE_EQ(j.at("loss").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j.at("lr").get<double>(), 3e-4);
  EXPECT_DOUBLE_EQ(j.at("grad_norm").get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(j.at("tokens_per_s").get<double>(), 41885);
  EXPECT_TRUE(j.at("mfu").is_null());  // unknown peak (NaN)
  EXPECT_DOUBLE_EQ(j.at("mem_gib").get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(j.at("peak_mem_gib").get<double>(), 30.25);
  EXPECT_DOUBLE_EQ(j.at("reserved_gib").get<double>(), 32);
  m.loss = INFINITY;
  m.mfu = 0.381952;
  const nlohmann::json k = nlohmann::json::parse(monitor::to_json_line(m));
  EXPECT_TRUE(k.at("loss").is_null());
  EXPECT_DOUBLE_EQ(k.at("mfu").get<double>(), 0.381952);
}

// Host memory adds its columns after every other one, so the existing columns keep their places.
TEST(MonitorMetrics, HostMemoryColumnsComeLast) {
  monitor::StepMetrics m;
  m.memory_peak = monitor::MemorySplitGib{};
  const auto without = monitor::metric_fields(m);
  m.host_memory = monitor::HostMemoryGib{0.25, 0.5, 0.125, 0.0625, NAN};
  const auto with = monitor::metric_fields(m);
  ASSERT_EQ(with.size(), without.size() + 5);
  for (size_t i = 0; i < without.size(); ++i)
    EXPECT_EQ(with[i].first, without[i].first);
  const std::vector<std::string> added = {"host_rss_gib", "host_peak_rss_gib", "heap_in_use_gib",
                                          "heap_arena_gib", "heap_mmap_gib"};
  for (size_t i = 0; i < added.size(); ++i)
    EXPECT_EQ(with[without.size() + i].first, added[i]);
  const nlohmann::json j = nlohmann::json::parse(monitor::to_json_line(m));
  EXPECT_DOUBLE_EQ(j.at("host_rss_gib").get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(j.at("host_peak_rss_gib").get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j.at("heap_in_use_gib").get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(j.at("heap_arena_gib").get<double>(), 0.0625);
  EXPECT_TRUE(j.at("heap_mmap_gib").is_null());
}

std::vector<nlohmann::json> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(MonitorMetrics, WriterAppendsOneLinePerStep) {
  const fs::path path = temp_path("log.jsonl");
  {
    monitor::MetricsWriter w(path);
    for (int64_t s = 1; s <= 3; ++s) {
      monitor::StepMetrics m;
      m.step = s;
      m.loss = 10.0 / static_cast<double>(s);
      w.write(m);
    }
    EXPECT_EQ(read_lines(path).size(), 3u);  // flushed as written
  }
  {
    monitor::MetricsWriter resumed(path, /*append=*/true);
    monitor::StepMetrics m;
    m.step = 4;
    resumed.write(m);
  }
  std::vector<nlohmann::json> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 4u);
  for (size_t i = 0; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].at("step").get<int64_t>(), int64_t(i + 1));
  EXPECT_DOUBLE_EQ(lines[1].at("loss").get<double>(), 5.0);
  { monitor::MetricsWriter truncating(path); }
  EXPECT_TRUE(read_lines(path).empty());
  fs::remove(path);
  EXPECT_THROW(monitor::MetricsWriter(temp_path("no_such_dir") / "log.jsonl"), Error);
}

}  // namespace
}  // namespace zt
