// CUDA softmax cross-entropy against the CPU kernel and the float64 reference on the same inputs:
// f32/bf16/f16 logits, odd and real vocabulary sizes (50257, 128256), ignored rows, extreme logits,
// misaligned rows, out-of-range targets (NaN rows), fused == forward + backward bitwise, and
// run-to-run determinism. Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/reference_cross_entropy.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/cross_entropy.h"

namespace zt {
namespace {

using kernels::cross_entropy_backward;
using kernels::cross_entropy_forward;
using kernels::cross_entropy_fused;

constexpr int64_t kIgnore = -100;
const Device kGpu = Device::cuda(0);

std::vector<int64_t> make_targets(int64_t N, int64_t V, uint64_t seed) {
  std::vector<int64_t> t = test::random_ints({N}, DType::i64, seed, 0, V).to_ints();
  for (int64_t n = 1; n < N; n += 4)
    t[n] = kIgnore;
  return t;
}

test::Tolerance loss_tolerance() {
  return {2e-5, 2e-6};
}

test::Tolerance grad_tolerance(DType t) {
  switch (t) {
    case DType::f16:
      return {3.1e-8, 1.2e-3};
    case DType::bf16:
      return {1e-12, 4.5e-3};
    default:
      return {1e-12, 2e-5};
  }
}

struct Case {
  DType dtype;
  DType index;
  int64_t N, V;
};

std::string name_of(const Case& c) {
  return std::string(dtype_name(c.dtype)) + " " + std::string(dtype_name(c.index)) +
         " N=" + std::to_string(c.N) + " V=" + std::to_string(c.V);
}

// Runs forward, backward and fused on the GPU and checks them against the CPU losses and the
// float64 reference; fused must equal forward + backward bitwise.
void check_case(const Case& c, uint64_t seed, float lo = -8.f, float hi = 8.f) {
  SCOPED_TRACE(name_of(c));
  const float scale = 0.37f;
  Tensor logits = test::random_tensor({c.N, c.V}, c.dtype, seed, lo, hi);
  const std::vector<int64_t> tv = make_targets(c.N, c.V, seed + 1);
  Tensor targets = Tensor::from_ints(tv, {c.N}, c.index);
  Tensor cpu_losses = Tensor::empty({c.N}, DType::f32), cpu_lse = Tensor::empty({c.N}, DType::f32);
  cross_entropy_forward(logits, targets, cpu_losses, cpu_lse);
  const auto ref = test::cross_entropy_reference(test::to_doubles(logits), tv, c.V, kIgnore, scale);

  Tensor x = logits.to(kGpu), t = targets.to(kGpu);
  Tensor losses = Tensor::empty({c.N}, DType::f32, kGpu),
         lse = Tensor::empty({c.N}, DType::f32, kGpu);
  cross_entropy_forward(x, t, losses, lse);
  test::expect_close(test::to_doubles(cpu_losses), losses, loss_tolerance(), "losses vs cpu");
  test::expect_close(test::to_doubles(cpu_lse), lse, loss_tolerance(), "lse vs cpu");
  test::expect_close(ref.losses, losses, loss_tolerance(), "losses vs reference");

  Tensor dlogits = Tensor::empty({c.N, c.V}, c.dtype, kGpu);
  cross_entropy_backward(x, t, lse, dlogits, scale);
  test::expect_gradient_close(ref, dlogits, tv, c.V, scale, grad_tolerance(c.dtype),
                              "dlogits vs reference");

  Tensor fused = x.clone();
  Tensor fused_losses = Tensor::empty({c.N}, DType::f32, kGpu);
  cross_entropy_fused(fused, t, fused_losses, scale);
  test::expect_bitwise_equal(losses, fused_losses, "fused losses");
  test::expect_bitwise_equal(dlogits, fused, "fused gradient");
}

TEST(CrossEntropyCuda, MatchesCpuAndReference) {
  ZT_SKIP_WITHOUT_CUDA();
  uint64_t seed = 300;
  for (DType d : {DType::f32, DType::bf16, DType::f16})
    for (int64_t V : {1, 7, 1000, 50257}) {
      check_case({d, V % 2 ? DType::i32 : DType::i64, V > 10000 ? 7 : 13, V}, seed);
      seed += 2;
    }
}

TEST(CrossEntropyCuda, RealVocabularyBf16) {
  ZT_SKIP_WITHOUT_CUDA();
  check_case({DType::bf16, DType::i64, 64, 128256}, 400);
  check_case({DType::f32, DType::i32, 9, 128256}, 402);
}

TEST(CrossEntropyCuda, ExtremeLogitsStayFinite) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t N = 6, V = 50257;
  for (DType d : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(d));
    std::vector<float> x = test::random_floats(N * V, 61, -4.f, 4.f);
    for (int64_t i = 0; i < N * V; i += 3)
      x[i] = (i / 3) % 2 ? 80.f : -80.f;
    Tensor logits = Tensor::from_floats(x, {N, V}, d);
    const std::vector<int64_t> tv = {0, 1, 3, 500, 1000, 999};
    const auto ref = test::cross_entropy_reference(test::to_doubles(logits), tv, V, kIgnore, 1.0);
    Tensor t = Tensor::from_ints(tv, {N}, DType::i64, kGpu);
    Tensor g = logits.to(kGpu);
    Tensor losses = Tensor::empty({N}, DType::f32, kGpu);
    cross_entropy_fused(g, t, losses, 1.f);
    test::expect_close(ref.losses, losses, loss_tolerance(), "losses");
    test::expect_gradient_close(ref, g, tv, V, 1.0, grad_tolerance(d), "gradient");
  }
}

