// Metrics: the MFU FLOP count for the Llama-1B shape (non-embedding parameters counted here from
// the layer shapes, independently of nn::ModelConfig) reproducing the peer's MFU in
// ../shared/DEVICE.md, GPU peaks by name, tokens/s, allocator memory, the JSONL line format
// and writer, and the step timer.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "zerotrain/core/tensor.h"
#include "zerotrain/monitor/metrics.h"

namespace zt {
namespace {

namespace fs = std::filesystem;

// Llama-3.2-1B-shaped model of DEVICE.md: hidden 2048, 16 layers, 32 heads, 8 kv heads,
// intermediate 8192, vocab 128256, untied embeddings.
struct LlamaShape {
  int64_t hidden = 2048, layers = 16, heads = 32, kv_heads = 8, inter = 8192, vocab = 128256;
};

// Every weight outside the input embedding: attention q/k/v/o, the SwiGLU MLP, two RMSNorms per
// layer, the final norm and the untied lm_head.
int64_t non_embedding_params(const LlamaShape& s) {
  const int64_t head_dim = s.hidden / s.heads;
  const int64_t q = s.hidden * s.heads * head_dim, kv = 2 * s.hidden * s.kv_heads * head_dim;
  const int64_t o = s.heads * head_dim * s.hidden;
  const int64_t mlp = 3 * s.hidden * s.inter;
  const int64_t norms = 2 * s.hidden;
  return s.layers * (q + kv + o + mlp + norms) + s.hidden + s.vocab * s.hidden;
}

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("zt_test_metrics_" + std::to_string(::getpid()) + "_" + name);
}

TEST(TrainMetrics, LlamaOneBFlopsReproduceThePeerMfu) {
  const LlamaShape s;
  const int64_t n = non_embedding_params(s);
  EXPECT_EQ(n, 1235814400);  // + 262,668,288 embedding = the 1.5B of DEVICE.md's "1B shape"
  monitor::FlopsModel m{n, s.layers, s.heads, s.hidden / s.heads, 4096};
  const double fpt = monitor::flops_per_token(m);
  EXPECT_DOUBLE_EQ(fpt, 6.0 * 1235814400.0 + 12.0 * 16 * 32 * 64 * 4096);
  // The FSDP2 peer's 1-GPU run: 41,885 tokens/s at MFU 0.382 against 989 TFLOP/s.
  const double mfu = monitor::mfu(41885.0, fpt, 989e12);
  EXPECT_NEAR(mfu, 0.382, 0.0005);
  EXPECT_EQ(monitor::format_mfu(mfu), "0.382");
  m.seq_len = -1;
  EXPECT_THROW(monitor::flops_per_token(m), ValueError);
}

TEST(TrainMetrics, PeaksByDeviceName) {
  EXPECT_EQ(monitor::peak_bf16_flops("NVIDIA H100 80GB HBM3"), 989e12);
  EXPECT_EQ(monitor::peak_bf16_flops("NVIDIA H200"), 989e12);
  EXPECT_EQ(monitor::peak_bf16_flops("NVIDIA H100 PCIe"), 756e12);
  EXPECT_EQ(monitor::peak_bf16_flops("NVIDIA A100-SXM4-80GB"), 312e12);
  EXPECT_EQ(monitor::peak_bf16_flops("Some CPU"), 0.0);
  EXPECT_EQ(monitor::peak_flops_of(Device::cpu()), 0.0);
  // No known peak: MFU is not a number and prints as "-"; a given peak still works on the CPU.
  EXPECT_TRUE(std::isnan(monitor::mfu(1000.0, 1e9, 0.0)));
  EXPECT_EQ(monitor::format_mfu(monitor::mfu(1000.0, 1e9, 0.0)), "-");
  EXPECT_DOUBLE_EQ(monitor::mfu(1000.0, 1e9, 4e12), 0.25);
}

TEST(TrainMetrics, TokensPerSecond) {
  EXPECT_DOUBLE_EQ(monitor::tokens_per_second(2 * 4096, 0.5), 16384.0);
  EXPECT_DOUBLE_EQ(monitor::tokens_per_second(100, 0.0), 0.0);
  EXPECT_THROW(monitor::tokens_per_second(-1, 1.0), ValueError);
}

TEST(TrainMetrics, MemorySnapshotFollowsTheAllocator) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double size_gib = 64.0 * 1024 * 1024 / kGiB;
  monitor::reset_peak_memory(Device::cpu());
  const monitor::MemorySnapshot before = monitor::memory_snapshot(Device::cpu());
  {
    Tensor big = Tensor::empty({16 * 1024 * 1024}, DType::f32);  // 64 MiB
    const monitor::MemorySnapshot during = monitor::memory_snapshot(Device::cpu());
    EXPECT_NEAR(during.allocated_gib - before.allocated_gib, size_gib, 1e-6);
    EXPECT_GE(during.peak_allocated_gib, during.allocated_gib);
    EXPECT_GE(during.reserved_gib, during.allocated_gib);
  }
  const monitor::MemorySnapshot after = monitor::memory_snapshot(Device::cpu());
  EXPECT_NEAR(after.allocated_gib, before.allocated_gib, 1e-6);
  EXPECT_GE(after.peak_allocated_gib - before.allocated_gib, size_gib - 1e-6);
  monitor::reset_peak_memory(Device::cpu());
  EXPECT_NEAR(monitor::memory_snapshot(Device::cpu()).peak_allocated_gib, after.allocated_gib, 1e-6);
}

TEST(TrainMetrics, JsonLineHasEveryFieldAndNullsForUnknowns) {
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

std::vector<nlohmann::json> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(TrainMetrics, WriterAppendsOneLinePerStep) {
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

TEST(TrainMetrics, StepTimerMeasuresLaps) {
  monitor::StepTimer t;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double first = t.lap();
  EXPECT_GE(first, 0.02);
  EXPECT_LT(first, 5.0);
  EXPECT_LT(t.lap(), first);  // restarted: the second lap is immediate
}

}  // namespace
}  // namespace zt
