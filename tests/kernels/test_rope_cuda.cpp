// CUDA rotary position embedding against the CPU kernel and the float64 reference (packed and
// scalar paths, i32/i64 positions, long-context positions, real Llama shapes), in-place use,
// backward as the inverse of forward, per-row positions of packed rows, run-to-run bitwise equality
// and device errors. Every test
// skips without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/reference_rope.h"
#include "support/test_util.h"
#include "zerotrain/kernels/rope.h"

namespace zt {
namespace {

using kernels::rope_backward;
using kernels::rope_forward;
using kernels::rope_inv_freq;

constexpr DType kDTypes[] = {DType::f32, DType::f16, DType::bf16};

struct RopeShape {
  int64_t b, s, h, d;
};
// D/2 = 64, 1, 3, 17, 64: packed (8- or 4-wide) and scalar paths.
constexpr RopeShape kShapes[] = {
    {2, 512, 32, 128}, {1, 7, 2, 2}, {2, 3, 3, 6}, {2, 5, 3, 34}, {1, 33, 8, 128}};

std::vector<int64_t> test_positions(int64_t s, uint64_t seed) {
  std::vector<int64_t> p = test::random_ints({s}, DType::i64, seed, 0, 8192).to_ints();
  p[0] = 131071;
  return p;
}

// Forward (or backward) of x on `device`, returned on the host.
Tensor rotate_on(Device device, const Tensor& x, const Tensor& positions, const Tensor& inv,
                 bool backward) {
  Tensor xd = x.to(device), pd = positions.to(device), id = inv.to(device);
  Tensor y = Tensor::empty(x.shape(), x.dtype(), device);
  if (backward)
    rope_backward(xd, pd, id, y);
  else
    rope_forward(xd, pd, id, y);
  return y.to(Device::cpu());
}

TEST(RopeCuda, MatchesCpuAndReference) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dt : kDTypes) {
    for (const RopeShape& sh : kShapes) {
      for (DType pt : {DType::i32, DType::i64}) {
        const auto pos = test_positions(sh.s, 1 + sh.d);
        Tensor positions = Tensor::from_ints(pos, {sh.s}, pt);
        Tensor inv = rope_inv_freq(sh.d, 500000.0);
        Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, dt, 2 + sh.d);
        const std::string what =
            str(dtype_name(dt), " ", to_string(x.shape()), " ", dtype_name(pt));
        for (bool backward : {false, true}) {
          Tensor cpu = rotate_on(Device::cpu(), x, positions, inv, backward);
          Tensor gpu = rotate_on(Device::cuda(0), x, positions, inv, backward);
          const std::string w = what + (backward ? " backward" : " forward");
          test::expect_close(test::to_doubles(cpu), gpu, test::tolerance_for(dt), w + " vs cpu");
          test::expect_close(test::rope_ref(test::to_doubles(x), pos, inv.to_floats(), sh.b, sh.s,
                                            sh.h, sh.d, backward ? -1.0 : 1.0),
                             gpu, test::tolerance_for(dt), w + " vs float64");
        }
      }
    }
  }
}

