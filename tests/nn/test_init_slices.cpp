// nn::init's element ranges ([Note: init slices] in src/zerotrain/nn/init.h): any range of a
// parameter's init, generated on its own, equals bitwise that range of the whole (odd and even
// ends, empty ranges, the gpt2 c_proj scaling, biases and norms) and, in any dtype, the whole
// init rounded; the weights are the parameter's normal stream scaled; bad ranges are ValueErrors.
// The kernels' own ranges: tests/kernels/test_random_normal.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/kernels/philox.h"
#include "zerotrain/kernels/random_normal.h"
#include "zerotrain/nn/init.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

// memcmp's pointers must not be null even for n == 0 (an empty vector's data() may be).
bool same_bits(const std::vector<float>& a, const float* b, size_t n) {
  return a.size() == n && (n == 0 || std::memcmp(a.data(), b, n * sizeof(float)) == 0);
}

TEST(NnInitSlices, ParameterRangesEqualTheWholeInitForEveryKind) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2}) {
    const nn::ModelConfig mc = test::tiny_config(family);
    nn::Transformer model(mc, {.allocate = false});
    for (nn::Parameter* p : model.parameters()) {
      const std::vector<float> all = nn::init_values(mc, *p, 11, 0.02f);
      const auto n = static_cast<int64_t>(all.size());
      for (int64_t b : {int64_t{0}, int64_t{1}, n / 3, n - 1})
        for (int64_t e : {b, b + 1, (b + n) / 2 + 1, n}) {
          if (e < b || e > n) continue;
          EXPECT_TRUE(same_bits(nn::init_values_range(mc, *p, 11, 0.02f, b, e), all.data() + b,
                                static_cast<size_t>(e - b)))
              << p->name << " [" << b << ", " << e << ")";
        }
      EXPECT_THROW(nn::init_values_range(mc, *p, 11, 0.02f, 0, n + 1), ValueError) << p->name;
      EXPECT_THROW(nn::init_values_range(mc, *p, 11, 0.02f, -1, 1), ValueError) << p->name;
    }
  }
}

TEST(NnInitSlices, WeightsAreTheirStreamScaledAndDtypesRoundTheF32Init) {
  for (nn::Family family : {nn::Family::llama, nn::Family::gpt2}) {
    const nn::ModelConfig mc = test::tiny_config(family);
    nn::Transformer model(mc, {.allocate = false});
    for (nn::Parameter* p : model.parameters()) {
      const std::vector<float> all = nn::init_values(mc, *p, 11, 0.02f);
      const auto n = static_cast<int64_t>(all.size());
      if (p->kind == nn::ParamKind::weight || p->kind == nn::ParamKind::embedding) {
        Tensor z = Tensor::empty({n}, DType::f32);
        kernels::random_normal(z, 11, nn::init_stream_id(p->name), 0, 1.0f);
        const std::vector<float> zs = z.to_floats();
        const bool scaled = family == nn::Family::gpt2 && p->name.ends_with(".c_proj.weight");
        const float s =
            scaled ? static_cast<float>(double{0.02f} / std::sqrt(2.0 * double(mc.num_layers)))
                   : 0.02f;
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(all[i], kernels::philox::mul_rn(s, zs[i])) << p->name << " " << i;
      } else {
        for (float x : all)
          ASSERT_EQ(x, p->kind == nn::ParamKind::norm ? 1.0f : 0.0f) << p->name;
      }
      for (DType dtype : {DType::bf16, DType::f16}) {
        Tensor part = Tensor::empty({n - 1}, dtype);
        nn::init_fill(mc, *p, 11, 0.02f, 1, part);
        const std::vector<float> got = part.to_floats();
        for (int64_t i = 1; i < n; ++i)
          ASSERT_EQ(got[i - 1], Tensor::from_floats({all[i]}, {1}, dtype).to_floats()[0])
              << p->name << " " << dtype_name(dtype) << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace zt
