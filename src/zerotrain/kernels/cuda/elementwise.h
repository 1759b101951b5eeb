// CUDA backend of the elementwise family (contract: kernels/elementwise.h), declared without CUDA
// headers. Arguments arrive validated by the front-end; every kernel runs on `stream`.
// Tested by tests/kernels/test_elementwise_cuda.cpp.
#pragma once

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::kernels::cuda {

void add(const Tensor& a, const Tensor& b, Tensor& out, float alpha, Stream stream);
void mul(const Tensor& a, const Tensor& b, Tensor& out, Stream stream);
void scale(const Tensor& x, float alpha, Tensor& out, Stream stream);
void gelu_tanh_forward(const Tensor& x, Tensor& y, Stream stream);
void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream);
void silu_forward(const Tensor& x, Tensor& y, Stream stream);
void silu_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream);
void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& out, Stream stream);
void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dout, Tensor& dgate,
                     Tensor& dup, Stream stream);

}  // namespace zt::kernels::cuda
