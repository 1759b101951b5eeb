// bf16 accuracy of attention's gradients with grouped-query heads (issue 32): over GQA ratios 1,
// 2, 3, 4 and 8 and head dims 64 and 128 (causal; cuDNN takes neither windows nor packed rows),
// the relative error of dQ, dK and dV against the float64 reference, for the cuDNN path and for our
// kernels (native) on the same inputs. The cuDNN path must be no less accurate than ours (within
// 10%: rounding noise between two correct orders). CUDA builds only; skipped without a GPU or
// where cuDNN cannot run.
#include <gtest/gtest.h>

#if ZT_WITH_CUDA

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/reference_attention.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/cuda/attention.h"
#include "zerotrain/kernels/cuda/cudnn_attention.h"

namespace zt {
namespace {

using kernels::AttentionOptions;
namespace kc = kernels::cuda;

struct Gradients {
  std::vector<double> dq, dk, dv;
};

// ||got - ref|| / ||ref|| (Euclidean norms).
double relative_error(const std::vector<double>& ref, const std::vector<double>& got) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

enum class Path { cudnn, native };

// The backward of `path` from our forward's out and lse (the lse is interchangeable between the
// paths, test_attention_cudnn.cpp), so only the backward differs between the two runs.
Gradients backward_on_gpu(const test::AttentionInputs& p, Path path) {
  const Device dev = Device::cuda(0);
  const Stream stream = Stream::default_for(dev);
  const auto& s = p.shape;
  const DType dt = p.q.dtype();
  const Tensor q = p.q.to(dev), k = p.k.to(dev), v = p.v.to(dev), dout = p.dout.to(dev);
  const AttentionOptions opt{static_cast<float>(s.scale), 0, {}};
  Tensor out = Tensor::empty(q.shape(), dt, dev),
         lse = Tensor::empty({s.B, s.Hq, s.S}, DType::f32, dev);
  kc::native_attention_forward(q, k, v, out, lse, opt, stream);
  Tensor dq = Tensor::empty(q.shape(), dt, dev), dk = Tensor::empty(k.shape(), dt, dev),
         dv = Tensor::empty(v.shape(), dt, dev);
  if (path == Path::cudnn)
    kc::cudnn_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, stream);
  else
    kc::native_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, stream);
  synchronize(stream);
  return {test::to_doubles(dq), test::to_doubles(dk), test::to_doubles(dv)};
}

