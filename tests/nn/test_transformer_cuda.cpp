// The Transformer on CUDA against the CPU (skipped without a GPU): f32 and bf16 losses and every
// gradient of each family on a side stream, bitwise determinism and checkpointing on the device,
// the device allocator's peak with and without checkpointing, and init_random's device
// independence. Head size 32 (a size the CUDA attention kernels are built for).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;

const Device kGpu = Device::cuda(0);

struct Pair {
  double loss_cpu, loss_gpu;
  std::vector<std::vector<double>> grads_cpu, grads_gpu;
};

Pair run_both(Family f, DType dt, Stream gpu_stream) {
  const nn::ModelConfig c = test::tiny_cuda_config(f);
  const nn::TransformerOptions cpu_opt{.param_dtype = dt, .grad_dtype = DType::f32};
  nn::TransformerOptions gpu_opt = cpu_opt;
  gpu_opt.device = kGpu;
  nn::Transformer cpu(c, cpu_opt), gpu(c, gpu_opt);
  test::randomize(cpu.parameters(), 31);
  test::set_values(gpu.parameters(), test::values_of(cpu.parameters()));
  synchronize_device(kGpu);
  Pair r;
  r.loss_cpu = test::model_loss_and_grads(cpu, test::make_step(c, 2, 24, 5, dt));
  nn::StepContext g = test::make_step(c, 2, 24, 5, dt, kGpu);
  g.stream = gpu_stream;
  r.loss_gpu = test::model_loss_and_grads(gpu, g);
  r.grads_cpu = test::grads_of(cpu.parameters());
  r.grads_gpu = test::grads_of(gpu.parameters());
  return r;
}

TEST(NnTransformerCuda, MatchesCpuF32) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream stream(kGpu);
  for (Family f : test::all_families()) {
    const Pair r = run_both(f, DType::f32, stream);
    EXPECT_NEAR(r.loss_gpu, r.loss_cpu, 1e-5 * std::fabs(r.loss_cpu)) << nn::family_name(f);
    EXPECT_LT(test::relative_l2(r.grads_gpu, r.grads_cpu), 1e-4) << nn::family_name(f);
  }
}

TEST(NnTransformerCuda, MatchesCpuBf16) {
  ZT_SKIP_WITHOUT_CUDA();
  CudaStream stream(kGpu);
  for (Family f : test::all_families()) {
    const Pair r = run_both(f, DType::bf16, stream);
    EXPECT_NEAR(r.loss_gpu, r.loss_cpu, 1e-2 * std::fabs(r.loss_cpu)) << nn::family_name(f);
    // bf16 on both sides, but the rounding points differ (fused GPU kernels, cuBLASLt's bf16
    // epilogue): measured 4.5e-2 for qwen2 on an H200, while f32 agrees to 1e-4 above.
    EXPECT_LT(test::relative_l2(r.grads_gpu, r.grads_cpu), 6e-2) << nn::family_name(f);
  }
}

TEST(NnTransformerCuda, DeterministicAndCheckpointingBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  for (Family f : test::all_families()) {
    const nn::ModelConfig c = test::tiny_cuda_config(f);
    for (DType dt : {DType::f32, DType::bf16}) {
      nn::Transformer m(c, {.param_dtype = dt, .device = kGpu});
      test::randomize(m.parameters(), 8);
      synchronize_device(kGpu);
      const nn::StepContext ctx = test::make_step(c, 2, 40, 3, dt, kGpu);
      const double l1 = test::model_loss_and_grads(m, ctx);
      std::vector<Tensor> g1;
      for (auto* p : m.parameters())
        g1.push_back(p->grad.to(Device::cpu()));
      for (bool ckpt : {false, true}) {
        const std::string what = nn::family_name(f) + " " + std::string(dtype_name(dt)) +
                                 (ckpt ? " checkpointed" : " again");
        EXPECT_EQ(test::model_loss_and_grads(m, ctx, ckpt), l1) << what;
        auto params = m.parameters();
        for (size_t i = 0; i < params.size(); ++i)
          test::expect_bitwise_equal(g1[i], params[i]->grad, what + " " + params[i]->name);
      }
    }
  }
}

TEST(NnTransformerCuda, CheckpointingLowersPeakMemory) {
  ZT_SKIP_WITHOUT_CUDA();
  nn::ModelConfig c = test::tiny_cuda_config(Family::llama);
  c.num_layers = 6;
  c.max_position_embeddings = 256;
  nn::Transformer m(c, {.param_dtype = DType::bf16, .grad_dtype = DType::f32, .device = kGpu});
  test::randomize(m.parameters(), 8);
  const nn::StepContext ctx = test::make_step(c, 4, 256, 3, DType::bf16, kGpu);
  synchronize_device(kGpu);
  Allocator& alloc = cuda_allocator(0);
  size_t peak[2];
  for (int ck = 0; ck < 2; ++ck) {
    m.zero_grads(ctx.stream);
    synchronize_device(kGpu);
    alloc.reset_peak();
    const size_t base = alloc.stats().allocated;
    nn::BlockRunner(m.blocks(), {ck == 1}).forward_backward(ctx);
    synchronize_device(kGpu);
    peak[ck] = alloc.stats().peak_allocated - base;
  }
  std::printf("[ peak    ] cuda llama bf16, 6 layers, B=4 S=256: %s plain, %s checkpointed\n",
              format_bytes(peak[0]).c_str(), format_bytes(peak[1]).c_str());
  EXPECT_LT(peak[1] * 2, peak[0]);
}

TEST(NnTransformerCuda, InitRandomIsDeviceIndependent) {
  ZT_SKIP_WITHOUT_CUDA();
  const nn::ModelConfig c = test::tiny_cuda_config(Family::gpt2);
  nn::Transformer cpu(c, {.param_dtype = DType::bf16}),
      gpu(c, {.param_dtype = DType::bf16, .device = kGpu});
  cpu.init_random(5);
  gpu.init_random(5);
  auto pc = cpu.parameters(), pg = gpu.parameters();
  for (size_t i = 0; i < pc.size(); ++i)
    test::expect_bitwise_equal(pc[i]->value, pg[i]->value, pc[i]->name);
}

}  // namespace
}  // namespace zt