TEST(CrossEntropyCuda, MisalignedRowsAndBuffers) {
  ZT_SKIP_WITHOUT_CUDA();
  // Logits starting one element past a 16-byte boundary, dlogits aligned: the backward cannot
  // pair 16-byte packs of the two and takes its scalar path; the fused kernel works in place.
  for (DType d : {DType::f32, DType::bf16}) {
    SCOPED_TRACE(dtype_name(d));
    const int64_t N = 5, V = 1003;
    Tensor flat = test::random_tensor({N * V + 1}, d, 81, -8.f, 8.f, kGpu);
    Tensor logits = flat.slice(0, 1, N * V + 1).view({N, V});
    const std::vector<int64_t> tv = make_targets(N, V, 82);
    Tensor t = Tensor::from_ints(tv, {N}, DType::i32, kGpu);
    const auto ref = test::cross_entropy_reference(test::to_doubles(logits), tv, V, kIgnore, 2.0);
    Tensor losses = Tensor::empty({N}, DType::f32, kGpu),
           lse = Tensor::empty({N}, DType::f32, kGpu);
    cross_entropy_forward(logits, t, losses, lse);
    test::expect_close(ref.losses, losses, loss_tolerance(), "losses");
    Tensor dlogits = Tensor::empty({N, V}, d, kGpu);
    cross_entropy_backward(logits, t, lse, dlogits, 2.f);
    test::expect_gradient_close(ref, dlogits, tv, V, 2.0, grad_tolerance(d), "dlogits");
    cross_entropy_fused(logits, t, losses, 2.f);
    test::expect_bitwise_equal(dlogits, logits, "fused in place on the misaligned view");
  }
}

TEST(CrossEntropyCuda, OutOfRangeTargetGivesNaNRow) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t N = 4, V = 1000;
  Tensor logits = test::random_tensor({N, V}, DType::bf16, 91, -4.f, 4.f);
  Tensor bad = Tensor::from_ints({5, 1000, kIgnore, 7}, {N}, DType::i64, kGpu);
  Tensor good = Tensor::from_ints({5, kIgnore, kIgnore, 7}, {N}, DType::i64, kGpu);
  Tensor g_bad = logits.to(kGpu), g_good = logits.to(kGpu);
  Tensor l_bad = Tensor::empty({N}, DType::f32, kGpu),
         l_good = Tensor::empty({N}, DType::f32, kGpu);
  cross_entropy_fused(g_bad, bad, l_bad, 1.f);
  cross_entropy_fused(g_good, good, l_good, 1.f);
  const auto lb = l_bad.to_floats(), lg = l_good.to_floats();
  EXPECT_TRUE(std::isnan(lb[1]));
  for (int64_t n : {0, 2, 3})
    EXPECT_EQ(lb[n], lg[n]) << n;
  const auto gb = g_bad.to_floats(), gg = g_good.to_floats();
  for (int64_t i = 0; i < N * V; ++i) {
    if (i / V == 1)
      ASSERT_TRUE(std::isnan(gb[i])) << i;
    else
      ASSERT_EQ(gb[i], gg[i]) << i;
  }
  // The separate backward poisons the row the same way.
  Tensor lse = Tensor::empty({N}, DType::f32, kGpu);
  Tensor x = logits.to(kGpu), d = Tensor::empty({N, V}, DType::bf16, kGpu);
  cross_entropy_forward(x, bad, l_bad, lse);
  EXPECT_TRUE(std::isnan(l_bad.to_floats()[1]));
  cross_entropy_backward(x, bad, lse, d, 1.f);
  const auto gd = d.to_floats();
  for (int64_t i = V; i < 2 * V; ++i)
    ASSERT_TRUE(std::isnan(gd[i])) << i;
}

TEST(CrossEntropyCuda, DeterministicOnAStream) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t N = 33, V = 128256;
  CudaStream stream(kGpu);
  Tensor logits = test::random_tensor({N, V}, DType::bf16, 95, -8.f, 8.f, kGpu);
  Tensor t = Tensor::from_ints(make_targets(N, V, 96), {N}, DType::i64, kGpu);
  Tensor a = logits.clone(stream), b = logits.clone(stream);
  Tensor la = Tensor::empty({N}, DType::f32, kGpu, stream),
         lb = Tensor::empty({N}, DType::f32, kGpu, stream);
  cross_entropy_fused(a, t, la, 1.f / 25, kIgnore, stream);
  cross_entropy_fused(b, t, lb, 1.f / 25, kIgnore, stream);
  synchronize(stream);
  test::expect_bitwise_equal(a, b, "gradient");
  test::expect_bitwise_equal(la, lb, "losses");
}

}  // namespace
}  // namespace zt
