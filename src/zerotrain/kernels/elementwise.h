// Elementwise ops and activations, forward and backward. All tensors contiguous, same shape, same
// dtype (f32, f16 or bf16) and device; math in f32. Outputs may alias inputs (in-place).
#pragma once

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

void add(const Tensor& a, const Tensor& b, Tensor& out, float alpha = 1.0f,
         Stream stream = {});  // a + alpha*b
void mul(const Tensor& a, const Tensor& b, Tensor& out, Stream stream = {});
void scale(const Tensor& x, float alpha, Tensor& out, Stream stream = {});

// GELU, tanh approximation (HF "gelu_new" / "gelu_pytorch_tanh"):
//   0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
void gelu_tanh_forward(const Tensor& x, Tensor& y, Stream stream = {});
void gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream = {});

// SiLU: x * sigmoid(x).
void silu_forward(const Tensor& x, Tensor& y, Stream stream = {});
void silu_backward(const Tensor& x, const Tensor& dy, Tensor& dx, Stream stream = {});

// SwiGLU (Llama MLP): out = silu(gate) * up.
void swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& out, Stream stream = {});
void swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dout, Tensor& dgate,
                     Tensor& dup, Stream stream = {});

}  // namespace zt::kernels
