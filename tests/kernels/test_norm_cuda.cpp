// CUDA RMSNorm and LayerNorm against the CPU kernels and the float64 reference (register and
// generic paths: widths 1 to 10000, unaligned views, real 4096 x 4096 size), the Hugging Face
// rounding order, accumulation, in-place dx, empty batches, run-to-run bitwise equality and
// device errors. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "kernels/reference_norm.h"
#include "support/test_util.h"
#include "zerotrain/core/stream.h"
#include "zerotrain/kernels/norm.h"

namespace zt {
namespace {

using kernels::layernorm_backward;
using kernels::layernorm_forward;
using kernels::rmsnorm_backward;
using kernels::rmsnorm_forward;

constexpr float kEps = 1e-5f;
constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};
// Register path up to 8192 (1000 and 10000 are not; 10000 is too wide for it).
constexpr int64_t kWidths[] = {1, 33, 1000, 2048, 4096, 8192, 10000};

struct NormRun {
  Tensor y, mean, rstd, dx, dw, db;  // host copies
};

// Forward then backward of RMSNorm (rms) or LayerNorm on `device`; inputs and results on the host.
// b undefined: LayerNorm without bias. dw0/db0 given: accumulate into copies of them.
NormRun run_norm(bool rms, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& dy,
                 Device device, DType grad_dtype, const Tensor& dw0 = {}, const Tensor& db0 = {}) {
  const int64_t n = x.size(0), c = x.size(1);
  std::optional<CudaStream> owned;  // a non-default stream for the GPU run
  if (device.is_cuda()) owned.emplace(device);
  const Stream s = owned ? owned->get() : Stream{};
  Tensor xd = x.to(device, s), wd = w.to(device, s), dyd = dy.to(device, s);
  Tensor bd = b.defined() ? b.to(device, s) : Tensor();
  Tensor y = Tensor::empty({n, c}, x.dtype(), device, s),
         dx = Tensor::empty({n, c}, x.dtype(), device, s);
  Tensor mean = Tensor::empty({n}, DType::f32, device, s),
         rstd = Tensor::empty({n}, DType::f32, device, s);
  const bool acc = dw0.defined();
  Tensor dw = acc ? dw0.to(device, s).clone(s) : Tensor::empty({c}, grad_dtype, device, s);
  Tensor db;
  if (!rms && b.defined())
    db = acc ? db0.to(device, s).clone(s) : Tensor::empty({c}, grad_dtype, device, s);
  if (rms) {
    rmsnorm_forward(xd, wd, y, rstd, kEps, s);
    rmsnorm_backward(xd, wd, rstd, dyd, dx, dw, acc, s);
  } else {
    layernorm_forward(xd, wd, bd, y, mean, rstd, kEps, s);
    layernorm_backward(xd, wd, mean, rstd, dyd, dx, dw, db, acc, s);
  }
  synchronize(s);
  auto host = [&](const Tensor& t) { return t.defined() ? t.to(Device::cpu(), s) : Tensor(); };
  NormRun r{host(y), rms ? Tensor() : host(mean), host(rstd), host(dx), host(dw), host(db)};
  synchronize(s);
  return r;
}

std::string label(bool rms, DType dt, int64_t n, int64_t c) {
  return str(rms ? "rms " : "ln ", dtype_name(dt), " [", n, ", ", c, "]");
}

void expect_runs_close(const NormRun& want, const NormRun& got, bool rms, DType dt, DType gt,
                       const std::string& what) {
  const int64_t n = want.dx.size(0);
  test::expect_close(test::to_doubles(want.y), got.y, test::tolerance_for(dt), what + " y");
  test::expect_close(test::to_doubles(want.rstd), got.rstd, {1e-6, 1e-5}, what + " rstd");
  if (!rms) test::expect_close(test::to_doubles(want.mean), got.mean, {1e-6, 1e-5}, what + " mean");
  test::expect_close(test::to_doubles(want.dx), got.dx, test::tolerance_for(dt), what + " dx");
  // f32 sums over n rows in a different order than the CPU's float64 ones.
  const test::Tolerance gtol = gt == DType::f32
                                   ? test::Tolerance{2e-6 * static_cast<double>(n), 1e-4}
                                   : test::tolerance_for(gt);
  test::expect_close(test::to_doubles(want.dw), got.dw, gtol, what + " dw");
  if (want.db.defined()) test::expect_close(test::to_doubles(want.db), got.db, gtol, what + " db");
}

TEST(NormCuda, MatchesCpuAndReference) {
  ZT_SKIP_WITHOUT_CUDA();
  for (bool rms : {true, false}) {
    for (DType dt : kDTypes) {
      for (int64_t c : kWidths) {
        const int64_t n = c >= 2048 ? 24 : 67;
        Tensor x = test::random_tensor({n, c}, dt, 1 + c, -1.0f, 2.0f);
        Tensor w = test::random_tensor({c}, dt, 2 + c, 0.5f, 1.5f);
        Tensor b = test::random_tensor({c}, dt, 3 + c);
        Tensor dy = test::random_tensor({n, c}, dt, 4 + c);
        for (DType gt : {DType::f32, dt}) {
          const std::string what = label(rms, dt, n, c) + " grads " + std::string(dtype_name(gt));
          NormRun cpu = run_norm(rms, x, w, b, dy, Device::cpu(), gt);
          NormRun gpu = run_norm(rms, x, w, b, dy, Device::cuda(0), gt);
          expect_runs_close(cpu, gpu, rms, dt, gt, what);
          if (gt != DType::f32) continue;
          const auto xd = test::to_doubles(x), wd = test::to_doubles(w);
          auto fwd = test::norm_forward_ref(
              rms, xd, wd, rms ? std::vector<double>{} : test::to_doubles(b), n, c, kEps);
          auto bwd = test::norm_backward_ref(rms, xd, wd, test::to_doubles(dy), n, c, kEps);
          test::expect_close(fwd.y, gpu.y, test::tolerance_for(dt), what + " y vs float64");
          test::expect_close(bwd.dx, gpu.dx, test::tolerance_for(dt), what + " dx vs float64");
          test::expect_close(bwd.dw, gpu.dw, {2e-6 * static_cast<double>(n), 1e-4},
                             what + " dw vs float64");
        }
      }
    }
  }
}

TEST(NormCuda, RealSizeMatchesCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  const int64_t n = 4096, c = 4096;
  Tensor x = test::random_tensor({n, c}, DType::bf16, 11, -2.0f, 2.0f);
  Tensor w = test::random_tensor({c}, DType::bf16, 12, 0.5f, 1.5f);
  Tensor b = test::random_tensor({c}, DType::bf16, 13);
  Tensor dy = test::random_tensor({n, c}, DType::bf16, 14);
  for (bool rms : {true, false}) {
    NormRun cpu = run_norm(rms, x, w, b, dy, Device::cpu(), DType::f32);
    NormRun gpu = run_norm(rms, x, w, b, dy, Device::cuda(0), DType::f32);
    expect_runs_close(cpu, gpu, rms, DType::bf16, DType::f32, label(rms, DType::bf16, n, c));
  }
}

TEST(NormCuda, LayerNormWithoutBias) {
  ZT_SKIP_WITHOUT_CUDA();
  for (int64_t c : {1000, 4096}) {
    const int64_t n = 33;
    Tensor x = test::random_tensor({n, c}, DType::bf16, 21);
    Tensor w = test::random_tensor({c}, DType::bf16, 22, 0.5f, 1.5f);
    Tensor dy = test::random_tensor({n, c}, DType::bf16, 23);
    NormRun cpu = run_norm(false, x, w, Tensor(), dy, Device::cpu(), DType::f32);
    NormRun gpu = run_norm(false, x, w, Tensor(), dy, Device::cuda(0), DType::f32);
    expect_runs_close(cpu, gpu, false, DType::bf16, DType::f32,
                      label(false, DType::bf16, n, c) + " no bias");
  }
}

TEST(NormCuda, RmsBf16FollowsHuggingFaceRoundingOrder) {
  ZT_SKIP_WITHOUT_CUDA();
  for (int64_t c : {1000, 4096}) {  // generic and register paths
    const int64_t n = 16;
    Tensor x = test::random_tensor({n, c}, DType::bf16, 31, -3.0f, 3.0f);
    Tensor w = test::random_tensor({c}, DType::bf16, 32, 0.5f, 1.5f);
    NormRun gpu = run_norm(true, x, w, Tensor(), x, Device::cuda(0), DType::f32);
    const auto xs = x.to_floats(), ws = w.to_floats(), ys = gpu.y.to_floats(),
               rs = gpu.rstd.to_floats();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j) {
        const size_t k = static_cast<size_t>(i * c + j);
        const float t = static_cast<float>(bf16(xs[k] * rs[static_cast<size_t>(i)]));
        ASSERT_EQ(ys[k], static_cast<float>(bf16(ws[static_cast<size_t>(j)] * t)))
            << "c " << c << " element " << k;
      }
  }
}

