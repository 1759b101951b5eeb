// Per-element math of the elementwise family (kernels/elementwise.h), shared by the CPU and CUDA
// backends so that both evaluate the same f32 formulas. Each op is a functor mapping kIn f32 inputs
// to kOut f32 outputs; the backends own the loops, the loads and the stores. Tested through the
// kernels by tests/kernels/test_elementwise.cpp (float64 references, finite differences).
//
// [Note: GELU as a sigmoid]
// 0.5 (1 + tanh(u)) == sigmoid(2u), so gelu_tanh(x) = x * sigmoid(2u) with
// u = sqrt(2/pi) (x + 0.044715 x^3). The sigmoid form keeps full relative accuracy where
// tanh(u) ~ -1 (large negative x), where 1 + tanh(u) would cancel, and it saturates cleanly to
// 0 and x when x^3 overflows.
#pragma once

#include <math.h>

#if defined(__CUDACC__)
#define ZT_ELEMENTWISE_FN __host__ __device__ __forceinline__
#else
#define ZT_ELEMENTWISE_FN inline
#endif

namespace zt::kernels::ops {

inline constexpr float kGeluK0 = 0.7978845608028654f;  // sqrt(2/pi)
inline constexpr float kGeluK1 = 0.044715f;

ZT_ELEMENTWISE_FN float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

// sigmoid(2u): the gate with gelu_tanh(x) = x * gelu_gate(x). See [Note: GELU as a sigmoid].
ZT_ELEMENTWISE_FN float gelu_gate(float x) {
  const float u = kGeluK0 * (x + kGeluK1 * x * x * x);
  return sigmoid(2.0f * u);
}

// d/dx [x * s(x)] with s = sigmoid(2u): s + 2 x s (1 - s) k0 (1 + 3 k1 x^2). Where s saturates,
// s (1 - s) == 0 and the second term is 0 (not 0 * inf when x^2 overflows).
ZT_ELEMENTWISE_FN float gelu_tanh_grad(float x) {
  const float s = gelu_gate(x);
  const float ds = s * (1.0f - s);
  const float tail = 2.0f * x * ds * kGeluK0 * (1.0f + 3.0f * kGeluK1 * x * x);
  return s + (ds > 0.0f ? tail : 0.0f);
}

// d/dx [x * sigmoid(x)] = s (1 + x (1 - s)).
ZT_ELEMENTWISE_FN float silu_grad(float x) {
  const float s = sigmoid(x);
  return s * (1.0f + x * (1.0f - s));
}

struct Add {  // a + alpha * b
  static constexpr int kIn = 2, kOut = 1;
  float alpha;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    out[0] = in[0] + alpha * in[1];
  }
};

struct Mul {  // a * b
  static constexpr int kIn = 2, kOut = 1;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const { out[0] = in[0] * in[1]; }
};

struct Scale {  // alpha * x
  static constexpr int kIn = 1, kOut = 1;
  float alpha;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const { out[0] = alpha * in[0]; }
};

struct GeluTanhForward {  // x -> y
  static constexpr int kIn = 1, kOut = 1;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    out[0] = in[0] * gelu_gate(in[0]);
  }
};

struct GeluTanhBackward {  // (x, dy) -> dx
  static constexpr int kIn = 2, kOut = 1;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    out[0] = in[1] * gelu_tanh_grad(in[0]);
  }
};

struct SiluForward {  // x -> y
  static constexpr int kIn = 1, kOut = 1;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    out[0] = in[0] * sigmoid(in[0]);
  }
};

struct SiluBackward {  // (x, dy) -> dx
  static constexpr int kIn = 2, kOut = 1;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    out[0] = in[1] * silu_grad(in[0]);
  }
};

struct SwigluForward {  // (gate, up) -> silu(gate) * up
  static constexpr int kIn = 2, kOut = 1;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    out[0] = in[0] * sigmoid(in[0]) * in[1];
  }
};

struct SwigluBackward {  // (gate, up, dout) -> (dgate, dup)
  static constexpr int kIn = 3, kOut = 2;
  ZT_ELEMENTWISE_FN void operator()(const float* in, float* out) const {
    const float g = in[0], up = in[1], dout = in[2];
    const float s = sigmoid(g);
    out[0] = dout * up * (s * (1.0f + g * (1.0f - s)));
    out[1] = dout * (g * s);
  }
};

}  // namespace zt::kernels::ops
