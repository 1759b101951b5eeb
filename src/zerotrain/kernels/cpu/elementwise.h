// CPU backend of the elementwise family (contract: kernels/elementwise.h). Arguments arrive
// validated by the front-end (kernels/elementwise.cpp): contiguous, same shape, dtype and device.
// Tested by tests/kernels/test_elementwise.cpp.
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels::cpu {

void add(const Tensor& a, const Tensor& b, Tensor& out, float alpha);
void mul(const Tensor& a, const Tensor& b, Tensor& out);
void scale(const Tensor& x, float alpha, Tensor& out);
void gelu_tanh_forward(const Tensor& x, Tensor& y);
void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx);
void silu_forward(const Tensor& x, Tensor& y);
void silu_backward(const Tensor& x, const Tensor& dy, Tensor& dx);
void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& out);
void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dout, Tensor& dgate,
                     Tensor& dup);

}  // namespace zt::kernels::cpu