TEST(NormCuda, AccumulatesIntoGradients) {
  ZT_SKIP_WITHOUT_CUDA();
  for (int64_t c : {1000, 4096}) {
    for (DType gt : {DType::f32, DType::bf16}) {
      const int64_t n = 50;
      Tensor x = test::random_tensor({n, c}, DType::bf16, 41);
      Tensor w = test::random_tensor({c}, DType::bf16, 42, 0.5f, 1.5f);
      Tensor b = test::random_tensor({c}, DType::bf16, 43);
      Tensor dy = test::random_tensor({n, c}, DType::bf16, 44);
      Tensor dw0 = test::random_tensor({c}, gt, 45), db0 = test::random_tensor({c}, gt, 46);
      for (bool rms : {true, false}) {
        NormRun cpu = run_norm(rms, x, w, b, dy, Device::cpu(), gt, dw0, db0);
        NormRun gpu = run_norm(rms, x, w, b, dy, Device::cuda(0), gt, dw0, db0);
        expect_runs_close(cpu, gpu, rms, DType::bf16, gt,
                          label(rms, DType::bf16, n, c) + " accumulate");
      }
    }
  }
}

TEST(NormCuda, RepeatsBitwise) {
  ZT_SKIP_WITHOUT_CUDA();
  for (int64_t c : {1000, 4096, 10000}) {
    const int64_t n = 2048;
    Tensor x = test::random_tensor({n, c}, DType::bf16, 51);
    Tensor w = test::random_tensor({c}, DType::bf16, 52, 0.5f, 1.5f);
    Tensor b = test::random_tensor({c}, DType::bf16, 53);
    Tensor dy = test::random_tensor({n, c}, DType::bf16, 54);
    for (bool rms : {true, false}) {
      NormRun a = run_norm(rms, x, w, b, dy, Device::cuda(0), DType::f32);
      NormRun r = run_norm(rms, x, w, b, dy, Device::cuda(0), DType::f32);
      const std::string what = label(rms, DType::bf16, n, c);
      test::expect_bitwise_equal(a.y, r.y, what + " y");
      test::expect_bitwise_equal(a.dx, r.dx, what + " dx");
      test::expect_bitwise_equal(a.dw, r.dw, what + " dw");
      if (!rms) test::expect_bitwise_equal(a.db, r.db, what + " db");
    }
  }
}