// PROBE (issue 32 experiment, removed before landing): cuDNN's backward with K and V repeated to
// Hq heads (plain multi-head), each head's dK and dV rounded to bf16 by cuDNN, then summed over the
// group in float64 and rounded once: what a fix that sums the group outside cuDNN would reach.
float round_bf16(double x) {
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

Gradients expanded_cudnn_backward(const test::AttentionInputs& p) {
  const auto& s = p.shape;
  const int64_t G = s.Hq / s.Hkv;
  const std::vector<double> k = test::to_doubles(p.k), v = test::to_doubles(p.v);
  std::vector<float> ke(static_cast<size_t>(s.B * s.S * s.Hq * s.D)), ve(ke.size());
  for (int64_t r = 0; r < s.B * s.S; ++r)
    for (int64_t h = 0; h < s.Hq; ++h)
      for (int64_t c = 0; c < s.D; ++c) {
        ke[static_cast<size_t>((r * s.Hq + h) * s.D + c)] =
            static_cast<float>(k[static_cast<size_t>((r * s.Hkv + h / G) * s.D + c)]);
        ve[static_cast<size_t>((r * s.Hq + h) * s.D + c)] =
            static_cast<float>(v[static_cast<size_t>((r * s.Hkv + h / G) * s.D + c)]);
      }
  test::AttentionInputs e = p;
  e.k = Tensor::from_floats(ke, {s.B, s.S, s.Hq, s.D}, DType::bf16);
  e.v = Tensor::from_floats(ve, {s.B, s.S, s.Hq, s.D}, DType::bf16);
  e.shape.Hkv = s.Hq;
  Gradients full = backward_on_gpu(e, Path::cudnn);
  Gradients out{full.dq, std::vector<double>(k.size(), 0.0), std::vector<double>(v.size(), 0.0)};
  for (int64_t r = 0; r < s.B * s.S; ++r)
    for (int64_t h = 0; h < s.Hq; ++h)
      for (int64_t c = 0; c < s.D; ++c) {
        out.dk[static_cast<size_t>((r * s.Hkv + h / G) * s.D + c)] +=
            full.dk[static_cast<size_t>((r * s.Hq + h) * s.D + c)];
        out.dv[static_cast<size_t>((r * s.Hkv + h / G) * s.D + c)] +=
            full.dv[static_cast<size_t>((r * s.Hq + h) * s.D + c)];
      }
  for (double& x : out.dk)
    x = round_bf16(x);
  for (double& x : out.dv)
    x = round_bf16(x);
  return out;
}

TEST(CudnnAttentionGqaAccuracy, Bf16GradientsAreAsAccurateAsOurKernels) {
  ZT_SKIP_WITHOUT_CUDA();
  {
    Tensor probe = Tensor::zeros({1, 64, 2, 64}, DType::bf16, Device::cuda(0));
    const std::string why_not = kc::cudnn_attention_unsupported(probe, probe, {0.125f, 0, {}});
    if (!why_not.empty()) GTEST_SKIP() << "cuDNN attention cannot run here: " << why_not;
  }
  constexpr int64_t kB = 1, kS = 384, kHkv = 2;
  uint64_t seed = 9100;
  for (int64_t D : {64, 128})
    for (int64_t ratio : {1, 2, 3, 4, 8}) {
      const int64_t Hq = kHkv * ratio;
      const auto p = test::attention_inputs(kB, kS, Hq, kHkv, D, 0, DType::bf16, seed += 17);
      const test::AttentionRef ref =
          test::attention_reference(p.shape, test::to_doubles(p.q), test::to_doubles(p.k),
                                    test::to_doubles(p.v), test::to_doubles(p.dout));
      const Gradients c = backward_on_gpu(p, Path::cudnn), n = backward_on_gpu(p, Path::native);
      const std::string what = str("D=", D, " Hq/Hkv=", Hq, "/", kHkv, " S=", kS);
      const double errors[2][3] = {{relative_error(ref.dq, c.dq), relative_error(ref.dk, c.dk),
                                    relative_error(ref.dv, c.dv)},
                                   {relative_error(ref.dq, n.dq), relative_error(ref.dk, n.dk),
                                    relative_error(ref.dv, n.dv)}};
      std::printf(
          "[gqa accuracy] %s  cudnn dq %.3e dk %.3e dv %.3e  native dq %.3e dk %.3e dv %.3e\n",
          what.c_str(), errors[0][0], errors[0][1], errors[0][2], errors[1][0], errors[1][1],
          errors[1][2]);
      const Gradients x = expanded_cudnn_backward(p);
      std::printf(
          "[gqa accuracy] %s  PROBE expanded cudnn + f64 group sum: dq %.3e dk %.3e dv %.3e\n",
          what.c_str(), relative_error(ref.dq, x.dq), relative_error(ref.dk, x.dk),
          relative_error(ref.dv, x.dv));
      const char* names[3] = {"dq", "dk", "dv"};
      // Two correct summation orders differ by rounding noise; rounding each head's share before
      // the group's sum adds an error that grows with the group.
      constexpr double kNoise = 1.1;
      for (int g = 0; g < 3; ++g)
        EXPECT_LE(errors[0][g], kNoise * errors[1][g])
            << what << ": cuDNN's " << names[g] << " is less accurate than our kernels'";
    }
}

}  // namespace
}  // namespace zt

#endif  // ZT_WITH_CUDA
