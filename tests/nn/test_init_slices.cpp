// nn::init's element ranges ([Note: init slices] in src/zerotrain/nn/init.cpp): any range of a
// parameter's init, generated on its own, equals bitwise that range of the whole (odd and even
// ends, empty ranges, the gpt2 c_proj scaling, biases and norms); bad ranges are ValueErrors.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/init.h"
#include "zerotrain/nn/transformer.h"

namespace zt {
namespace {

// memcmp's pointers must not be null even for n == 0 (an empty vector's data() may be).
bool same_bits(const std::vector<float>& a, const float* b, size_t n) {
  return a.size() == n && (n == 0 || std::memcmp(a.data(), b, n * sizeof(float)) == 0);
}

TEST(NnInitSlices, NormalRangesEqualTheWholeStreamBitwise) {
  const std::vector<float> all = nn::normal_values(7, "w", 101, 0.02f);
  for (size_t b : {0, 1, 2, 5, 50, 99, 100, 101})
    for (size_t e : {b, b + 1, b + 2, b + 7, size_t{101}}) {
      if (e > 101 || e < b) continue;
      EXPECT_TRUE(same_bits(nn::normal_values_range(7, "w", b, e, 0.02f), all.data() + b, e - b))
          << "[" << b << ", " << e << ")";
    }
  EXPECT_THROW(nn::normal_values_range(7, "w", 5, 4, 0.02f), ValueError);
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

}  // namespace
}  // namespace zt