// Per-row positions [B, S] (packed rows): CUDA equals the CPU kernel, and [S] positions repeated
// per row give bitwise the [S] result.
TEST(RopeCuda, PerRowPositionsMatchCpu) {
  ZT_SKIP_WITHOUT_CUDA();
  for (DType dt : kDTypes)
    for (const RopeShape& sh : kShapes) {
      std::vector<int64_t> pos = test::random_ints({sh.b * sh.s}, DType::i64, 9 + sh.d, 0, 4096)
                                     .to_ints();
      const Tensor positions = Tensor::from_ints(pos, {sh.b, sh.s}, DType::i32);
      const Tensor inv = rope_inv_freq(sh.d, 10000.0);
      const Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, dt, 4 + sh.d);
      const std::vector<int64_t> shared = test_positions(sh.s, 3);
      std::vector<int64_t> repeated;
      for (int64_t b = 0; b < sh.b; ++b)
        repeated.insert(repeated.end(), shared.begin(), shared.end());
      for (bool backward : {false, true}) {
        const std::string w = str(dtype_name(dt), " ", to_string(x.shape()),
                                  backward ? " backward" : " forward");
        test::expect_close(test::to_doubles(rotate_on(Device::cpu(), x, positions, inv, backward)),
                           rotate_on(Device::cuda(0), x, positions, inv, backward),
                           test::tolerance_for(dt), w);
        const Tensor per_row = rotate_on(Device::cuda(0), x,
                                         Tensor::from_ints(repeated, {sh.b, sh.s}, DType::i32),
                                         inv, backward);
        const Tensor one = rotate_on(Device::cuda(0), x,
                                     Tensor::from_ints(shared, {sh.s}, DType::i32), inv, backward);
        EXPECT_EQ(per_row.to_floats(), one.to_floats()) << w;
      }
    }
}

TEST(RopeCuda, InPlaceInverseAndRepeatable) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  for (DType dt : kDTypes) {
    for (const RopeShape& sh : kShapes) {
      Tensor positions = Tensor::from_ints(test_positions(sh.s, 11), {sh.s}, DType::i64, g);
      Tensor inv = rope_inv_freq(sh.d, 10000.0).to(g);
      Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, dt, 12, -1, 1, g);
      Tensor y = Tensor::empty(x.shape(), dt, g), y2 = Tensor::empty(x.shape(), dt, g),
             z = x.clone();
      rope_forward(x, positions, inv, y);
      rope_forward(x, positions, inv, y2);
      rope_forward(z, positions, inv, z);
      const std::string what = str(dtype_name(dt), " ", to_string(x.shape()));
      test::expect_bitwise_equal(y, y2, what + " repeat");
      test::expect_bitwise_equal(y, z, what + " in place");
      if (dt != DType::f32) continue;
      rope_backward(z, positions, inv, z);
      test::expect_close(test::to_doubles(x), z, {1e-6, 0}, what + " backward inverts forward");
    }
  }
}

TEST(RopeCuda, UnalignedViewUsesScalarPath) {
  ZT_SKIP_WITHOUT_CUDA();
  const Device g = Device::cuda(0);
  const RopeShape sh{2, 9, 4, 64};
  const int64_t n = sh.b * sh.s * sh.h * sh.d;
  Tensor positions = Tensor::from_ints(test_positions(sh.s, 21), {sh.s}, DType::i32);
  Tensor inv = rope_inv_freq(sh.d, 10000.0);
  Tensor x = test::random_tensor({sh.b, sh.s, sh.h, sh.d}, DType::bf16, 22);
  Tensor buf = Tensor::empty({n + 1}, DType::bf16, g);
  Tensor xu = buf.slice(0, 1, n + 1).view(x.shape());
  xu.copy_from(x.to(g));
  rope_forward(xu, positions.to(g), inv.to(g), xu);
  test::expect_bitwise_equal(rotate_on(g, x, positions, inv, false), xu.contiguous(),
                             "unaligned in place");
}

TEST(RopeCuda, MixedDevicesThrow) {
  ZT_SKIP_WITHOUT_CUDA();
  Tensor x = test::random_tensor({1, 3, 2, 8}, DType::bf16, 31, -1, 1, Device::cuda(0));
  Tensor positions = Tensor::from_ints({0, 1, 2}, {3}, DType::i64);
  Tensor inv = rope_inv_freq(8, 10000.0).to(Device::cuda(0));
  try {
    rope_forward(x, positions, inv, x);
    ADD_FAILURE() << "expected DeviceError";
  } catch (const DeviceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[rope_forward]"), std::string::npos) << m;
    EXPECT_NE(m.find("positions i64[3] on cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("on cuda:0"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace zt
