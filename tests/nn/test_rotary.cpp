// RoPE frequencies: no scaling equals the kernel's rope_inv_freq; Llama-3 scaling against a float64
// evaluation of Hugging Face's formula for the real Llama-3.1 settings (all three regimes present)
// and the tiny test config; Rotary's rotation against the float64 rotation.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "nn/nn_test_util.h"
#include "nn/reference_model.h"
#include "support/test_util.h"
#include "zerotrain/kernels/rope.h"
#include "zerotrain/nn/rotary.h"

namespace zt {
namespace {

TEST(NnRotary, UnscaledEqualsKernelHelper) {
  nn::ModelConfig c = test::tiny_config(nn::Family::qwen2);
  test::expect_bitwise_equal(nn::rope_inv_freq_for(c), kernels::rope_inv_freq(8, 1000000),
                             "inv_freq");
}

TEST(NnRotary, Llama3ScalingMatchesFloat64Formula) {
  nn::ModelConfig c = test::tiny_config(nn::Family::llama);
  c.head_dim = 128;
  c.rope_theta = 500000;
  c.rope_scaling = {8.0, 1.0, 4.0, 8192};  // Llama-3.1
  const auto f = test::to_doubles(nn::rope_inv_freq_for(c));
  const auto ref = test::reference_inv_freq(c);
  test::expect_close(ref, f, {0, 2e-6}, "llama3.1 inv_freq");
  // All three regimes occur: kept (short wavelengths), divided by 8 (long), interpolated.
  const auto plain = test::to_doubles(kernels::rope_inv_freq(128, 500000));
  int kept = 0, divided = 0, between = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const double ratio = f[i] / plain[i];
    if (std::fabs(ratio - 1) < 1e-6)
      ++kept;
    else if (std::fabs(ratio - 0.125) < 1e-6)
      ++divided;
    else
      ++between;
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(divided, 0);
  EXPECT_GT(between, 0);

  const nn::ModelConfig tiny = test::tiny_config(nn::Family::llama);
  test::expect_close(test::reference_inv_freq(tiny), nn::rope_inv_freq_for(tiny), {0, 2e-6},
                     "tiny llama3 inv_freq");
}

TEST(NnRotary, RotatesAndRotatesBack) {
  const nn::ModelConfig c = test::tiny_config(nn::Family::llama);
  nn::Rotary rot(c);
  const int64_t B = 2, S = 5, H = 3, D = c.head_dim;
  const Tensor x0 = test::random_tensor({B, S, H, D}, DType::f32, 4);
  Tensor x = x0.clone();
  rot.forward(x, {}, {});
  const auto inv = test::reference_inv_freq(c);
  const auto xv = test::to_doubles(x0);
  std::vector<double> ref(xv.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < D / 2; ++i) {
          const size_t o = static_cast<size_t>(((b * S + s) * H + h) * D + i), o2 = o + D / 2;
          const double a = s * inv[i];
          ref[o] = xv[o] * std::cos(a) - xv[o2] * std::sin(a);
          ref[o2] = xv[o2] * std::cos(a) + xv[o] * std::sin(a);
        }
  test::expect_close(ref, x, {1e-6, 1e-5}, "rotated");
  rot.backward(x, {}, {});  // the inverse rotation
  test::expect_close(xv, x, {1e-6, 1e-5}, "rotated back");
}

}  // namespace
}  // namespace zt
