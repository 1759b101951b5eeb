// Helpers of the optim/ tests: the splitmix64 value stream shared with
// tools/reference/make_optimizer_reference.py, host buffers for a list of runs, and the CPU code
// paths this machine can run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zerotrain/core/half.h"
#include "zerotrain/optim/optimizers.h"

namespace zt::test {

inline uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The generator script's value(case, step, tensor, i): exact f32 in [-1, 1).
inline float stream_value(uint64_t c, uint64_t step, uint64_t tensor, uint64_t i) {
  const uint64_t key = (((c * 64 + step) * 8 + tensor) << 16) + i;
  return static_cast<float>(static_cast<double>(splitmix64(key) >> 40) / 8388608.0 - 1.0);
}

inline std::vector<float> stream_values(uint64_t c, uint64_t step, uint64_t tensor, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = stream_value(c, step, tensor, i);
  return v;
}

// The CPU paths to test here: scalar and every SIMD path this CPU supports.
inline std::vector<optim::CpuIsa> supported_isas() {
  std::vector<optim::CpuIsa> out;
  for (optim::CpuIsa isa : {optim::CpuIsa::scalar, optim::CpuIsa::avx2, optim::CpuIsa::avx512})
    if (optim::cpu_isa_supported(isa)) out.push_back(isa);
  return out;
}

// Host buffers of one run: master, two states, the grad in its dtype and the copy in its dtype.
struct RunBuffers {
  std::vector<float> master, s0, s1, s2;  // s2: Adam's max_exp_avg_sq (amsgrad)
  std::vector<float> grad_f32;
  std::vector<bf16> grad_bf16;
  std::vector<f16> grad_f16;
  std::vector<uint16_t> copy;  // bf16 or f16 bits
  DType grad_dtype = DType::f32;
  DType copy_dtype = DType::bf16;
  bool has_copy = false;

  RunBuffers(std::vector<float> start, DType grad_dt, bool with_copy, DType copy_dt)
      : master(std::move(start)),
        s0(master.size(), 0.0f),
        s1(master.size(), 0.0f),
        s2(master.size(), 0.0f),
        grad_dtype(grad_dt),
        copy_dtype(copy_dt),
        has_copy(with_copy) {
    copy.assign(master.size(), 0);
  }
  int64_t n() const { return static_cast<int64_t>(master.size()); }

  // Stores g (rounded to grad_dtype) as this run's gradient.
  void set_grad(const std::vector<float>& g) {
    grad_f32 = g;
    grad_bf16.assign(g.size(), bf16{});
    grad_f16.assign(g.size(), f16{});
    for (size_t i = 0; i < g.size(); ++i) {
      grad_bf16[i] = bf16(g[i]);
      grad_f16[i] = f16(g[i]);
    }
  }
  const void* grad() const {
    if (grad_dtype == DType::bf16) return grad_bf16.data();
    if (grad_dtype == DType::f16) return grad_f16.data();
    return grad_f32.data();
  }

  optim::AdamSegment adam(float wd, bool amsgrad = false) {
    optim::AdamSegment s;
    s.max_exp_avg_sq = amsgrad ? s2.data() : nullptr;
    s.master = master.data();
    s.exp_avg = s0.data();
    s.exp_avg_sq = s1.data();
    s.grad = grad();
    s.grad_dtype = grad_dtype;
    s.param_copy = has_copy ? copy.data() : nullptr;
    s.param_dtype = copy_dtype;
    s.n = n();
    s.weight_decay = wd;
    return s;
  }
  optim::LionSegment lion(float wd) {
    const optim::AdamSegment a = adam(wd);
    return {a.master, a.exp_avg, a.grad, a.grad_dtype, a.param_copy, a.param_dtype, a.n, wd};
  }
  optim::SgdSegment sgd(float wd, bool momentum) {
    const optim::AdamSegment a = adam(wd);
    return {a.master,     momentum ? a.exp_avg : nullptr,
            a.grad,       a.grad_dtype,
            a.param_copy, a.param_dtype,
            a.n,          wd};
  }
};

}  // namespace zt::test
