// kernels/cuda/head_groups.h against a host loop: repeating kv heads is an exact copy, summing a
// group is the f32 sum in head order rounded once; aligned (packed) and unaligned (element) forms
// agree; bad shapes are refused. CUDA builds only; skipped without a GPU.
#include <gtest/gtest.h>

#if ZT_WITH_CUDA

#include <vector>

#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/cuda/head_groups.h"

namespace zt {
namespace {

namespace kc = kernels::cuda;

TEST(HeadGroupsCuda, RepeatAndSumMatchTheHostLoop) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device dev = Device::cuda(0);
  const Stream stream = Stream::default_for(dev);
  for (DType dt : {DType::f32, DType::bf16, DType::f16})
    for (int64_t D : {64, 12})  // 12 bf16 elements: not whole 16-byte packs, the element form
      for (auto [hq, hkv] : {std::pair<int64_t, int64_t>{6, 2}, {8, 1}, {4, 4}}) {
        const int64_t B = 2, S = 5, G = hq / hkv;
        const Tensor narrow = test::random_tensor({B, S, hkv, D}, dt, 7, -1.f, 1.f);
        const Tensor wide = test::random_tensor({B, S, hq, D}, dt, 8, -1.f, 1.f);
        Tensor repeated = Tensor::empty({B, S, hq, D}, dt, dev),
               summed = Tensor::empty({B, S, hkv, D}, dt, dev);
        kc::repeat_kv_heads(narrow.to(dev), repeated, stream);
        kc::sum_head_groups(wide.to(dev), summed, stream);
        synchronize(stream);
        const std::vector<double> n = test::to_doubles(narrow), w = test::to_doubles(wide);
        std::vector<float> want_rep(static_cast<size_t>(B * S * hq * D)), want_sum(n.size());
        for (int64_t r = 0; r < B * S; ++r)
          for (int64_t h = 0; h < hq; ++h)
            for (int64_t c = 0; c < D; ++c)
              want_rep[static_cast<size_t>((r * hq + h) * D + c)] =
                  static_cast<float>(n[static_cast<size_t>((r * hkv + h / G) * D + c)]);
        for (int64_t r = 0; r < B * S; ++r)
          for (int64_t h = 0; h < hkv; ++h)
            for (int64_t c = 0; c < D; ++c) {
              float acc = 0.0f;
              for (int64_t j = 0; j < G; ++j)
                acc += static_cast<float>(w[static_cast<size_t>((r * hq + h * G + j) * D + c)]);
              want_sum[static_cast<size_t>((r * hkv + h) * D + c)] = acc;
            }
        const std::string what = str(dtype_name(dt), " D=", D, " ", hq, "/", hkv);
        test::expect_bitwise_equal(Tensor::from_floats(want_rep, {B, S, hq, D}, dt),
                                   repeated.to(Device::cpu()), what + " repeat");
        test::expect_bitwise_equal(Tensor::from_floats(want_sum, {B, S, hkv, D}, dt),
                                   summed.to(Device::cpu()), what + " sum");
      }
}

TEST(HeadGroupsCuda, RefusesHeadsThatDoNotGroup) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device dev = Device::cuda(0);
  Tensor kv = Tensor::zeros({1, 4, 3, 8}, DType::bf16, dev),
         wide = Tensor::zeros({1, 4, 4, 8}, DType::bf16, dev);
  EXPECT_THROW(kc::repeat_kv_heads(kv, wide, Stream::default_for(dev)), ShapeError);
  EXPECT_THROW(kc::sum_head_groups(wide, kv, Stream::default_for(dev)), ShapeError);
}

}  // namespace
}  // namespace zt

#endif  // ZT_WITH_CUDA
