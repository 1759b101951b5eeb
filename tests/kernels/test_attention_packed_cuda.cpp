// CUDA attention over packed rows (AttentionOptions::doc_starts) against the CPU kernel on the same
// inputs: documents of 1 to a few hundred tokens crossing the 64/128-token tiles, window on and
// off, f16/bf16 (tensor cores) and f32, head dims 32/64/128; and a packed run of one document per
// row bitwise equal to the unpacked run of our kernels (packed rows never go to cuDNN, which
// ZT_ATTENTION=auto gives the unpacked case). Skips without a GPU. CPU: test_attention_packed.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/reference_attention.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/attention.h"
#if ZT_WITH_CUDA
#include "zerotrain/kernels/cuda/attention.h"
#endif

namespace zt {
namespace {

using kernels::AttentionOptions;

struct Results {
  Tensor out, lse, dq, dk, dv;  // on the host
};

enum class Path { front_end, our_cuda_kernels };

// Forward then backward on `dev` (doc_starts moved there); results copied back to the host.
// Path::our_cuda_kernels calls our CUDA kernels directly, whatever ZT_ATTENTION picks.
Results run_on(const test::AttentionInputs& p, Device dev, AttentionOptions opt,
               Path path = Path::front_end) {
  const DType dt = p.q.dtype();
  const auto& s = p.shape;
  if (opt.doc_starts.defined()) opt.doc_starts = opt.doc_starts.to(dev);
  Tensor q = p.q.to(dev), k = p.k.to(dev), v = p.v.to(dev), dout = p.dout.to(dev);
  Tensor out = Tensor::empty(q.shape(), dt, dev);
  Tensor lse = Tensor::empty({s.B, s.Hq, s.S}, DType::f32, dev);
  Tensor dq = Tensor::empty(q.shape(), dt, dev), dk = Tensor::empty(k.shape(), dt, dev),
         dv = Tensor::empty(v.shape(), dt, dev);
  if (path == Path::front_end) {
    kernels::attention_forward(q, k, v, out, lse, opt);
    kernels::attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt);
  } else {
#if ZT_WITH_CUDA
    opt.scale = 1.0f / std::sqrt(static_cast<float>(s.D));  // the front-end's default, resolved
    kernels::cuda::native_attention_forward(q, k, v, out, lse, opt, Stream{});
    kernels::cuda::native_attention_backward(q, k, v, out, lse, dout, dq, dk, dv, opt, Stream{});
#endif
  }
  synchronize(Stream{});
  return {out.to(Device::cpu()), lse.to(Device::cpu()), dq.to(Device::cpu()), dk.to(Device::cpu()),
          dv.to(Device::cpu())};
}

// As test_attention_cuda.cpp: half types within 2% of the output's scale, f32 within 2e-5.
void expect_close_scaled(const Tensor& ref, const Tensor& got, DType dt, const std::string& what) {
  const std::vector<double> r = test::to_doubles(ref);
  double m = 0.1;
  for (double v : r)
    m = std::max(m, std::fabs(v));
  const double rel = dt == DType::f32 ? 2e-5 : 2e-2;
  test::expect_close(r, got, {rel * m, rel}, what);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

class AttentionPackedCuda : public ::testing::TestWithParam<DType> {};

TEST_P(AttentionPackedCuda, MatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const DType dt = GetParam();
  // Row 0: short documents, one of a single token; row 1: boundaries just off the tile edges.
  const std::vector<std::vector<int64_t>> lengths = {{1, 30, 3, 97, 1, 68}, {63, 66, 71}};
  const int64_t S = 200;
  const std::vector<int64_t> starts = test::packed_doc_starts(lengths);
  uint64_t seed = 700;
  for (int64_t D : {32, 64, 128})
    for (int64_t window : {0, 37}) {
      const auto p = test::attention_inputs(2, S, 8, 2, D, window, dt, seed += 7);
      AttentionOptions opt;
      opt.window = window;
      opt.doc_starts = Tensor::from_ints(starts, {2, S}, DType::i32);
      const Results gpu = run_on(p, Device::cuda(0), opt), cpu = run_on(p, Device::cpu(), opt);
      const std::string what = str(dtype_name(dt), " D=", D, " window=", window);
      expect_close_scaled(cpu.out, gpu.out, dt, what + " out");
      test::expect_close(test::to_doubles(cpu.lse), gpu.lse, {2e-4, 1e-4}, what + " lse");
      expect_close_scaled(cpu.dq, gpu.dq, dt, what + " dq");
      expect_close_scaled(cpu.dk, gpu.dk, dt, what + " dk");
      expect_close_scaled(cpu.dv, gpu.dv, dt, what + " dv");
    }
}

TEST_P(AttentionPackedCuda, OneDocumentPerRowMatchesUnpackedBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  const DType dt = GetParam();
  const auto p = test::attention_inputs(2, 150, 4, 2, 64, 0, dt, 77);
  AttentionOptions opt;
  opt.doc_starts = Tensor::from_ints(std::vector<int64_t>(300, 0), {2, 150}, DType::i32);
  const Results packed = run_on(p, Device::cuda(0), opt),
                plain = run_on(p, Device::cuda(0), {}, Path::our_cuda_kernels);
  EXPECT_TRUE(same_bytes(packed.out, plain.out));
  EXPECT_TRUE(same_bytes(packed.lse, plain.lse));
  EXPECT_TRUE(same_bytes(packed.dq, plain.dq));
  EXPECT_TRUE(same_bytes(packed.dk, plain.dk));
  EXPECT_TRUE(same_bytes(packed.dv, plain.dv));
}

INSTANTIATE_TEST_SUITE_P(Attention, AttentionPackedCuda,
                         ::testing::Values(DType::f32, DType::f16, DType::bf16),
                         [](const ::testing::TestParamInfo<DType>& p) {
                           return std::string(dtype_name(p.param));
                         });

}  // namespace
}  // namespace zt
