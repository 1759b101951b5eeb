// Linear projection, forward and backward over kernels::gemm, in the two weight layouts Hugging
// Face checkpoints use: torch nn.Linear (weight [out, in], y = x W^T + b) and GPT-2's Conv1D
// (weight [in, out], y = x W + b). The weight is always used where it lies (gemm's trans flags),
// never copied. Gradients are added: dW += dy^T x (or x^T dy), db += column sums of dy. Tested by
// tests/nn/test_linear.cpp.
#pragma once

#include <string>
#include <vector>

#include "zerotrain/nn/parameter.h"

namespace zt::nn {

enum class WeightLayout { out_in, in_out };

// The math over bare tensors (the head uses it with the tied embedding weight).
// x: [N, in]; w: [out, in] or [in, out]; b: [out] or null; y: [N, out], x's dtype.
void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, WeightLayout layout,
                    Tensor& y, Stream stream);
// dx (+)= alpha * dy W (out_in) or alpha * dy W^T (in_out); dy: [N, out], dx: [N, in].
void linear_backward_input(const Tensor& dy, const Tensor& w, WeightLayout layout, Tensor& dx,
                           bool accumulate, float alpha, Stream stream);
// dw += alpha * dy^T x (out_in) or alpha * x^T dy (in_out); dw f32 or the inputs' dtype.
void linear_backward_weight(const Tensor& x, const Tensor& dy, WeightLayout layout, Tensor& dw,
                            float alpha, Stream stream);

class Linear {
 public:
  // Parameters "<prefix>.weight" and, with bias, "<prefix>.bias".
  Linear(const std::string& prefix, int64_t in, int64_t out, bool with_bias,
         WeightLayout layout = WeightLayout::out_in);

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  bool has_bias() const { return has_bias_; }

  Tensor forward(const Tensor& x, Stream stream) const;  // [N, in] -> [N, out]
  // x: the forward input; dy: [N, out]. Adds the weight/bias gradients (unless frozen). With
  // dx defined, writes (or with accumulate_dx adds) the input gradient into it.
  void backward(const Tensor& x, const Tensor& dy, Tensor* dx, bool accumulate_dx, Stream stream);

  void append_parameters(std::vector<Parameter*>& out);

  Parameter weight;
  Parameter bias;  // unused without bias

 private:
  int64_t in_, out_;
  bool has_bias_;
  WeightLayout layout_;
};

}  // namespace zt::nn
