// Host buffers of one low-precision Adam run (bf16 values and moments, a grad in f32/bf16/f16)
// for tests/optim/test_low_precision_optim.cpp and test_low_precision_cuda.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "optim/optim_test_util.h"
#include "zerotrain/core/half.h"
#include "zerotrain/optim/low_precision.h"

namespace zt::test {

struct LowpBuffers {
  std::vector<bf16> p, m, v;
  std::vector<float> grad_f32;
  std::vector<bf16> grad_bf16;
  std::vector<f16> grad_f16;
  DType grad_dtype = DType::bf16;

  LowpBuffers(const std::vector<float>& start, DType grad_dt)
      : m(start.size()), v(start.size()), grad_dtype(grad_dt) {
    for (float x : start)
      p.emplace_back(x);
  }
  int64_t n() const { return static_cast<int64_t>(p.size()); }

  void set_grad(const std::vector<float>& g) {
    grad_f32 = g;
    grad_bf16.clear();
    grad_f16.clear();
    for (float x : g) {
      grad_bf16.emplace_back(x);
      grad_f16.emplace_back(x);
    }
  }
  const void* grad() const {
    if (grad_dtype == DType::f32) return grad_f32.data();
    if (grad_dtype == DType::bf16) return grad_bf16.data();
    return grad_f16.data();
  }
  optim::AdamSegmentLowp shard(float wd) {
    return {p.data(), m.data(), v.data(), grad(), grad_dtype, n(), wd};
  }
};

inline std::vector<uint16_t> bits_of(const std::vector<bf16>& x) {
  std::vector<uint16_t> out;
  for (const bf16& b : x)
    out.push_back(b.bits);
  return out;
}

}  // namespace zt::test
