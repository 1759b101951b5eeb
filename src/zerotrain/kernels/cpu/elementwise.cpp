// CPU elementwise kernels: one OpenMP loop (map) applies an ops:: functor element by element,
// loading each input as f32 and storing each output in the tensors' dtype. Every output element
// depends only on the inputs at its own index, so outputs may alias inputs and the result does not
// depend on the thread count. Tested by tests/kernels/test_elementwise.cpp.
#include "zerotrain/kernels/cpu/elementwise.h"
#include "zerotrain/kernels/cpu/float_types.h"

#include <array>
#include <cstdint>

#include "zerotrain/kernels/elementwise_ops.h"

namespace zt::kernels::cpu {

namespace {

// Below this many elements a loop runs on the calling thread: a parallel region costs more.
constexpr int64_t kParallelGrain = int64_t{1} << 15;

template <typename T, typename Op>
void map_typed(const std::array<const Tensor*, Op::kIn>& in,
               const std::array<Tensor*, Op::kOut>& out, Op op) {
  const int64_t n = in[0]->numel();
  const T* src[Op::kIn];
  T* dst[Op::kOut];
  for (int k = 0; k < Op::kIn; ++k)
    src[k] = static_cast<const T*>(in[k]->data());
  for (int k = 0; k < Op::kOut; ++k)
    dst[k] = static_cast<T*>(out[k]->data());
    // simd: iterations are independent; an output that aliases an input is read before written at
    // the same index, so vector lanes may run together even when the pointers are equal.
#pragma omp parallel for simd schedule(static) if (parallel : n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    float x[Op::kIn], y[Op::kOut];
    for (int k = 0; k < Op::kIn; ++k)
      x[k] = static_cast<float>(src[k][i]);
    op(x, y);
    for (int k = 0; k < Op::kOut; ++k)
      dst[k][i] = T(y[k]);
  }
}

// in[0] decides the dtype; the front-end has checked that every tensor shares it.
template <typename Op>
void map(const std::array<const Tensor*, Op::kIn>& in, const std::array<Tensor*, Op::kOut>& out,
         Op op) {
  visit_float(in[0]->dtype(), "elementwise",
              [&](auto tag) { map_typed<decltype(tag), Op>(in, out, op); });
}

}  // namespace

void add(const Tensor& a, const Tensor& b, Tensor& out, float alpha) {
  map<ops::Add>({&a, &b}, {&out}, ops::Add{alpha});
}

void mul(const Tensor& a, const Tensor& b, Tensor& out) {
  map<ops::Mul>({&a, &b}, {&out}, ops::Mul{});
}

void scale(const Tensor& x, float alpha, Tensor& out) {
  map<ops::Scale>({&x}, {&out}, ops::Scale{alpha});
}

void gelu_tanh_forward(const Tensor& x, Tensor& y) {
  map<ops::GeluTanhForward>({&x}, {&y}, {});
}

void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  map<ops::GeluTanhBackward>({&x, &dy}, {&dx}, {});
}

void silu_forward(const Tensor& x, Tensor& y) {
  map<ops::SiluForward>({&x}, {&y}, {});
}

void silu_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  map<ops::SiluBackward>({&x, &dy}, {&dx}, {});
}

void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& out) {
  map<ops::SwigluForward>({&gate, &up}, {&out}, {});
}

void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dout, Tensor& dgate,
                     Tensor& dup) {
  map<ops::SwigluBackward>({&gate, &up, &dout}, {&dgate, &dup}, {});
}

}  // namespace zt::kernels::cpu