TEST(NormCuda, EmptyBatchZeroesOrKeepsGradients) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  const int64_t c = 4096;
  Tensor x = Tensor::empty({0, c}, DType::bf16, g), dx = Tensor::empty({0, c}, DType::bf16, g);
  Tensor rstd = Tensor::empty({0}, DType::f32, g),
         w = test::random_tensor({c}, DType::bf16, 61, -1, 1, g);
  Tensor dw = test::random_tensor({c}, DType::f32, 62, -1, 1, g);
  const auto before = test::to_doubles(dw);
  rmsnorm_backward(x, w, rstd, x, dx, dw, /*accumulate=*/true);
  test::expect_close(before, dw, {0, 0}, "accumulate over no rows");
  rmsnorm_backward(x, w, rstd, x, dx, dw, /*accumulate=*/false);
  test::expect_close(std::vector<double>(c, 0.0), dw, {0, 0}, "overwrite over no rows");
}

TEST(NormCuda, InPlaceAndUnalignedInputs) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  for (int64_t c : {1000, 4096}) {
    const int64_t n = 40;
    Tensor x = test::random_tensor({n, c}, DType::bf16, 71);
    Tensor w = test::random_tensor({c}, DType::bf16, 72, 0.5f, 1.5f);
    Tensor b = test::random_tensor({c}, DType::bf16, 73);
    Tensor dy = test::random_tensor({n, c}, DType::bf16, 74);
    NormRun cpu = run_norm(false, x, w, b, dy, Device::cpu(), DType::f32);
    NormRun ref = run_norm(false, x, w, b, dy, g, DType::f32);
    // x and dy at an odd element offset (not 16-byte aligned): the generic kernels.
    Tensor buf = Tensor::empty({2, n * c + 1}, DType::bf16, g);
    Tensor xu = buf.select(0, 0).slice(0, 1, n * c + 1).view({n, c});
    Tensor dyu = buf.select(0, 1).slice(0, 1, n * c + 1).view({n, c});
    xu.copy_from(x.to(g));
    dyu.copy_from(dy.to(g));
    Tensor wg = w.to(g), bg = b.to(g), y = Tensor::empty({n, c}, DType::bf16, g);
    Tensor mean = Tensor::empty({n}, DType::f32, g), rstd = Tensor::empty({n}, DType::f32, g);
    Tensor dw = Tensor::empty({c}, DType::f32, g), db = Tensor::empty({c}, DType::f32, g);
    layernorm_forward(xu, wg, bg, y, mean, rstd, kEps);
    layernorm_backward(xu, wg, mean, rstd, dyu, dyu, dw, db);  // dx written over dy
    NormRun got{y.to(Device::cpu()),    mean.to(Device::cpu()),
                rstd.to(Device::cpu()), dyu.contiguous().to(Device::cpu()),
                dw.to(Device::cpu()),   db.to(Device::cpu())};
    expect_runs_close(cpu, got, false, DType::bf16, DType::f32, str("unaligned in-place c ", c));
    // In place on aligned memory: the same bits as out of place.
    Tensor xg = x.to(g), dyg = dy.to(g);
    layernorm_forward(xg, wg, bg, y, mean, rstd, kEps);
    layernorm_backward(xg, wg, mean, rstd, dyg, dyg, dw, db);
    test::expect_bitwise_equal(ref.dx, dyg, str("aligned in-place dx c ", c));
    test::expect_bitwise_equal(ref.dw, dw, str("aligned in-place dw c ", c));
  }
}

TEST(NormCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor x = test::random_tensor({4, 8}, DType::bf16, 81, -1, 1, Device::cuda(0));
  Tensor w = test::random_tensor({8}, DType::bf16, 82);
  Tensor y = Tensor::empty({4, 8}, DType::bf16, Device::cuda(0));
  Tensor rstd = Tensor::empty({4}, DType::f32, Device::cuda(0));
  try {
    rmsnorm_forward(x, w, y, rstd, kEps);
    ADD_FAILURE() << "expected DeviceError";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[rmsnorm_forward]"), std::string::npos) << m;
    EXPECT_NE(m.find("w bf16[8] on cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("x bf16[4, 8] on cuda:0"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace zt
