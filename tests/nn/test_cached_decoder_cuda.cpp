// The cached decoder on CUDA against the same model's cached decoder on the CPU in the same dtype
// (skipped without a GPU): a prefill then token-by-token logits of every family in f32 (tight) and
// bf16 (bf16 on both sides, rounded at different points), on a side stream; greedy generation
// equal in f32. Head size 32.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/nn/cached_decoder.h"
#include "zerotrain/nn/generation.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

using nn::Family;

const Device kGpu = Device::cuda(0);

// Logits of a prefill of 6 tokens, then one token at a time up to 20, as float64 rows.
std::vector<std::vector<double>> decode_logits(nn::Transformer& m, const Tensor& tokens,
                                               Stream stream) {
  nn::CachedDecoder d(m.config());
  d.use_values_of(m);
  const Device dev = m.options().device;
  nn::KvCache cache = d.make_cache(1, tokens.size(1), stream);
  std::vector<std::vector<double>> out;
  const Tensor on_dev = tokens.to(dev, stream);
  out.push_back(
      test::to_doubles(d.forward(on_dev.slice(1, 0, 6).contiguous(stream), cache, false, stream)));
  for (int64_t i = 6; i < tokens.size(1); ++i)
    out.push_back(test::to_doubles(
        d.forward(on_dev.slice(1, i, i + 1).contiguous(stream), cache, true, stream)));
  return out;
}

void expect_gpu_matches_cpu(DType dt, double tolerance) {
  CudaStream stream(kGpu);
  for (Family f : test::all_families()) {
    const nn::ModelConfig c = test::tiny_cuda_config(f);
    nn::TransformerOptions cpu_opt{.param_dtype = dt, .grad_dtype = dt};
    cpu_opt.allocate_grads = false;
    nn::TransformerOptions gpu_opt = cpu_opt;
    gpu_opt.device = kGpu;
    nn::Transformer cpu(c, cpu_opt), gpu(c, gpu_opt);
    test::randomize(cpu.parameters(), 41);
    test::set_values(gpu.parameters(), test::values_of(cpu.parameters()));
    synchronize_device(kGpu);
    const Tensor tokens = test::random_ints({1, 20}, DType::i32, 3, 0, c.vocab_size);
    const auto want = decode_logits(cpu, tokens, {});
    const auto got = decode_logits(gpu, tokens, stream);
    EXPECT_LT(test::relative_l2(got, want), tolerance)
        << nn::family_name(f) << " " << dtype_name(dt);
    if (dt != DType::f32) continue;
    nn::CachedDecoder dc(c), dg(c);
    dc.use_values_of(cpu);
    dg.use_values_of(gpu);
    nn::GenerationOptions o;
    o.max_new_tokens = 12;
    const std::vector<int64_t> prompt{1, 5, 9, 2};
    EXPECT_EQ(nn::generate(dg, prompt, o, {}, stream).tokens, nn::generate(dc, prompt, o).tokens)
        << nn::family_name(f);
  }
}

TEST(CachedDecoderCuda, MatchesCpuF32) {
  ZT_SKIP_WITHOUT_CUDA();
  expect_gpu_matches_cpu(DType::f32, 1e-5);  // measured at most 1.4e-6 on an H100
}

TEST(CachedDecoderCuda, MatchesCpuBf16) {
  ZT_SKIP_WITHOUT_CUDA();
  expect_gpu_matches_cpu(DType::bf16, 2e-2);  // measured at most 4.6e-3 (llama) on an H100
}

}  // namespace
}  // namespace zt
