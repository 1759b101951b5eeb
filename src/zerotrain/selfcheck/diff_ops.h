// Differentiable kernels wrapped in one shape for the self-check: inputs -> one output, and
// (inputs, output cotangent) -> one gradient per differentiable input.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "zerotrain/core/tensor.h"

namespace zt::selfcheck {

struct DiffOp {
  std::string name;
  std::vector<Shape> inputs;  // differentiable inputs, float
  // Non-differentiable inputs (ids, targets, positions), made once per device; may be empty.
  std::function<std::vector<Tensor>(Device)> make_aux;
  std::function<Tensor(const std::vector<Tensor>& in, const std::vector<Tensor>& aux, Stream)>
      forward;
  std::function<std::vector<Tensor>(const std::vector<Tensor>& in, const std::vector<Tensor>& aux,
                                    const Tensor& dout, Stream)>
      backward;
  bool uniform_cotangent = false;  // the backward only supports a cotangent with equal entries
  float input_range = 1.0f;        // inputs uniform in [-range, range)
};

std::vector<DiffOp> differentiable_ops();

// Kernels without a backward, checked CUDA against CPU: inputs made on the host, run on a device.
struct PlainOp {
  std::string name;
  std::vector<Shape> inputs;
  std::function<std::vector<Tensor>(Device)> make_aux;  // may be empty
  std::function<std::vector<Tensor>(const std::vector<Tensor>& in, const std::vector<Tensor>& aux,
                                    Stream)>
      run;
};

std::vector<PlainOp> plain_ops();

// op.make_aux(d), or no tensors when the op has none.
template <typename Op>
std::vector<Tensor> aux_for(const Op& op, Device d) {
  return op.make_aux ? op.make_aux(d) : std::vector<Tensor>{};
}

}  // namespace zt::selfcheck
