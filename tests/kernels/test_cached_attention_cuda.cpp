// The CUDA KV-cache attention against the CPU kernel (its reference): prefill and single-query
// decode steps, grouped-query heads, sliding windows, head dims up to 256 (not multiples of 32
// too), a long cache, f32/f16/bf16; run-to-run bitwise equality; the head-dim limit. Every test
// skips without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/cached_attention.h"

namespace zt {
namespace {

struct Case {
  int64_t b, t, past, capacity, hq, hkv, d, window;
};

constexpr Case kCases[] = {{2, 9, 0, 12, 4, 2, 64, 0},     {1, 1, 37, 40, 8, 2, 128, 0},
                           {1, 1, 700, 1024, 4, 1, 80, 0}, {2, 5, 11, 16, 6, 3, 48, 4},
                           {1, 1, 20, 21, 2, 2, 256, 7},   {1, 3, 2, 5, 4, 4, 8, 0},
                           {1, 130, 0, 130, 2, 1, 32, 0}};

Tensor run_on(Device dev, const Tensor& q, const Tensor& k, const Tensor& v, int64_t past,
              int64_t window) {
  Tensor out = Tensor::empty(q.shape(), q.dtype(), dev);
  kernels::AttentionOptions opt;
  opt.window = window;
  kernels::cached_attention_forward(q.to(dev), k.to(dev), v.to(dev), past, out, opt);
  return out.to(Device::cpu());
}

TEST(CachedAttentionCuda, MatchesTheCpuKernel) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::f32, DType::f16, DType::bf16})
    for (const Case& c : kCases) {
      const std::string what =
          str(dtype_name(dt), " T=", c.t, " past=", c.past, " D=", c.d, " window=", c.window);
      const Tensor q = test::random_tensor({c.b, c.t, c.hq, c.d}, dt, 1);
      const Tensor k = test::random_tensor({c.b, c.capacity, c.hkv, c.d}, dt, 2);
      const Tensor v = test::random_tensor({c.b, c.capacity, c.hkv, c.d}, dt, 3);
      const Tensor ref = run_on(Device::cpu(), q, k, v, c.past, c.window);
      const Tensor got = run_on(Device::cuda(0), q, k, v, c.past, c.window);
      const double tol = dt == DType::f32 ? 1e-5 : dt == DType::f16 ? 2e-3 : 1.6e-2;
      test::expect_close(test::to_doubles(ref), got, {tol, tol}, what);
      test::expect_bitwise_equal(got, run_on(Device::cuda(0), q, k, v, c.past, c.window),
                                 what + " rerun");
    }
}

TEST(CachedAttentionCuda, RefusesHeadDimsPastTheLimit) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device dev = Device::cuda(0);
  const Tensor q = test::random_tensor({1, 1, 2, 264}, DType::f32, 1, -1, 1, dev);
  const Tensor kv = test::random_tensor({1, 4, 2, 264}, DType::f32, 2, -1, 1, dev);
  Tensor out = Tensor::empty(q.shape(), DType::f32, dev);
  EXPECT_THROW(kernels::cached_attention_forward(q, kv, kv, 0, out), ValueError);
}

}  // namespace
}  // namespace zt
