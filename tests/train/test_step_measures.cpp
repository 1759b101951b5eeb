// What the loop measures: the MFU FLOP count for the Llama-1B shape (non-embedding parameters
// counted here from the layer shapes, independently of nn::ModelConfig) reproducing the peer's MFU
// in ../shared/DEVICE.md, GPU peaks by name, tokens/s, allocator memory and the step timer.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "zerotrain/core/error.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/train/step_measures.h"

namespace zt {
namespace {

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

TEST(TrainStepMeasures, LlamaOneBFlopsReproduceThePeerMfu) {
  const LlamaShape s;
  const int64_t n = non_embedding_params(s);
  EXPECT_EQ(n, 1235814400);  // + 262,668,288 embedding = the 1.5B of DEVICE.md's "1B shape"
  train::FlopsModel m{n, s.layers, s.heads, s.hidden / s.heads, 4096};
  const double fpt = train::flops_per_token(m);
  EXPECT_DOUBLE_EQ(fpt, 6.0 * 1235814400.0 + 12.0 * 16 * 32 * 64 * 4096);
  // The FSDP2 peer's 1-GPU run: 41,885 tokens/s at MFU 0.382 against 989 TFLOP/s.
  const double mfu = train::mfu(41885.0, fpt, 989e12);
  EXPECT_NEAR(mfu, 0.382, 0.0005);
  EXPECT_EQ(train::format_mfu(mfu), "0.382");
  m.seq_len = -1;
  EXPECT_THROW(train::flops_per_token(m), ValueError);
}

TEST(TrainStepMeasures, PeaksByDeviceName) {
  EXPECT_EQ(train::peak_bf16_flops("NVIDIA H100 80GB HBM3"), 989e12);
  EXPECT_EQ(train::peak_bf16_flops("NVIDIA H200"), 989e12);
  EXPECT_EQ(train::peak_bf16_flops("NVIDIA H100 PCIe"), 756e12);
  EXPECT_EQ(train::peak_bf16_flops("NVIDIA A100-SXM4-80GB"), 312e12);
  EXPECT_EQ(train::peak_bf16_flops("Some CPU"), 0.0);
  EXPECT_EQ(train::peak_flops_of(Device::cpu()), 0.0);
  // No known peak: MFU is not a number and prints as "-"; a given peak still works on the CPU.
  EXPECT_TRUE(std::isnan(train::mfu(1000.0, 1e9, 0.0)));
  EXPECT_EQ(train::format_mfu(train::mfu(1000.0, 1e9, 0.0)), "-");
  EXPECT_DOUBLE_EQ(train::mfu(1000.0, 1e9, 4e12), 0.25);
}

TEST(TrainStepMeasures, TokensPerSecond) {
  EXPECT_DOUBLE_EQ(train::tokens_per_second(2 * 4096, 0.5), 16384.0);
  EXPECT_DOUBLE_EQ(train::tokens_per_second(100, 0.0), 0.0);
  EXPECT_THROW(train::tokens_per_second(-1, 1.0), ValueError);
}

TEST(TrainStepMeasures, MemorySnapshotFollowsTheAllocator) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const double size_gib = 64.0 * 1024 * 1024 / kGiB;
  train::reset_peak_memory(Device::cpu());
  const train::MemorySnapshot before = train::memory_snapshot(Device::cpu());
  {
    Tensor big = Tensor::empty({16 * 1024 * 1024}, DType::f32);  // 64 MiB
    const train::MemorySnapshot during = train::memory_snapshot(Device::cpu());
    EXPECT_NEAR(during.allocated_gib - before.allocated_gib, size_gib, 1e-6);
    EXPECT_GE(during.peak_allocated_gib, during.allocated_gib);
    EXPECT_GE(during.reserved_gib, during.allocated_gib);
  }
  const train::MemorySnapshot after = train::memory_snapshot(Device::cpu());
  EXPECT_NEAR(after.allocated_gib, before.allocated_gib, 1e-6);
  EXPECT_GE(after.peak_allocated_gib - before.allocated_gib, size_gib - 1e-6);
  train::reset_peak_memory(Device::cpu());
  EXPECT_NEAR(train::memory_snapshot(Device::cpu()).peak_allocated_gib, after.allocated_gib, 1e-6);
}

TEST(TrainStepMeasures, StepTimerMeasuresLaps) {
  train::StepTimer t;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double first = t.lap();
  EXPECT_GE(first, 0.02);
  EXPECT_LT(first, 5.0);
  EXPECT_LT(t.lap(), first);  // restarted: the second lap is immediate
}

}  // namespace
}  // namespace zt
